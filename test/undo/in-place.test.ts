/**
 * The capture finds a command's in-place rewrite by the change watch's own measurement of the folder
 * (no second stat of its files): a rewrite of the same size whose mtime the script set back years,
 * in a folder the watch already knew, is still each turn's, and each turn comes back byte for byte.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { KERNEL_MODES } from '../code/helpers.js';
import { hashTree, inTurn } from './helpers.js';

describe.each(KERNEL_MODES)('%s mode', (mode) => {
  let s: Shed;
  afterEach(() => s?.cleanup());

  it('same-size rewrites with an old mtime, turn after turn, are each undone exactly', async () => {
    s = makeShed({ sandbox: mode, allow_shell: true });
    const tree = () => hashTree(s.zonePath('storage'));
    const read = () => fs.readFileSync(s.zonePath('storage', 'd/f7.txt'), 'utf8');
    const made = await inTurn(s, 'a', 'shed_run_shell', { zone: 'storage', script: 'mkdir d && for i in $(seq 1 40); do echo "file $i" > d/f$i.txt; done' });
    expect(made.error).toBeUndefined();
    const afterA = tree();
    // Past the capture's ctime margin: the folder's other files are not this turn's.
    await new Promise((r) => setTimeout(r, 300));
    const rewrite = (text: string) => `printf '${text}\\n' > d/f7.txt && touch -d 2001-01-01 d/f7.txt && ls -l --time-style=+%Y d/f7.txt`;
    const b = await inTurn(s, 'b', 'shed_run_shell', { zone: 'storage', script: rewrite('FILE 7') });
    expect(b.error).toBeUndefined();
    expect(String(b.data?.stdout)).toContain(' 2001 '); // the mtime really went back
    expect(b.turn).toBe('b');
    const afterB = tree();
    const c = await inTurn(s, 'c', 'shed_run_shell', { zone: 'storage', script: rewrite('file 8') });
    expect(c.turn).toBe('c');
    expect(read()).toBe('file 8\n');

    const undoC = await inTurn(s, 'u1', 'shed_undo', { turn: 'c', apply: true });
    expect(undoC.data).toMatchObject({ undoes: 'c', applied: true });
    expect(tree()).toEqual(afterB);
    const undoB = await inTurn(s, 'u2', 'shed_undo', { turn: 'b', apply: true });
    expect(undoB.data).toMatchObject({ undoes: 'b', applied: true });
    expect(tree()).toEqual(afterA);
    expect(read()).toBe('file 7\n');
  });
});
