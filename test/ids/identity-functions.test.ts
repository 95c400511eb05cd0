/**
 * identity_separation through the functions (shed_exec, shed_run_python, shed_run_shell, shed_write):
 * a storage base made as before (every file the server's) is converted on the user's first command as
 * their identity; afterwards their own files work as before, what the server writes is theirs too,
 * and another user's script learns and changes nothing of them. In both kernel modes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { KERNEL_MODES, ok, ran } from '../code/helpers.js';

const FIRST = 2_200_000;
const ON = { allow_python: true, allow_shell: true };
const IDS = { identity_separation: 'auto', identity_id_first: FIRST, identity_id_count: 1000 };

const modeOf = (p: string) => fs.lstatSync(p).mode & 0o7777;
const ownerOf = (p: string) => [fs.lstatSync(p).uid, fs.lstatSync(p).gid];

describe.each(KERNEL_MODES)('%s mode', (mode) => {
  let s: Shed;
  afterEach(() => s?.cleanup());

  it('a base made as before is converted on first use; the user\'s files and the server\'s writes are theirs', async () => {
    s = makeShed({ sandbox: mode, ...ON });
    // As before: every file the server's.
    ok(await s.call('shed_create_file', { zone: 'storage', path: 'notes/a.txt', content: 'alpha\n' }));
    ran(await s.call('shed_run_shell', { zone: 'documents', script: 'echo doc > doc.txt' }));
    fs.mkdirSync(s.zonePath('uploads'), { recursive: true });
    fs.writeFileSync(s.zonePath('uploads', 'upload.csv'), 'a,b\n', { mode: 0o600 });
    expect(ownerOf(s.zonePath('storage', 'notes/a.txt'))).toEqual([0, 0]);

    s.tools.valves = { ...s.tools.valves, ...IDS };
    const d = ran(await s.call('shed_run_shell', { zone: 'storage', script: 'set -e; echo more >> notes/a.txt; sed -i s/alpha/beta/ notes/a.txt; mkdir -p d/e; touch d/e/f; rm -r d; git init -q repo; rm -rf repo; cat notes/a.txt' }));
    expect(d.stdout).toBe('beta\nmore\n');
    const uid = fs.lstatSync(s.zonePath('storage', 'notes/a.txt')).uid;
    expect(uid).toBeGreaterThanOrEqual(FIRST);
    expect(ownerOf(s.zonePath('storage', 'notes'))).toEqual([uid, uid]);
    expect(ownerOf(s.zonePath('storage'))).toEqual([uid, uid]);
    // The folders above: closed to everyone else.
    const home = path.join(s.base, 'users', 'alice');
    expect(modeOf(path.join(s.base, 'users'))).toBe(0o711);
    expect([modeOf(home), ...ownerOf(home)]).toEqual([0o710, 0, uid]);
    expect(modeOf(path.join(home, 'Storage'))).toBe(0o710);
    expect(fs.readFileSync(path.join(home, '.identity', 'Storage'), 'utf8').trim()).toBe(String(uid));

    // What the server writes afterwards is the user's: their command appends to it.
    ok(await s.call('shed_create_file', { zone: 'storage', path: 'later/b.txt', content: 'one\n' }));
    expect(ownerOf(s.zonePath('storage', 'later/b.txt'))).toEqual([uid, uid]);
    expect(ownerOf(s.zonePath('storage', 'later'))).toEqual([uid, uid]);
    ran(await s.call('shed_run_shell', { zone: 'storage', script: 'echo two >> later/b.txt' }));
    expect(fs.readFileSync(s.zonePath('storage', 'later/b.txt'), 'utf8')).toBe('one\ntwo\n');

    // Documents: converted too, its history the server's alone.
    ran(await s.call('shed_run_shell', { zone: 'documents', script: 'echo more >> doc.txt' }));
    expect(ownerOf(s.zonePath('documents', 'doc.txt'))).toEqual([uid, uid]);
    expect(modeOf(path.join(home, 'Documents', 'git'))).toBe(0o700);

    // Uploads: readable, never the user's to change (not even its mode).
    const up = ran(await s.call('shed_run_python', { zone: 'uploads', code: 'import os\nprint(open("upload.csv").read(), end="")\ntry:\n    os.chmod("upload.csv", 0o666)\n    print("CHANGED")\nexcept OSError as e:\n    print("refused", e.errno)' }));
    expect(up.stdout).toContain('a,b');
    expect(up.stdout).toContain('refused');
    expect(modeOf(s.zonePath('uploads', 'upload.csv'))).toBe(0o640);
    expect(ownerOf(s.zonePath('uploads', 'upload.csv'))).toEqual([0, uid]);
  });

  it('another user\'s script learns and changes nothing of the caller\'s zone, the base or the server', async () => {
    s = makeShed({ sandbox: mode, ...ON, ...IDS });
    ran(await s.call('shed_run_shell', { zone: 'storage', script: 'echo secret > plan.txt' }));
    ran(await s.call('shed_run_shell', { zone: 'storage', script: 'echo mine > mine.txt' }, { user: 'bob' }));
    const victim = s.zonePath('storage');
    const before = modeOf(victim);
    const attack = [
      'import os',
      `for what, f in [("stat", lambda: os.stat(${JSON.stringify(path.join(victim, 'plan.txt'))})), ("chmod", lambda: os.chmod(${JSON.stringify(victim)}, 0o777)), ("chmod-base", lambda: os.chmod(${JSON.stringify(s.base)}, 0o777)), ("list-users", lambda: os.listdir(${JSON.stringify(path.join(s.base, 'users'))}))]:`,
      '    try:',
      '        print(what, "LEAKED", f())',
      '    except OSError as e:',
      '        print(what, "refused", e.errno)',
    ].join('\n');
    const d = ran(await s.call('shed_run_python', { zone: 'storage', code: attack }, { user: 'bob' }));
    expect(d.stdout).not.toContain('LEAKED');
    expect(d.stdout.match(/refused/g)?.length).toBe(4);
    expect(modeOf(victim)).toBe(before);
    expect(modeOf(s.base)).toBe(0o711);
    // Each has their own uid.
    expect(fs.lstatSync(s.zonePath('storage', 'mine.txt', 'bob')).uid).not.toBe(fs.lstatSync(s.zonePath('storage', 'plan.txt')).uid);
  });
});

describe.each(KERNEL_MODES)('%s mode: a group space under identity separation', (mode) => {
  let s: Shed;
  afterEach(() => s?.cleanup());

  it('runs as the member: nothing not theirs changes mode; what they change of their own is set back from the record', async () => {
    s = makeShed({ sandbox: mode, ...ON, ...IDS });
    const { mod } = await import('../helpers/shed.js');
    await mod.admin.groups.add(s.base, 'team', 'team');
    await mod.admin.groups.addMember(s.base, 'team', 'alice');
    const code = 'import os\nopen("t.txt", "w").write("x")\nfor p in ("t.txt", "."):\n    try:\n        os.chmod(p, 0o777)\n        print(p, "changed")\n    except OSError as e:\n        print(p, "refused", e.errno)';
    const d = ran(await s.call('shed_run_python', { zone: 'group', group: 'team', code }));
    // Her own file's mode is hers to change; the space's folder (the server's) is not.
    expect(d.stdout.trim().split('\n')).toEqual(['t.txt changed', '. refused 1']);
    const data = path.join(s.base, 'groups', 'team', 'data');
    expect(fs.readFileSync(path.join(data, 't.txt'), 'utf8')).toBe('x');
    expect(fs.lstatSync(data).mode & 0o7777).toBe(0o3770);
    // After the call: the group's gid, no bit for others (the mode its record says).
    const st = fs.lstatSync(path.join(data, 't.txt'));
    expect(st.gid).toBe(fs.lstatSync(data).gid);
    expect(st.mode & 0o007).toBe(0);
  });
});

describe('a storage base the users\' uids cannot reach', () => {
  it('commands are refused, naming the closed folder above the base, and nothing runs as the server', async () => {
    const s = makeShed({ sandbox: 'landlock', ...ON, ...IDS });
    try {
      const closed = path.join(s.base, 'closed');
      fs.mkdirSync(closed, { mode: 0o700 });
      s.tools.valves = { ...s.tools.valves, storage_base_path: path.join(closed, 'base') };
      const r = await s.call('shed_run_shell', { zone: 'storage', script: 'echo ran > ran.txt' });
      expect(r.success).toBe(false);
      expect(r.error?.code).toBe('SANDBOX_UNAVAILABLE');
      expect(r.error?.message).toContain(closed);
      expect(fs.existsSync(path.join(closed, 'base', 'users', 'alice', 'Storage', 'data', 'ran.txt'))).toBe(false);
    } finally {
      s.cleanup();
    }
  });
});

describe.each(KERNEL_MODES)('%s mode: a locked edit under identity separation', (mode) => {
  it('the command edits the working copy as the user; save puts it in place, the user\'s', async () => {
    const s = makeShed({ sandbox: mode, ...ON, ...IDS });
    try {
      ok(await s.call('shed_create_file', { zone: 'storage', path: 'docs/r.md', content: 'alpha draft\n' }));
      ok(await s.call('shed_lockedit_open', { zone: 'storage', path: 'docs/r.md' }));
      const r = ok(await s.call('shed_lockedit_exec', { zone: 'storage', path: 'docs/r.md', cmd: 'sed', args: ['-i', 's/draft/final/', '.'] }));
      expect(r.returncode).toBe(0);
      ok(await s.call('shed_lockedit_save', { zone: 'storage', path: 'docs/r.md' }));
      expect(fs.readFileSync(s.zonePath('storage', 'docs/r.md'), 'utf8')).toBe('alpha final\n');
      const d = ran(await s.call('shed_run_shell', { zone: 'storage', script: 'echo more >> docs/r.md && cat docs/r.md' }));
      expect(d.stdout).toBe('alpha final\nmore\n');
    } finally {
      s.cleanup();
    }
  });
});
