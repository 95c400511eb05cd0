/**
 * Group spaces under identity separation (src/core/services/ids/group-owner.ts): a member's commands run as
 * their uid with the group's gid, and ownership records are file owners and modes in sticky, setgid
 * folders, so the kernel refuses, while the command runs, what the record refuses (issue 31 class 7:
 * no forgery window). In both kernel modes, as shell and as Python.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Shed } from '../helpers/shed.js';
import { KERNEL_MODES, ok, ran } from '../code/helpers.js';
import { groupShed, read } from '../groups/setup.js';

const FIRST = 2_300_000;
const IDS = { identity_separation: 'auto', identity_id_first: FIRST, identity_id_count: 1000, allow_python: true, allow_shell: true };
const g = { zone: 'group', group: 'team' };
const ORIGINAL = 'alice wrote this\n';

const modeOf = (p: string) => fs.lstatSync(p).mode & 0o7777;
const ownerOf = (p: string) => [fs.lstatSync(p).uid, fs.lstatSync(p).gid];

type GroupShed = Shed & { groupPath(rel?: string, id?: string): string };

/** alice's d/own.txt (owner), ro.txt (owner_ro), shared.txt (group), made as before (the server's). */
async function arrange(mode: string): Promise<GroupShed> {
  const s = await groupShed({ sandbox: mode, allow_python: true, allow_shell: true });
  ok(await s.call('shed_create_file', { ...g, path: 'd/own.txt', content: ORIGINAL, mode: 'owner' }));
  ok(await s.call('shed_create_file', { ...g, path: 'ro.txt', content: ORIGINAL, mode: 'owner_ro' }));
  ok(await s.call('shed_create_file', { ...g, path: 'shared.txt', content: 'shared\n', mode: 'group' }));
  s.tools.valves = { ...s.tools.valves, ...IDS };
  return s;
}

/** Each line: `<what> ok` or `<what> refused <errno>`. */
const SHELL_ATTACKS = [
  'try() { w=$1; shift; if ( "$@" ) 2>/dev/null; then echo "$w ok"; else echo "$w refused"; fi; }',
  'echo evil > evil.txt',
  'try write sh -c "echo EVIL > d/own.txt"',
  'try append sh -c "echo EVIL >> d/own.txt"',
  'try mv-over mv -f evil.txt d/own.txt',
  'try rename mv d/own.txt d/gone.txt',
  'try rm rm -f d/own.txt',
  'try rm-dir rm -rf d',
  'try mv-dir mv d d2',
  'try write-ro sh -c "echo EVIL > ro.txt"',
  'try chmod chmod 666 d/own.txt',
  'try shared sh -c "echo bob >> shared.txt"',
].join('\n');

const PY_ATTACKS = [
  'import os',
  'open("evil.txt", "w").write("EVIL\\n")',
  'def attempt(what, f):',
  '    try:',
  '        f()',
  '        print(what, "ok")',
  '    except OSError as e:',
  '        print(what, "refused", e.errno)',
  'attempt("write", lambda: open("d/own.txt", "w").write("EVIL\\n"))',
  'attempt("replace", lambda: os.replace("evil.txt", "d/own.txt"))',
  'attempt("rename", lambda: os.rename("d/own.txt", "d/gone.txt"))',
  'attempt("unlink", lambda: os.unlink("d/own.txt"))',
  'attempt("rename-dir", lambda: os.rename("d", "d2"))',
  'attempt("chmod", lambda: os.chmod("d/own.txt", 0o666))',
  'attempt("shared", lambda: open("shared.txt", "a").write("bob\\n"))',
].join('\n');

function expectOnlySharedOk(stdout: string): void {
  const lines = stdout.trim().split('\n');
  expect(lines.length).toBeGreaterThan(5);
  for (const line of lines) expect(line, line).toMatch(line.startsWith('shared') ? / ok$/ : / refused/);
}

describe.each(KERNEL_MODES)('%s mode', (mode) => {
  let s: GroupShed;
  afterEach(() => s?.cleanup());

  it('a space made before identities is converted; a member runs as their uid with only the group\'s gid', async () => {
    s = await arrange(mode);
    const r = ran(await s.call('shed_run_python', { ...g, code: 'import os\nopen("who.txt", "w").write("bob")\nprint(os.getuid()); print(os.getgid()); print(" ".join(map(str, os.getgroups())))' }, { user: 'bob' }));
    // On disk (in bwrap the command sees its own user namespace's numbers): bob's uid, the group's gid.
    const [bob, G] = ownerOf(s.groupPath('who.txt')) as [number, number];
    expect(bob).toBeGreaterThanOrEqual(FIRST);
    expect(G).toBeGreaterThanOrEqual(FIRST);
    expect(G).not.toBe(bob);
    if (mode === 'landlock') expect(r.stdout.trim().split('\n')).toEqual([String(bob), String(G), String(G)]);
    const gid = String(G);
    const uid = String(bob);
    const alice = ownerOf(s.groupPath('d/own.txt'))[0]!;
    expect(alice).toBeGreaterThanOrEqual(FIRST);
    expect(alice).not.toBe(Number(uid));
    expect([modeOf(s.groupPath('d/own.txt')), ...ownerOf(s.groupPath('d/own.txt'))]).toEqual([0o640, alice, G]);
    expect([modeOf(s.groupPath('ro.txt')), ...ownerOf(s.groupPath('ro.txt'))]).toEqual([0o440, alice, G]);
    expect([modeOf(s.groupPath('shared.txt')), ...ownerOf(s.groupPath('shared.txt'))]).toEqual([0o660, alice, G]);
    for (const dir of ['', 'd']) expect([modeOf(s.groupPath(dir)), ...ownerOf(s.groupPath(dir))]).toEqual([0o3770, 0, G]);
    expect(modeOf(path.join(s.base, 'groups', 'team'))).toBe(0o710);
    expect(modeOf(path.join(s.base, 'groups', 'team', 'git'))).toBe(0o700);
    expect(fs.readFileSync(path.join(s.base, 'groups', 'team', '.identity'), 'utf8').trim()).toBe(gid);
  });

  it.each(['shell', 'python'])('the kernel refuses another member\'s file to a %s script; group files are everyone\'s', async (lang) => {
    s = await arrange(mode);
    const r = lang === 'shell'
      ? ran(await s.call('shed_run_shell', { ...g, script: SHELL_ATTACKS }, { user: 'bob' }))
      : ran(await s.call('shed_run_python', { ...g, code: PY_ATTACKS }, { user: 'bob' }));
    expectOnlySharedOk(r.stdout);
    expect(read(s.groupPath('d/own.txt'))).toBe(ORIGINAL);
    expect(read(s.groupPath('ro.txt'))).toBe(ORIGINAL);
    expect(read(s.groupPath('shared.txt'))).toBe('shared\nbob\n');
    // Nothing was restored: nothing had changed.
    expect(r.data?.restored).toBeUndefined();
    // The owner's own writes and deletes still work.
    const a = ran(await s.call('shed_run_shell', { ...g, script: 'echo more >> d/own.txt && echo alice >> shared.txt && cat d/own.txt' }));
    expect(a.stdout).toBe(`${ORIGINAL}more\n`);
    ran(await s.call('shed_run_shell', { ...g, script: 'rm d/own.txt' }));
    expect(fs.existsSync(s.groupPath('d/own.txt'))).toBe(false);
  });

  it('another member\'s command leaves the owner\'s files as they are: the kernel refuses, nothing is made read-only, linked or restored', async () => {
    s = await arrange(mode);
    ran(await s.call('shed_run_shell', { ...g, script: 'true' }, { user: 'bob' })); // the space converted
    const stamp = (rel: string) => {
      const st = fs.lstatSync(s.groupPath(rel));
      return { ctime: st.ctimeMs, nlink: st.nlink, mode: st.mode & 0o777, ino: st.ino };
    };
    const before = { own: stamp('d/own.txt'), ro: stamp('ro.txt') };
    expect([before.own.mode, before.ro.mode]).toEqual([0o640, 0o440]);
    const during = ran(await s.call('shed_run_python', { ...g, code: 'import os\nfor f in ("d/own.txt", "ro.txt"):\n    st = os.stat(f)\n    print(oct(st.st_mode & 0o777), st.st_nlink)' }, { user: 'bob' }));
    expect(during.stdout.trim().split('\n')).toEqual(['0o640 1', '0o440 1']);
    const r = await s.call('shed_run_shell', { ...g, script: SHELL_ATTACKS }, { user: 'bob' });
    expectOnlySharedOk(ran(r).stdout);
    expect(r.data!.group_files_restored).toBeUndefined();
    expect({ own: stamp('d/own.txt'), ro: stamp('ro.txt') }).toEqual(before);
    expect(read(s.groupPath('d/own.txt'))).toBe(ORIGINAL);
    expect(fs.existsSync(path.join(s.base, 'groups', 'team', 'stash'))).toBe(false);
  });

  it('the second wall stands where the kernel\'s did not: files of another member changed during the command are put back from HEAD', async () => {
    s = await arrange(mode);
    ran(await s.call('shed_run_shell', { ...g, script: 'true' }, { user: 'bob' })); // the space converted
    const call = s.call('shed_run_shell', { ...g, script: 'touch started; sleep 5' }, { user: 'bob' });
    const deadline = Date.now() + 45_000;
    while (!fs.existsSync(s.groupPath('started')) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    expect(fs.existsSync(s.groupPath('started'))).toBe(true);
    // What no member's command may do, done by this test (root) while bob's command runs: one file
    // written in place, the other replaced by a new one.
    fs.writeFileSync(s.groupPath('d/own.txt'), 'FORGED\n');
    fs.rmSync(s.groupPath('ro.txt'));
    fs.writeFileSync(s.groupPath('ro.txt'), 'PLANTED\n');
    const r = ran(await call);
    const restored = (r.group_files_restored ?? []) as { path: string; kept_as?: string }[];
    expect(restored.map((x) => x.path).sort()).toEqual(['d/own.txt', 'ro.txt']);
    expect(read(s.groupPath('d/own.txt'))).toBe(ORIGINAL);
    expect(read(s.groupPath('ro.txt'))).toBe(ORIGINAL);
    const planted = restored.find((x) => x.path === 'ro.txt')?.kept_as;
    expect(planted).toBeDefined();
    expect(read(s.groupPath(planted!))).toBe('PLANTED\n');
  });

  it('class 7: during a long command another call reads the owner\'s file unchanged', async () => {
    s = await arrange(mode);
    const script = [
      'import os, time',
      'open("evil.txt", "w").write("EVIL\\n")',
      'for f in (lambda: os.replace("evil.txt", "d/own.txt"), lambda: open("d/own.txt", "w").write("EVIL\\n"), lambda: os.rename("d", "dx")):',
      '    try:',
      '        f()',
      '    except OSError:',
      '        pass',
      'open("tried", "w").write("1")',
      'time.sleep(6)',
    ].join('\n');
    const attacker = s.call('shed_run_python', { ...g, code: script, timeout: 60 }, { user: 'bob' });
    const deadline = Date.now() + 45_000;
    while (!fs.existsSync(s.groupPath('tried')) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
    expect(fs.existsSync(s.groupPath('tried'))).toBe(true);
    // While bob's script still runs: alice, in another conversation, reads her file.
    const seen = ok(await s.call('shed_read', { ...g, path: 'd/own.txt' }, { chat: 'c2', lag: false }));
    expect(JSON.stringify(seen)).toContain('alice wrote this');
    expect(JSON.stringify(seen)).not.toContain('EVIL');
    ran(await attacker);
    expect(read(s.groupPath('d/own.txt'))).toBe(ORIGINAL);
  });

  it('a folder a member makes becomes the server\'s after the call: its maker cannot remove another member\'s file in it', async () => {
    s = await arrange(mode);
    ran(await s.call('shed_run_shell', { ...g, script: 'mkdir -p mine/deep && echo bob > mine/b.txt' }, { user: 'bob' }));
    // Made under umask 077, yet the group reads it (its mode set from its record after the call).
    expect(ran(await s.call('shed_run_python', { ...g, code: 'print(open("mine/b.txt").read(), end="")' })).stdout).toBe('bob\n');
    const G = ownerOf(s.groupPath(''))[1];
    for (const dir of ['mine', 'mine/deep']) expect([modeOf(s.groupPath(dir)), ...ownerOf(s.groupPath(dir))]).toEqual([0o3770, 0, G]);
    ok(await s.call('shed_create_file', { ...g, path: 'mine/deep/alice.txt', content: ORIGINAL, mode: 'owner' }));
    const r = ran(await s.call('shed_run_shell', { ...g, script: 'rm -rf mine 2>/dev/null; mv mine/deep elsewhere 2>/dev/null; ls mine/deep' }, { user: 'bob' }));
    expect(r.stdout).toContain('alice.txt');
    expect(read(s.groupPath('mine/deep/alice.txt'))).toBe(ORIGINAL);
  });

  it('what the server changes (set_mode, chown, a named write) is the file\'s owner and mode before the next command', async () => {
    s = await arrange(mode);
    const write = (who: string) => s.call('shed_run_shell', { ...g, script: 'echo more >> d/own.txt' }, { user: who });
    expect(ran(await s.call('shed_run_shell', { ...g, script: 'true' }, { user: 'bob' })).returncode).toBe(0);
    expect((await write('bob')).data!.returncode).not.toBe(0);
    ok(await s.call('shed_group_set_mode', { group: 'team', path: 'd/own.txt', mode: 'group' }));
    ran(await write('bob'));
    ok(await s.call('shed_group_set_mode', { group: 'team', path: 'd/own.txt', mode: 'owner' }));
    ok(await s.call('shed_group_chown', { group: 'team', path: 'd/own.txt', new_owner: 'bob' }));
    ran(await write('bob'));
    expect((await write('alice')).data!.returncode).not.toBe(0);
    expect(read(s.groupPath('d/own.txt'))).toBe(`${ORIGINAL}more\nmore\n`);
    // A named write by its new owner keeps it his: 0640, his uid.
    ok(await s.call('shed_patch_text', { ...g, path: 'd/own.txt', content: 'bob\'s now\n', overwrite: true }, { user: 'bob' }));
    ran(await s.call('shed_run_shell', { ...g, script: 'echo more >> d/own.txt; echo > who-am-i' }, { user: 'bob' }));
    const bob = fs.lstatSync(s.groupPath('who-am-i')).uid;
    expect([modeOf(s.groupPath('d/own.txt')), ownerOf(s.groupPath('d/own.txt'))[0]]).toEqual([0o640, bob]);
    // A folder the server makes (fileshed serve runs with umask 077: 0700) is the group's before the next command.
    ok(await s.call('shed_create_file', { ...g, path: 'newdir/deeper/n.txt', content: 'n\n', mode: 'group' }));
    for (const dir of ['newdir', 'newdir/deeper']) fs.chmodSync(s.groupPath(dir), 0o700);
    expect(ran(await s.call('shed_run_shell', { ...g, script: 'cat newdir/deeper/n.txt; echo m > newdir/deeper/m.txt' }, { user: 'bob' })).stdout).toBe('n\n');
    expect(modeOf(s.groupPath('newdir/deeper'))).toBe(0o3770);
  });

  it('conversion is idempotent and crash-safe: without its stamp the next command walks again', async () => {
    s = await arrange(mode);
    ran(await s.call('shed_run_shell', { ...g, script: 'true' }, { user: 'bob' }));
    const stamp = path.join(s.base, 'groups', 'team', '.identity');
    const converted = ['', 'd', 'd/own.txt', 'ro.txt', 'shared.txt'].map((r) => [modeOf(s.groupPath(r)), ...ownerOf(s.groupPath(r))]);
    // As if the server died midway through the walk: the stamp gone, part of the space as before.
    fs.rmSync(stamp);
    fs.chownSync(s.groupPath('d'), 0, 0);
    fs.chmodSync(s.groupPath('d'), 0o755);
    fs.chownSync(s.groupPath('ro.txt'), 0, 0);
    fs.chmodSync(s.groupPath('ro.txt'), 0o644);
    const { forgetGroupClaims } = await import('../../src/core/services/ids/group-owner.js');
    forgetGroupClaims(); // a fresh process
    ran(await s.call('shed_run_shell', { ...g, script: 'true' }, { user: 'bob' }));
    expect(['', 'd', 'd/own.txt', 'ro.txt', 'shared.txt'].map((r) => [modeOf(s.groupPath(r)), ...ownerOf(s.groupPath(r))])).toEqual(converted);
    expect(fs.existsSync(stamp)).toBe(true);
    // And once more: nothing changes.
    ran(await s.call('shed_run_shell', { ...g, script: 'true' }, { user: 'bob' }));
    expect(['', 'd', 'd/own.txt', 'ro.txt', 'shared.txt'].map((r) => [modeOf(s.groupPath(r)), ...ownerOf(s.groupPath(r))])).toEqual(converted);
  });
});

describe.each(KERNEL_MODES)('%s mode: a locked edit of a group file under identity separation', (mode) => {
  it('the command runs as the member (what it writes is theirs), nothing of the space is in reach, save puts the edit in place', async () => {
    const s = await arrange(mode);
    try {
      ok(await s.call('shed_lockedit_open', { ...g, path: 'shared.txt' }, { user: 'bob' }));
      // sed -i writes a new file: its owner is the uid the command ran as.
      const r = ok(await s.call('shed_lockedit_exec', { ...g, path: 'shared.txt', cmd: 'sed', args: ['-i', 's/shared/edited by bob/', '.'] }, { user: 'bob' }));
      expect(r.returncode).toBe(0);
      const home = path.dirname(s.groupPath());
      const copies = fs.readdirSync(home, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name === 'shared.txt' && !path.join(e.parentPath, e.name).startsWith(s.groupPath()));
      expect(copies.length).toBeGreaterThan(0);
      const aliceUid = fs.lstatSync(s.groupPath('d/own.txt')).uid;
      const copyUids = copies.map((e) => fs.lstatSync(path.join(e.parentPath, e.name)).uid);
      expect(copyUids.every((u) => u >= FIRST && u < FIRST + 1000 && u !== aliceUid), `working copy owners ${copyUids}, alice ${aliceUid}`).toBe(true);
      // Another member's owner-mode file is not reachable from the scratch folder: the path is refused or absent.
      const peek = await s.call('shed_lockedit_exec', { ...g, path: 'shared.txt', cmd: 'cat', args: ['../../data/d/own.txt'] }, { user: 'bob' });
      expect(JSON.stringify(peek)).not.toContain('alice wrote this');
      ok(await s.call('shed_lockedit_save', { ...g, path: 'shared.txt' }, { user: 'bob' }));
      expect(read(s.groupPath('shared.txt'))).toBe('edited by bob\n');
    } finally {
      s.cleanup();
    }
  });
});
