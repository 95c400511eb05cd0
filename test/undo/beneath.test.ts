/**
 * An undo runs after commands, in folders they shaped: it never follows a link a command left where
 * a folder of the turn was (SPEC 8, "The server never follows a path a command shaped"). A later
 * turn's script renames a folder the turn wrote in and leaves a link to another folder under its
 * name; undoing the turn (forced: the paths did change) must neither remove nor overwrite a file
 * through that link: in the user's own zone, and in a group space, where the link leads to another
 * member's owner-only file and the server (root) would do what the kernel refuses the member.
 * Both kernel modes, identities on (the default as root).
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { groupShed, read } from '../groups/setup.js';
import { KERNEL_MODES } from '../code/helpers.js';
import { inTurn } from './helpers.js';

const valves = (mode: string) => ({ sandbox: mode, allow_python: true, identity_separation: 'auto' });

describe.each(KERNEL_MODES)('%s mode', (mode) => {
  let s: Shed | undefined;
  afterEach(() => s?.cleanup());

  it('a folder of the turn replaced by a link: nothing through the link is removed or written; the link is kept aside', async () => {
    const sh = (s = makeShed(valves(mode)));
    expect((await inTurn(sh, 't0', 'shed_create_file', { zone: 'storage', path: 'a/y.txt', content: 'y0\n' })).error).toBeUndefined();
    await inTurn(sh, 't1', 'shed_create_file', { zone: 'storage', path: 'a/x.txt', content: 'made by t1\n' });
    await inTurn(sh, 't1', 'shed_create_file', { zone: 'storage', path: 'a/y.txt', content: 'y1\n' });
    const script = "import os\nos.rename('a', 'a_old')\nos.makedirs('b')\nopen('b/x.txt', 'w').write('keep x\\n')\nopen('b/y.txt', 'w').write('keep y\\n')\nos.symlink('b', 'a')\n";
    expect((await inTurn(sh, 't2', 'shed_run_python', { zone: 'storage', code: script })).error).toBeUndefined();
    expect(fs.readlinkSync(sh.zonePath('storage', 'a'))).toBe('b');

    const preview = await inTurn(sh, 'u', 'shed_undo', { turn: 't1' });
    const conflicts = (preview.data!.preview as { conflicts: { path: string }[] }).conflicts.map((c) => c.path).sort();
    expect(conflicts).toEqual(['Storage/a/x.txt', 'Storage/a/y.txt']);
    const r = await inTurn(sh, 'u', 'shed_undo', { turn: 't1', apply: true, force: ['Storage/a/x.txt', 'Storage/a/y.txt'] });
    expect(r.error).toBeUndefined();
    // What the link leads to is untouched.
    expect(read(sh.zonePath('storage', 'b/x.txt'))).toBe('keep x\n');
    expect(read(sh.zonePath('storage', 'b/y.txt'))).toBe('keep y\n');
    // The turn's folder is a real one again, with the file as it was before the turn; the link is kept beside it.
    expect(fs.lstatSync(sh.zonePath('storage', 'a')).isDirectory()).toBe(true);
    expect(read(sh.zonePath('storage', 'a/y.txt'))).toBe('y0\n');
    expect(fs.existsSync(sh.zonePath('storage', 'a/x.txt'))).toBe(false);
    expect(fs.readlinkSync(sh.zonePath('storage', 'a.~1~'))).toBe('b');
    expect(r.data!.moved_aside).toEqual([{ from: 'Storage/a', to: 'Storage/a.~1~' }]);
    // The restored file is the user's, as anything they made (identity separation).
    expect(fs.statSync(sh.zonePath('storage', 'a/y.txt')).uid).toBe(fs.statSync(sh.zonePath('storage', 'b')).uid);
  });

  it('a folder made later where a file of the turn was: forced, the file comes back in its place', async () => {
    const sh = (s = makeShed(valves(mode)));
    await inTurn(sh, 't0', 'shed_create_file', { zone: 'storage', path: 'a/x.txt', content: 'x0\n' });
    await inTurn(sh, 't1', 'shed_create_file', { zone: 'storage', path: 'a/x.txt', content: 'x1\n' });
    // Inside the folder, a link to another folder of the zone: removing the folder must not follow it.
    const script = "import os\nos.remove('a/x.txt')\nos.makedirs('a/x.txt/deep')\nos.makedirs('keep')\nopen('keep/f', 'w').write('kept\\n')\nos.symlink('../../../keep', 'a/x.txt/deep/out')\n";
    expect((await inTurn(sh, 't2', 'shed_run_python', { zone: 'storage', code: script })).error).toBeUndefined();
    expect(fs.readlinkSync(sh.zonePath('storage', 'a/x.txt/deep/out'))).toBe('../../../keep');
    const r = await inTurn(sh, 'u', 'shed_undo', { turn: 't1', apply: true, force: ['Storage/a/x.txt'] });
    expect(r.error).toBeUndefined();
    expect(read(sh.zonePath('storage', 'a/x.txt'))).toBe('x0\n');
    expect(read(sh.zonePath('storage', 'keep/f'))).toBe('kept\n');
  });

  it('a removal through a link to another folder removes nothing there', async () => {
    const sh = (s = makeShed(valves(mode)));
    await inTurn(sh, 't1', 'shed_create_file', { zone: 'storage', path: 'a/x.txt', content: 'made by t1\n' });
    const script = "import os\nos.rename('a', 'a_old')\nos.makedirs('b')\nopen('b/x.txt', 'w').write('keep x\\n')\nos.symlink('b', 'a')\n";
    expect((await inTurn(sh, 't2', 'shed_run_python', { zone: 'storage', code: script })).error).toBeUndefined();
    const r = await inTurn(sh, 'u', 'shed_undo', { turn: 't1', apply: true, force: ['Storage/a/x.txt'] });
    expect(r.error).toBeUndefined();
    expect(read(sh.zonePath('storage', 'b/x.txt'))).toBe('keep x\n');
    expect(fs.readlinkSync(sh.zonePath('storage', 'a'))).toBe('b');
  });

  it("in a group space, a member's undo through his link does not remove or replace another member's owner-only file", async () => {
    const gs = await groupShed(valves(mode));
    s = gs;
    const g = { zone: 'group', group: 'team' };
    const bob = { user: 'bob', chat: 'cb' };
    expect((await inTurn(gs, 'a0', 'shed_create_file', { ...g, path: 'alice/notes.md', content: 'alice only\n', mode: 'owner' })).error).toBeUndefined();
    expect((await inTurn(gs, 'a0', 'shed_create_file', { ...g, path: 'alice/plan.md', content: 'alice plan\n', mode: 'owner' })).error).toBeUndefined();
    // bob's turn b1 writes in d/; later (b2) d is deleted with his files, and his script leaves a link
    // to alice's folder under its name (the kernel lets him make a link, not rename a group folder).
    const py = (turn: string, code: string) => inTurn(gs, turn, 'shed_run_python', { ...g, code }, bob);
    expect((await py('b0', "import os\nos.makedirs('d')\nopen('d/plan.md', 'w').write('bob plan v0\\n')\n")).data!.returncode).toBe(0);
    expect((await py('b1', "open('d/notes.md', 'w').write('bob notes\\n')\nopen('d/plan.md', 'w').write('bob plan v1\\n')\n")).data!.returncode).toBe(0);
    expect((await inTurn(gs, 'b2', 'shed_delete', { ...g, path: 'd' }, bob)).error).toBeUndefined();
    expect((await py('b2', "import os\nos.symlink('alice', 'd')\n")).data!.returncode).toBe(0);
    expect(fs.readlinkSync(gs.groupPath('d'))).toBe('alice');
    const r = await inTurn(gs, 'b3', 'shed_undo', { turn: 'b1', apply: true, force: ['Group:Team/d/notes.md', 'Group:Team/d/plan.md'] }, bob);
    expect(r.error).toBeUndefined();
    expect(read(gs.groupPath('alice/notes.md'))).toBe('alice only\n');
    expect(read(gs.groupPath('alice/plan.md'))).toBe('alice plan\n');
    expect(fs.readdirSync(gs.groupPath('alice')).sort()).toEqual(['notes.md', 'plan.md']);
    // bob's turn is undone where it was: d/ is a real folder again, his link kept beside it.
    expect(read(gs.groupPath('d/plan.md'))).toBe('bob plan v0\n');
    expect(fs.readlinkSync(gs.groupPath('d.~1~'))).toBe('alice');
    // The space's history has it too: the undo's commit holds the link under its new name.
    const show = await inTurn(gs, undefined, 'shed_exec', { ...g, cmd: 'git', args: ['show', '--name-status', 'HEAD'] }, bob);
    expect(String(show.data!.stdout)).toMatch(/Undo turn b1[\s\S]*A\s+d\.~1~/);
  });
});
