/**
 * The capture finds a change by the change watch's own measurement of the folder (no second stat of
 * its files): a command's rewrite of the same size whose mtime the script set back years, in a
 * folder the watch already knew, is still each turn's; a named write in a big folder stats each file
 * of it once; and each turn comes back byte for byte.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
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

describe('named writes (the measurement of the quota, reused)', () => {
  let s: Shed;
  afterEach(() => {
    vi.restoreAllMocks();
    s?.cleanup();
  });

  it('a patch in a 300-file folder stats each file once, and edits a moment apart are each their own turn', async () => {
    s = makeShed({});
    const dir = s.zonePath('storage', 'big');
    fs.mkdirSync(dir, { recursive: true });
    for (let i = 0; i < 300; i++) fs.writeFileSync(path.join(dir, `f${i}.txt`), `file ${i}\n`);
    const tree = () => hashTree(s.zonePath('storage'));
    expect((await inTurn(s, 'w0', 'shed_patch_text', { zone: 'storage', path: 'big/f0.txt', content: 'zero', position: 'end' })).turn).toBe('w0');
    const before = tree();

    // Stats of the folder's files during one captured call: the quota's refresh measures them once;
    // the capture asks that measurement instead of a second lstat of each (it made 600).
    let stats = 0;
    const lstat = fs.lstatSync;
    vi.spyOn(fs, 'lstatSync').mockImplementation(((p: fs.PathLike, o?: fs.StatSyncOptions) => {
      if (String(p).startsWith(`${dir}/`)) stats += 1;
      return lstat(p, o as fs.StatSyncOptions);
    }) as typeof fs.lstatSync);
    const a = await inTurn(s, 'w1', 'shed_patch_text', { zone: 'storage', path: 'big/f7.txt', content: 'seven', position: 'end' });
    expect(a.turn).toBe('w1');
    expect(stats).toBeGreaterThanOrEqual(300); // the refresh did measure them (the count is real)
    expect(stats).toBeLessThan(400);
    vi.restoreAllMocks();
    const afterA = tree();

    // Within the capture's ctime margin of the previous turn: the measurement it reuses is this call's.
    const b = await inTurn(s, 'w2', 'shed_patch_text', { zone: 'storage', path: 'big/f8.txt', content: 'eight', position: 'end' });
    expect(b.turn).toBe('w2');
    const c = await inTurn(s, 'w3', 'shed_patch_text', { zone: 'storage', path: 'big/f7.txt', content: 'again', position: 'end' });
    expect(c.turn).toBe('w3');
    const preview = (await inTurn(s, undefined, 'shed_undo', { turn: 'w2' })).data?.preview as { changes: { path: string }[] };
    expect(preview.changes.map((c) => c.path)).toEqual(['Storage/big/f8.txt']);

    expect((await inTurn(s, 'u3', 'shed_undo', { turn: 'w3', apply: true })).data).toMatchObject({ applied: true });
    expect((await inTurn(s, 'u2', 'shed_undo', { turn: 'w2', apply: true })).data).toMatchObject({ applied: true });
    expect(tree()).toEqual(afterA);
    expect((await inTurn(s, 'u1', 'shed_undo', { turn: 'w1', apply: true })).data).toMatchObject({ applied: true });
    expect(tree()).toEqual(before);
  });

  it('an archive written over 60 folders in one call (more than the measurements kept) is undone exactly', async () => {
    s = makeShed({});
    const root = s.zonePath('storage');
    for (let d = 0; d < 60; d++) {
      fs.mkdirSync(path.join(root, `d${d}`), { recursive: true });
      for (let f = 0; f < 5; f++) fs.writeFileSync(path.join(root, `d${d}`, `f${f}.txt`), `old ${d}/${f}\n`);
    }
    // The archive rewrites one file and adds one in each folder.
    const src = fs.mkdtempSync(path.join(path.dirname(s.base), 'zip-src-'));
    for (let d = 0; d < 60; d++) {
      fs.mkdirSync(path.join(src, `d${d}`));
      fs.writeFileSync(path.join(src, `d${d}`, 'f1.txt'), `new ${d}/1\n`);
      fs.writeFileSync(path.join(src, `d${d}`, 'added.txt'), `added ${d}\n`);
    }
    const zip = spawnSync('zip', ['-qr', path.join(root, 'all.zip'), '.'], { cwd: src });
    fs.rmSync(src, { recursive: true, force: true });
    expect(zip.status).toBe(0);
    expect((await inTurn(s, 'z0', 'shed_patch_text', { zone: 'storage', path: 'd0/f0.txt', content: 'x', position: 'end' })).turn).toBe('z0');
    const before = hashTree(root);
    const unzip = await inTurn(s, 'z1', 'shed_unzip', { zone: 'storage', src: 'all.zip', dest: '.', overwrite: true });
    expect(unzip.error).toBeUndefined();
    expect(unzip.turn).toBe('z1');
    expect(fs.readFileSync(path.join(root, 'd59', 'f1.txt'), 'utf8')).toBe('new 59/1\n');
    expect((await inTurn(s, 'u1', 'shed_undo', { turn: 'z1', apply: true })).data).toMatchObject({ applied: true });
    expect(hashTree(root)).toEqual(before);
  });
});
