import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ShedError } from '../../src/core/base/errors.js';
import { commitZone, gitCommand } from '../../src/core/services/vcs/index.js';
import { ALICE, fsckClean, git, put, tempZone } from './helpers.js';

type Z = ReturnType<typeof tempZone>;
let z: Z;
afterEach(() => z?.cleanup());

const run = (...args: string[]) => gitCommand(z, args, ALICE);
const real = (...args: string[]) => git(z.root, ...args);

async function failure(p: Promise<unknown>): Promise<ShedError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ShedError) return err;
    throw err;
  }
  throw new Error('expected a ShedError');
}

/** Three commits: a.txt and dir/b.md created; both edited; a.txt deleted and a binary added. */
async function history(): Promise<string[]> {
  put(z.root, 'a.txt', 'alpha\nbeta\ngamma\n');
  put(z.root, 'dir/b.md', 'function foo() {\n  x\n  y\n  z\n  w\n  v\n}\n');
  const c1 = (await commitZone(z, ['a.txt', 'dir'], ALICE, 'First\n\nBody line one\n\nBody two'))!;
  put(z.root, 'a.txt', 'alpha\nBETA\ngamma\ndelta\n');
  put(z.root, 'dir/b.md', 'function foo() {\n  x\n  y\n  z\n  w\n  v2\n}\n');
  const c2 = (await commitZone(z, ['a.txt', 'dir/b.md'], ALICE, 'Second'))!;
  fs.rmSync(path.join(z.root, 'a.txt'));
  put(z.root, 'bin.dat', Buffer.from([0, 1, 2]));
  const c3 = (await commitZone(z, ['a.txt', 'bin.dat'], ALICE, 'Third'))!;
  return [c1, c2, c3];
}

describe('read-only subcommands print what the real git prints', () => {
  beforeEach(async () => {
    z = tempZone();
    await history();
    // Uncommitted changes and an untracked folder, as a command could leave them.
    put(z.root, 'dir/b.md', 'changed\n');
    put(z.root, 'new/x.txt', 'x\n');
  });

  it.each([
    [['log']],
    [['log', '--oneline']],
    [['log', '--stat']],
    [['log', '--oneline', '--stat']],
    [['log', '-n', '2', '--oneline']],
    [['log', '-n1']],
    [['log', '-2', '--oneline']],
    [['log', '--max-count=1', '--stat']],
    [['log', '--oneline', '--', 'a.txt']],
    [['log', '--oneline', 'HEAD~1']],
    [['log', '--oneline', 'HEAD~2..HEAD']],
    [['log', '-p', '-n', '1']],
    [['log', '--name-only', '--oneline']],
    [['log', '--name-status', '--oneline']],
    [['show']],
    [['show', 'HEAD~1']],
    [['show', '--stat', 'HEAD~1']],
    [['show', 'HEAD^']],
    [['show', 'HEAD^^']],
    [['show', 'main~2']],
    [['show', 'HEAD~2:a.txt']],
    [['show', 'HEAD:dir']],
    [['diff']],
    [['diff', '--stat']],
    [['diff', 'HEAD~2']],
    [['diff', 'HEAD~2', 'HEAD']],
    [['diff', 'HEAD~2..HEAD~1']],
    [['diff', 'HEAD~2', 'HEAD', '--', 'a.txt']],
    [['diff', '--name-only', 'HEAD~2', 'HEAD']],
    [['diff', '--name-status', 'HEAD~2', 'HEAD']],
    [['diff', '--cached']],
    [['status', '--porcelain']],
    [['status', '-s']],
    [['blame', 'HEAD', 'dir/b.md']],
  ])('git %j', async (args) => {
    const ours = await run(...args);
    expect(ours.returncode).toBe(0);
    expect(ours.stdout).toBe(real(...args));
  });

  it('accepts full and short ids (unique prefixes of 4+ digits)', async () => {
    const full = real('rev-parse', 'HEAD~1').trim();
    for (const rev of [full, full.slice(0, 7), full.slice(0, 4)]) {
      expect((await run('show', '--stat', rev)).stdout).toBe(real('show', '--stat', full));
    }
  });

  it('status (long form) names modified, deleted and untracked paths', async () => {
    fs.rmSync(path.join(z.root, 'bin.dat'));
    const out = (await run('status')).stdout;
    expect(out).toContain('On branch main');
    expect(out).toMatch(/\tmodified: +dir\/b\.md/);
    expect(out).toMatch(/\tdeleted: +bin\.dat/);
    expect(out).toMatch(/Untracked files[^\n]*\n\tnew\/\n/);
  });

  it('blame without a revision shows the committed version and says the file on disk differs', async () => {
    const out = await run('blame', 'dir/b.md');
    expect(out.stdout).toBe(real('blame', 'HEAD', 'dir/b.md'));
    expect(out.stderr).toContain('not committed yet');
  });
});

describe('output matches git for awkward content', () => {
  beforeEach(async () => {
    z = tempZone();
    put(z.root, 'café.txt', 'un\ndeux\n');
    put(z.root, 'a b.txt', 'x');
    put(z.root, 'tab\tname.txt', 'x\n');
    put(z.root, 'crlf.txt', 'one\r\ntwo\r\nthree\r\n');
    put(z.root, 'nonl.txt', 'a\nb');
    put(z.root, 'mode.sh', 'echo\n');
    put(z.root, 'tolink', 'was a file\n');
    fs.symlinkSync('nonl.txt', path.join(z.root, 'ln'));
    put(z.root, 'long.txt', `${Array.from({ length: 50 }, (_, i) => `line ${i}`).join('\n')}\n`);
    put(z.root, 'a-very-long-directory-name/with/a-long-file-name-that-makes-the-stat-narrow.txt', 'x\n');
    await commitZone(z, [''], ALICE, 'First');
    put(z.root, 'café.txt', 'un\ndeux\ntrois\n');
    put(z.root, 'a b.txt', 'y');
    put(z.root, 'tab\tname.txt', 'y\n');
    put(z.root, 'crlf.txt', 'one\r\nTWO\r\nthree\r\n');
    put(z.root, 'nonl.txt', 'a\nc');
    fs.chmodSync(path.join(z.root, 'mode.sh'), 0o755);
    fs.rmSync(path.join(z.root, 'tolink'));
    fs.symlinkSync('mode.sh', path.join(z.root, 'tolink'));
    fs.rmSync(path.join(z.root, 'ln'));
    fs.symlinkSync('mode.sh', path.join(z.root, 'ln'));
    put(z.root, 'empty.txt', '');
    put(z.root, 'long.txt', `${Array.from({ length: 300 }, (_, i) => `LINE ${i}`).join('\n')}\n`);
    put(z.root, 'a-very-long-directory-name/with/a-long-file-name-that-makes-the-stat-narrow.txt', Array.from({ length: 120 }, (_, i) => `n ${i}`).join('\n'));
    await commitZone(z, [''], ALICE, 'Second');
  });

  it.each([[['show', 'HEAD']], [['show', 'HEAD~1']], [['log', '--stat']], [['diff', 'HEAD~1', 'HEAD', '--stat']], [['log', '--name-status', '--oneline']], [['diff', 'HEAD~1', '--name-only']]])('git %j (UTF-8, spaces, tabs, CRLF, no final newline, modes, links, scaled stat)', async (args) => {
    expect((await run(...args)).stdout).toBe(real(...args));
  });
});

describe('arguments as git users type them', () => {
  beforeEach(async () => {
    z = tempZone();
    put(z.root, 'cafe', 'a file whose name looks like a commit id\n');
    put(z.root, 'notes.txt', 'n\n');
    await commitZone(z, [''], ALICE, 'one');
    put(z.root, 'notes.txt', 'n2\n');
    await commitZone(z, ['notes.txt'], ALICE, 'two');
    put(z.root, 'notes.txt', 'n3\n');
  });

  it('a word that is a file, not a revision, is a path (even when it looks like an id)', async () => {
    expect((await run('log', '--oneline', 'cafe')).stdout).toBe(real('log', '--oneline', '--', 'cafe'));
    expect((await run('diff', 'notes.txt')).stdout).toBe(real('diff', '--', 'notes.txt'));
    expect((await run('log', '--oneline', 'notes.txt')).stdout.trim().split('\n')).toHaveLength(2);
  });

  it('--no-pager is accepted; help and no subcommand list what is supported', async () => {
    expect((await run('--no-pager', 'log', '--oneline')).stdout).toBe(real('log', '--oneline'));
    for (const args of [[], ['help']]) {
      const out = await run(...args);
      expect(out.returncode).toBe(0);
      expect(out.stdout).toContain('log, show, diff, status, restore, checkout, blame');
    }
  });
});

describe('errors teach', () => {
  beforeEach(async () => {
    z = tempZone();
    await history();
  });

  it.each(['push', 'commit', 'add', 'rebase', 'gc', 'config', 'reset'])('git %s is refused with COMMAND_FORBIDDEN listing the supported subcommands', async (sub) => {
    const e = await failure(run(sub));
    expect(e.code).toBe('COMMAND_FORBIDDEN');
    expect(e.message).toContain('log, show, diff, status, restore, checkout, blame');
    expect(e.hint).toContain('shed_exec(');
  });

  it('commit/add explain that commits are automatic', async () => {
    expect((await failure(run('commit', '-m', 'x'))).message).toMatch(/committed automatically/);
  });

  it.each([['-c', 'core.pager=sh', 'log'], ['-C', '/', 'log'], ['--git-dir=/tmp', 'log']])('global option %s before the subcommand is refused', async (...args) => {
    expect((await failure(run(...args))).code).toBe('COMMAND_FORBIDDEN');
  });

  it.each(['HEAD~9', 'abc', 'deadbeef', 'nosuchbranch', 'HEAD^3', 'HEAD@{1}'])('show %s → INVALID_REVISION naming it', async (rev) => {
    const e = await failure(run('show', rev));
    expect(e.code).toBe('INVALID_REVISION');
    expect(e.message).toContain(`'${rev}'`);
    expect(e.hint).toMatch(/HEAD~1/);
  });

  it('an unknown option names the option and lists the supported ones', async () => {
    const e = await failure(run('log', '--graph'));
    expect(e.code).toBe('INVALID_PARAMETER');
    expect(e.message).toContain("'--graph'");
    expect(e.message).toContain('--oneline');
  });

  it('show REV:path of a missing file is FILE_NOT_FOUND with a log hint', async () => {
    const e = await failure(run('show', 'HEAD:a.txt'));
    expect(e.code).toBe('FILE_NOT_FOUND');
    expect(e.hint).toContain('"log"');
  });

  it('paths may not leave the zone', async () => {
    expect((await failure(run('log', '--', '../../etc'))).code).toBe('PATH_ESCAPE');
  });

  it('an empty history answers like git (exit 128, clear message) and creates the repository lazily', async () => {
    z.cleanup();
    z = tempZone();
    expect(fs.existsSync(path.join(z.root, '.git'))).toBe(false);
    const out = await run('log');
    expect(out.returncode).toBe(128);
    expect(out.stderr).toContain('does not have any commits yet');
    expect(real('symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
    expect((await run('status')).stdout).toContain('No commits yet');
  });

  it('ambiguous short ids prefer the one commit among the matching objects', async () => {
    // 4-digit prefixes of the commits are unique among commits even if blobs share them.
    const ids = real('rev-list', 'HEAD').trim().split('\n');
    for (const id of ids) expect((await run('log', '--oneline', '-n', '1', id.slice(0, 4))).stdout).toBe(real('log', '--oneline', '-n', '1', id));
  });
});

describe('restore and checkout bring old versions back as a new commit', () => {
  beforeEach(async () => {
    z = tempZone();
  });

  it('restore --source=REV -- file: the old content, a new commit by the caller, status clean', async () => {
    const [c1] = await history();
    const out = await run('restore', `--source=${c1!.slice(0, 7)}`, '--', 'a.txt');
    expect(out.returncode).toBe(0);
    expect(out.commit).toMatch(/^[0-9a-f]{7}$/);
    expect(out.commit).toBe(real('rev-parse', '--short=7', 'HEAD').trim());
    expect(fs.readFileSync(path.join(z.root, 'a.txt'), 'utf8')).toBe('alpha\nbeta\ngamma\n');
    expect(real('log', '-1', '--format=%an|%s').trim()).toBe(`ALICE|Restore a.txt from ${c1!.slice(0, 7)} (First)`);
    expect(real('show', '--name-only', '--format=', 'HEAD').trim()).toBe('a.txt');
    expect(real('status', '--porcelain')).toBe('');
    expect(fsckClean(z.root).ok).toBe(true);
    expect(real('rev-list', '--count', 'HEAD').trim()).toBe('4');
  });

  it('checkout REV -- folder writes the old files and keeps newer ones; restore removes them', async () => {
    put(z.root, 'd/one.txt', '1\n');
    await commitZone(z, ['d'], ALICE, 'one');
    put(z.root, 'd/one.txt', '1 changed\n');
    put(z.root, 'd/two.txt', '2\n');
    await commitZone(z, ['d'], ALICE, 'two');
    const co = await run('checkout', 'HEAD~1', '--', 'd');
    expect(co.commit).toMatch(/^[0-9a-f]{7}$/);
    expect(fs.readFileSync(path.join(z.root, 'd/one.txt'), 'utf8')).toBe('1\n');
    expect(fs.existsSync(path.join(z.root, 'd/two.txt'))).toBe(true);
    const rs = await run('restore', '-s', 'HEAD~2', 'd');
    expect(rs.commit).toMatch(/^[0-9a-f]{7}$/);
    expect(fs.existsSync(path.join(z.root, 'd/two.txt'))).toBe(false);
    expect(real('ls-tree', '-r', '--name-only', 'HEAD').trim()).toBe('d/one.txt');
    expect(real('status', '--porcelain')).toBe('');
    expect(fsckClean(z.root).ok).toBe(true);
  });

  it('restore of a deleted file and "checkout REV path" without --', async () => {
    await history();
    const out = await run('checkout', 'HEAD~1', 'a.txt');
    expect(out.commit).toBeDefined();
    expect(fs.readFileSync(path.join(z.root, 'a.txt'), 'utf8')).toBe('alpha\nBETA\ngamma\ndelta\n');
  });

  it('restore path (from HEAD) discards uncommitted changes without a commit', async () => {
    await history();
    put(z.root, 'dir/b.md', 'scribble\n');
    const out = await run('restore', 'dir/b.md');
    expect(out.returncode).toBe(0);
    expect(out.commit).toBeUndefined();
    expect(fs.readFileSync(path.join(z.root, 'dir/b.md'), 'utf8')).toContain('v2');
    expect(real('rev-list', '--count', 'HEAD').trim()).toBe('3');
  });

  it('restores the executable bit and links', async () => {
    put(z.root, 'run.sh', 'echo\n');
    fs.chmodSync(path.join(z.root, 'run.sh'), 0o755);
    fs.symlinkSync('run.sh', path.join(z.root, 'ln'));
    await commitZone(z, ['run.sh', 'ln'], ALICE, 'x');
    fs.rmSync(path.join(z.root, 'run.sh'));
    fs.rmSync(path.join(z.root, 'ln'));
    await commitZone(z, ['run.sh', 'ln'], ALICE, 'gone');
    await run('restore', '--source', 'HEAD~1', '--', 'run.sh', 'ln');
    expect(fs.statSync(path.join(z.root, 'run.sh')).mode & 0o777).toBe(0o755);
    expect(fs.readlinkSync(path.join(z.root, 'ln'))).toBe('run.sh');
    expect(real('status', '--porcelain')).toBe('');
  });

  it('never writes through a folder link leading outside the zone', async () => {
    put(z.root, 'd/a.txt', 'a\n');
    await commitZone(z, ['d'], ALICE, 'd');
    const outside = fs.mkdtempSync(path.join(path.dirname(z.root), 'outside-'));
    fs.rmSync(path.join(z.root, 'd'), { recursive: true });
    fs.symlinkSync(outside, path.join(z.root, 'd'));
    const e = await run('restore', '--source=HEAD', '--', 'd').catch((err: unknown) => err);
    // Either the link is replaced by the real folder (git's behaviour), or the write is refused: never written outside.
    expect(fs.readdirSync(outside)).toEqual([]);
    if (!(e instanceof ShedError)) expect(fs.lstatSync(path.join(z.root, 'd')).isDirectory()).toBe(true);
  });

  it('checkout of a branch name alone (switching) is refused with a hint', async () => {
    await history();
    const e = await failure(run('checkout', 'main'));
    expect(e.code).toBe('COMMAND_FORBIDDEN');
    expect(e.hint).toContain('"checkout", "HEAD~1", "--"');
  });

  it('a path that never existed is reported like git, exit 1', async () => {
    await history();
    const out = await run('restore', '--source=HEAD~1', '--', 'nope.txt');
    expect(out.returncode).toBe(1);
    expect(out.stderr).toContain("pathspec 'nope.txt' did not match");
  });
});

describe('restore obeys locks, quota and the file size limit', () => {
  beforeEach(async () => {
    z = tempZone();
    put(z.root, 'big.bin', Buffer.alloc(100_000, 7));
    put(z.root, 'a.txt', 'a\n');
    await commitZone(z, [''], ALICE, 'files');
    fs.rmSync(path.join(z.root, 'big.bin'));
    put(z.root, 'a.txt', 'changed\n');
    await commitZone(z, ['big.bin', 'a.txt'], ALICE, 'edit');
  });

  it('a file locked by another conversation is not overwritten', async () => {
    fs.mkdirSync(path.join(z.workBase!, 'locks'), { recursive: true });
    fs.writeFileSync(path.join(z.workBase!, 'locks', 'a.txt.lock'), JSON.stringify({ user_id: 'alice', conv_id: 'other', locked_at: new Date().toISOString(), path: 'a.txt' }));
    const e = await failure(gitCommand(z, ['restore', '--source=HEAD~1', '--', 'a.txt'], ALICE, { lockOwner: { user_id: 'alice', conv_id: 'c1' }, lockMaxAgeHours: 24 }));
    expect(e.code).toBe('FILE_LOCKED');
    expect(fs.readFileSync(path.join(z.root, 'a.txt'), 'utf8')).toBe('changed\n');
    expect(real('rev-list', '--count', 'HEAD').trim()).toBe('2');
  });

  it('QUOTA_EXCEEDED and FILE_TOO_LARGE leave the zone and the history untouched', async () => {
    expect((await failure(gitCommand(z, ['restore', '--source=HEAD~1', '--', 'big.bin'], ALICE, { maxFileSizeMb: 0.05 }))).code).toBe('FILE_TOO_LARGE');
    z.scope.limitBytes = 60_000;
    expect((await failure(gitCommand(z, ['restore', '--source=HEAD~1', '--', 'big.bin'], ALICE))).code).toBe('QUOTA_EXCEEDED');
    expect(fs.existsSync(path.join(z.root, 'big.bin'))).toBe(false);
    expect(real('rev-list', '--count', 'HEAD').trim()).toBe('2');
  });
});

describe('zones without history', () => {
  it('git in a zone that is not versioned is COMMAND_FORBIDDEN', async () => {
    z = tempZone();
    const e = await failure(gitCommand({ ...z, versioned: false, label: 'Storage' }, ['log'], ALICE));
    expect(e.code).toBe('COMMAND_FORBIDDEN');
    expect(fs.existsSync(path.join(z.root, '.git'))).toBe(false);
  });
});
