/**
 * Undo under identity separation (the default where the server can switch): what the undo puts
 * back belongs to the user, so the user's own commands and scripts can change it afterwards, and a
 * command's changes made as the user's uid are captured and undone like any other.
 */
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { hashTree, inTurn } from './helpers.js';

const root = process.geteuid?.() === 0;
let s: Shed;
beforeEach(() => {
  s = makeShed({ sandbox: 'landlock', identity_separation: 'auto', allow_shell: true });
});
afterEach(() => s.cleanup());

describe.runIf(root)('undo under identity separation', () => {
  it('a script\'s edits and deletions come back owned by the user, who can change them again', async () => {
    const made = await inTurn(s, 'm1', 'shed_run_shell', { zone: 'storage', script: 'mkdir -p d && for i in 1 2 3; do echo "v$i" > d/f$i.txt; done' });
    expect(made.success, JSON.stringify(made)).toBe(true);
    const uid = fs.statSync(s.zonePath('storage', 'd/f1.txt')).uid;
    expect(uid).not.toBe(0);
    const before = hashTree(s.zonePath('storage'));
    const mess = await inTurn(s, 'm2', 'shed_run_shell', { zone: 'storage', script: 'sed -i s/v/X/ d/f1.txt && rm d/f2.txt && echo new > d/f4.txt' });
    expect(mess.data?.returncode, JSON.stringify(mess)).toBe(0);
    const undo = await inTurn(s, 'm3', 'shed_undo', { turn: 'm2', apply: true });
    expect(undo.success, JSON.stringify(undo)).toBe(true);
    expect(hashTree(s.zonePath('storage'))).toEqual(before);
    for (const f of ['f1.txt', 'f2.txt']) expect(fs.statSync(s.zonePath('storage', `d/${f}`)).uid, f).toBe(uid);
    // The user's own command appends in place to a file the undo wrote.
    const again = await inTurn(s, 'm4', 'shed_run_shell', { zone: 'storage', script: 'echo more >> d/f2.txt && cat d/f2.txt' });
    expect(again.data?.returncode, JSON.stringify(again)).toBe(0);
    expect(again.data?.stdout).toBe('v2\nmore\n');
  });
});
