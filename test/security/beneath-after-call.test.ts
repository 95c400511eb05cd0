/**
 * The server never follows a path a command shaped (issue 31, classes 5 and 6; SPEC 8): every step
 * after a script (the group guard's comparison and restore, moving stdout_file into place) reaches
 * the zone by descriptor, never through a link the script left.
 *
 * Class 5: bob renames the folder holding alice's owner-mode file and leaves a link under the old
 * name (at the first folder, deeper in the path, at the file itself, to outside the zone, to another
 * group's space; a hard link too). Afterwards alice's file is at its real place with her content,
 * the link was moved aside, her ownership record is intact, and a second call by bob through the
 * names he made cannot change her file.
 *
 * Class 6: bob's script looks for the server's stdout_file temp file, moves it next to alice's file
 * and swaps its output folder for a link to hers: the server's final rename must not replace her
 * file. The temp file is out of the script's reach now; the output lands where the path says.
 *
 * Both kernel modes, as Python and as shell where the shell can make the move (it has no `ln`:
 * links come from Python).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Result } from '../helpers/shed.js';
import { groupShed, read } from '../groups/setup.js';

const ON = { allow_python: true, allow_shell: true };
const g = { zone: 'group', group: 'team' } as const;
const ORIGINAL = 'alice wrote this\n';

/** Whether the suite runs again with identity_separation on (FILESHED_TEST_VALVES). */
const identityOn = /"identity_separation":"(auto|required)"/.test(process.env.FILESHED_TEST_VALVES ?? '');

type Group = Awaited<ReturnType<typeof groupShed>>;

const ok = (r: Result) => expect(r.success, JSON.stringify(r.error ?? r.data)).toBe(true);

async function owners(t: Group): Promise<Record<string, string>> {
  const r = await t.call('shed_group_info', { group: 'team' });
  ok(r);
  return Object.fromEntries((r.data!.files as { path: string; owner: string }[]).map((f) => [f.path, f.owner]));
}

/** Alice's file is a regular file at its real place, with her content, and still recorded as hers. */
async function intact(t: Group, rel: string, what: string): Promise<void> {
  const parts = rel.split('/');
  for (let i = 1; i < parts.length; i++) {
    const st = fs.lstatSync(t.groupPath(parts.slice(0, i).join('/')));
    expect(st.isDirectory() && !st.isSymbolicLink(), `${what}: ${parts.slice(0, i).join('/')} is a real folder again`).toBe(true);
  }
  expect(fs.lstatSync(t.groupPath(rel)).isFile(), `${what}: ${rel} is a regular file`).toBe(true);
  expect(read(t.groupPath(rel)), `${what}: ${rel} keeps alice's content`).toBe(ORIGINAL);
  expect((await owners(t))[rel], `${what}: ${rel} is still alice's`).toBe('alice');
}

describe.each(['bwrap', 'landlock'] as const)('%s: class 5, a link left for a folder does not lead the guard', (sandbox) => {
  let t: Group;
  afterEach(() => t?.cleanup());

  const setup = async (rel: string) => {
    t = await groupShed({ sandbox, ...ON });
    ok(await t.call('shed_create_file', { ...g, path: rel, content: ORIGINAL, mode: 'owner' }));
  };

  /** Python run by bob in the group: `setup` moves things, then a second call writes through the names it made. */
  const attack = async (rel: string, moves: string, through: string) => {
    await setup(rel);
    const first = await t.call('shed_run_python', { ...g, code: `import os\n${moves}\n`, timeout: 60 }, { user: 'bob' });
    ok(first);
    // Under identity separation the kernel already refuses the first move (sticky folders): exit 1.
    expect(first.data!.returncode, String(first.data!.stderr)).toBe(identityOn ? 1 : 0);
    // Bob now writes through the name he believes he made his own.
    await t.call('shed_run_python', { ...g, code: `try:\n    open(${JSON.stringify(through)}, 'w').write('EVIL\\n')\nexcept OSError as e:\n    print('refused', e)\n`, timeout: 60 }, { user: 'bob' });
    await intact(t, rel, moves.replace(/\n/g, '; '));
  };

  it('the disclosed instance: its folder renamed, a link under the old name', async () => {
    await attack('d/v.txt', "os.rename('d', 'e')\nos.symlink('e', 'd')", 'e/v.txt');
  });

  it('from the shell: its folder moved, a new folder with a link to the file at its name (cp -s)', async () => {
    await setup('d/v.txt');
    const r = await t.call('shed_run_shell', { ...g, script: 'mv d e && mkdir d && cd d && cp -s ../e/v.txt v.txt && ls -l', timeout: 60 }, { user: 'bob' });
    ok(r);
    expect(r.data!.returncode !== 0, String(r.data!.stderr)).toBe(identityOn);
    await t.call('shed_run_shell', { ...g, script: 'echo EVIL > e/v.txt', timeout: 60 }, { user: 'bob' });
    await intact(t, 'd/v.txt', 'mv d e; cp -s');
  });

  it('a link deeper in the path (the folder holding the file)', async () => {
    await attack('p/q/v.txt', "os.rename('p/q', 'p/r')\nos.symlink('r', 'p/q')", 'p/r/v.txt');
  });

  it('a link at the first of several folders', async () => {
    await attack('p/q/v.txt', "os.rename('p', 'z')\nos.symlink('z', 'p')", 'z/q/v.txt');
  });

  it('a link with an absolute target (the same folder as the script sees it)', async () => {
    await attack('d/v.txt', "os.rename('d', 'e')\nos.symlink(os.path.join(os.getcwd(), 'e'), 'd')", 'e/v.txt');
  });

  it('a link at the file itself, its content renamed beside it', async () => {
    await attack('d/v.txt', "os.rename('d/v.txt', 'd/w.txt')\nos.symlink('w.txt', 'd/v.txt')", 'd/w.txt');
  });

  it('a link to outside the zone: the restore writes nothing there', async () => {
    await setup('d/v.txt');
    const target = path.join(t.base, 'outside');
    fs.mkdirSync(target);
    ok(await t.call('shed_run_python', { ...g, code: `import os\nos.rename('d', 'e')\nos.symlink(${JSON.stringify(target)}, 'd')\n`, timeout: 60 }, { user: 'bob' }));
    await intact(t, 'd/v.txt', 'link to outside');
    expect(fs.readdirSync(target), 'nothing was written outside the zone').toEqual([]);
  });

  it("a link to another group's space: nothing is written there", async () => {
    await setup('d/v.txt');
    ok(await t.call('shed_create_file', { zone: 'group', group: 'lab', path: 'keep.txt', content: 'lab\n' }));
    const lab = t.groupPath('', 'lab');
    ok(await t.call('shed_run_python', { ...g, code: `import os\nos.rename('d', 'e')\nos.symlink('../../lab/data', 'd')\n`, timeout: 60 }, { user: 'bob' }));
    await intact(t, 'd/v.txt', 'link to the lab group');
    expect(fs.readdirSync(lab).filter((n) => n !== '.git'), "the lab group's space gained nothing").toEqual(['keep.txt']);
  });

  it('a hard link to her file, written through in a later call', async () => {
    await attack('d/v.txt', "os.link('d/v.txt', 'mine.txt')", 'mine.txt');
  });
});

describe.each(['bwrap', 'landlock'] as const)('%s: class 6, the output file lands where its path says', (sandbox) => {
  let t: Group;
  afterEach(() => t?.cleanup());

  /** Bob's script hunts for the temp file of its own stdout_file and swaps its folder for a link to alice's. */
  const HUNT = [
    'import glob, os, sys',
    'found = glob.glob("out/.*.shedtmp") + glob.glob(".*.shedtmp")',
    'print("EVIL")',
    'sys.stdout.flush()',
    'for tmp in found:',
    '    os.rename(tmp, os.path.join("d", os.path.basename(tmp)))',
    'os.rename("out", "out2")',
    'os.symlink("d", "out")',
  ].join('\n');

  it('the disclosed instance: temp file moved beside her file, the output folder a link to hers', async () => {
    t = await groupShed({ sandbox, ...ON });
    ok(await t.call('shed_create_file', { ...g, path: 'd/o.txt', content: ORIGINAL, mode: 'owner' }));
    ok(await t.call('shed_create_file', { ...g, path: 'out/keep.txt', content: 'bob\n' }, { user: 'bob' }));
    const r = await t.call('shed_run_python', { ...g, code: HUNT, stdout_file: 'out/o.txt', timeout: 60 }, { user: 'bob' });
    ok(r);
    await intact(t, 'd/o.txt', 'stdout_file rename');
    // The output is where its path says: a real folder `out` (the link moved aside), holding it.
    expect(fs.lstatSync(t.groupPath('out')).isDirectory()).toBe(true);
    expect(read(t.groupPath('out/o.txt'))).toBe('EVIL\n');
    // Under identity separation the kernel refused the folder's rename (sticky): no link was ever made.
    if (identityOn) expect(fs.existsSync(t.groupPath('out.~1~'))).toBe(false);
    else expect(fs.lstatSync(t.groupPath('out.~1~')).isSymbolicLink(), 'the link the script made is kept aside').toBe(true);
    expect(fs.readdirSync(t.groupPath('d')).filter((n) => n.endsWith('.shedtmp')), 'no temp file was in its reach').toEqual([]);
  });

  it('the output file name made a link to her file during the call: replaced, never followed', async () => {
    t = await groupShed({ sandbox, ...ON });
    ok(await t.call('shed_create_file', { ...g, path: 'd/o.txt', content: ORIGINAL, mode: 'owner' }));
    const r = await t.call('shed_run_python', { ...g, code: 'import os\nos.symlink("d/o.txt", "o.txt")\nprint("EVIL")\n', stdout_file: 'o.txt', timeout: 60 }, { user: 'bob' });
    ok(r);
    await intact(t, 'd/o.txt', 'stdout_file name a link');
    expect(fs.lstatSync(t.groupPath('o.txt')).isFile()).toBe(true);
    expect(read(t.groupPath('o.txt'))).toBe('EVIL\n');
  });

  it("the output file name made a link to her file by an earlier call: refused (the path rules), her file intact", async () => {
    t = await groupShed({ sandbox, ...ON });
    ok(await t.call('shed_create_file', { ...g, path: 'd/o.txt', content: ORIGINAL, mode: 'owner' }));
    ok(await t.call('shed_run_python', { ...g, code: 'import os\nos.symlink("d/o.txt", "o.txt")\n', timeout: 60 }, { user: 'bob' }));
    const r = await t.call('shed_run_python', { ...g, code: 'print("EVIL")\n', stdout_file: 'o.txt', timeout: 60 }, { user: 'bob' });
    expect(r.success, JSON.stringify(r.data)).toBe(false);
    expect(['FILE_OWNER_ONLY', 'PERMISSION_DENIED', 'INVALID_PATH']).toContain(r.error!.code);
    await intact(t, 'd/o.txt', 'stdout_file through an earlier link');
  });

  it('the output folder made a link to her folder by an earlier call: refused (the path rules), her file intact', async () => {
    t = await groupShed({ sandbox, ...ON });
    ok(await t.call('shed_create_file', { ...g, path: 'd/o.txt', content: ORIGINAL, mode: 'owner' }));
    ok(await t.call('shed_run_python', { ...g, code: 'import os\nos.symlink("d", "out")\n', timeout: 60 }, { user: 'bob' }));
    const r = await t.call('shed_exec', { ...g, cmd: 'ls', args: ['nothing-here'], stderr_file: 'out/o.txt' }, { user: 'bob' });
    expect(r.success, JSON.stringify(r.data)).toBe(false);
    expect(['FILE_OWNER_ONLY', 'PERMISSION_DENIED', 'INVALID_PATH']).toContain(r.error!.code);
    await intact(t, 'd/o.txt', 'stderr_file through an earlier folder link');
  });

  it('a folder of the path made a file, and the output name a folder: both kept aside, the output lands', async () => {
    t = await groupShed({ sandbox, ...ON });
    const code = 'import os\nos.makedirs("a")\nos.rename("a", "a2")\nopen("a", "w").write("x")\nos.makedirs("b/o.txt")\nprint("OUT")\n';
    const r = await t.call('shed_run_python', { ...g, code, stdout_file: 'a/o.txt', timeout: 60 }, { user: 'bob' });
    ok(r);
    expect(read(t.groupPath('a/o.txt'))).toBe('OUT\n');
    expect(read(t.groupPath('a.~1~'))).toBe('x');
  });

  it('stderr_file of a command: written beneath the zone, out of reach while it runs', async () => {
    t = await groupShed({ sandbox, ...ON });
    const r = await t.call('shed_exec', { ...g, cmd: 'ls', args: ['nothing-here'], stderr_file: 'logs/err.txt' }, { user: 'bob' });
    ok(r);
    expect(read(t.groupPath('logs/err.txt'))).toMatch(/nothing-here/);
    expect(fs.existsSync(path.join(t.base, 'groups', 'team', 'stash')), 'no temp file stays beside the zone').toBe(false);
  });
});

describe.each(['bwrap', 'landlock'] as const)('%s: blocked entries go back to their place, not where a link leads', (sandbox) => {
  it('a link made at the name of a hidden blocked folder: the blocked file is not put back through it', async () => {
    const t = await groupShed({ sandbox, ...ON, blocked_patterns: 'private/' });
    try {
      ok(await t.call('shed_create_file', { zone: 'storage', path: 'pub/readme.txt', content: 'public\n' }));
      fs.mkdirSync(t.zonePath('storage', 'private'));
      fs.writeFileSync(t.zonePath('storage', 'private/s.txt'), 'THE-BLOCKED-SECRET\n');
      // While it runs, `private` is hidden: the script makes the name a link to a folder it can read.
      const r = await t.call('shed_run_python', { zone: 'storage', code: 'import os\nos.symlink("pub", "private")\n', timeout: 60 });
      ok(r);
      expect(fs.readdirSync(t.zonePath('storage', 'pub')), 'nothing of the blocked folder landed in pub/').toEqual(['readme.txt']);
      expect(fs.lstatSync(t.zonePath('storage', 'private')).isDirectory()).toBe(true);
      expect(read(t.zonePath('storage', 'private/s.txt'))).toBe('THE-BLOCKED-SECRET\n');
      const next = await t.call('shed_run_shell', { zone: 'storage', script: 'cat pub/* 2>&1; ls -R 2>&1', timeout: 60 });
      ok(next);
      expect(String(next.data!.stdout)).not.toContain('THE-BLOCKED-SECRET');
    } finally {
      t.cleanup();
    }
  });
});

describe.each(['bwrap', 'landlock'] as const)('%s: the output file, written out of the zone, still counts toward the quota', (sandbox) => {
  it('a file and stdout_file of 6 MB each in a 10 MB quota: the output is discarded, QUOTA_EXCEEDED', async () => {
    const t = await groupShed({ sandbox, ...ON, quota_per_user_mb: 10, max_file_size_mb: 8 });
    try {
      const code = 'import sys\nopen("big.bin", "wb").write(b"x" * (6 << 20))\nsys.stdout.buffer.write(b"y" * (6 << 20))\n';
      const r = await t.call('shed_run_python', { zone: 'storage', code, stdout_file: 'out.bin', timeout: 60 });
      expect(r.success, JSON.stringify(r.data)).toBe(false);
      expect(r.error!.code).toBe('QUOTA_EXCEEDED');
      expect(fs.existsSync(t.zonePath('storage', 'out.bin')), 'the output was not written').toBe(false);
      expect(fs.existsSync(path.join(t.base, 'users', 'alice', 'Storage', 'stash')), 'its temp file is gone').toBe(false);
      // Within the quota, the same output lands.
      fs.rmSync(t.zonePath('storage', 'big.bin'), { force: true });
      const fits = await t.call('shed_run_python', { zone: 'storage', code: 'import sys\nsys.stdout.buffer.write(b"y" * (6 << 20))\n', stdout_file: 'out.bin', timeout: 60 });
      ok(fits);
      expect(fs.statSync(t.zonePath('storage', 'out.bin')).size).toBe(6 << 20);
    } finally {
      t.cleanup();
    }
  });
});

describe('an output temp file left by a kill', () => {
  it('is removed by the next call of the space, which runs as usual', async () => {
    const t = await groupShed({ sandbox: 'landlock', ...ON });
    try {
      ok(await t.call('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'a\n' }));
      const left = path.join(t.base, 'users', 'alice', 'Storage', 'stash', 'output-0123456789abcdef');
      fs.mkdirSync(left, { recursive: true });
      fs.writeFileSync(path.join(left, 'output.shedtmp'), 'half written');
      const r = await t.call('shed_exec', { zone: 'storage', cmd: 'cat', args: ['a.txt'], stdout_file: 'b.txt' });
      ok(r);
      expect(read(t.zonePath('storage', 'b.txt'))).toBe('a\n');
      expect(fs.existsSync(path.join(t.base, 'users', 'alice', 'Storage', 'stash')), 'the leftover is gone, and the stash with it').toBe(false);
    } finally {
      t.cleanup();
    }
  });
});
