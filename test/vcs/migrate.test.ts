/**
 * The move of an earlier version's repository (`data/.git`) to `git/` beside the zone (SPEC
 * section 4, vcs/migrate.ts): a trusted one moves with one rename, an untrusted one stays as user
 * data, and a process killed at any step leaves exactly one valid repository with its whole history.
 * Kill points: a child process runs the migration with a hook that SIGKILLs it after step N; then
 * random SIGKILLs while it walks a large repository. Everything is checked with the real git.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { prepareHome } from '../../src/core/services/vcs/migrate.js';
import { recoverStorage } from '../../src/core/services/recovery/recover.js';
import { makeShed, type Shed } from '../helpers/shed.js';
import { git, gitRun } from './helpers.js';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-migrate-child-'));
const bundle = path.join(work, 'migrate.mjs');
const child = path.join(work, 'child.mjs');
/** Each step of a move and where the one repository is when the process dies right after it. */
const STEPS: [string, 'data/.git' | 'git'][] = [
  ['checked', 'data/.git'],
  ['configured', 'data/.git'],
  ['moved', 'git'],
  ['marked', 'git'],
];

beforeAll(async () => {
  await build({ entryPoints: [path.resolve('src/core/services/vcs/migrate.ts')], bundle: true, platform: 'node', format: 'esm', outfile: bundle, logLevel: 'silent',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  fs.writeFileSync(
    child,
    `import { prepareHome } from ${JSON.stringify(bundle)};
const [home, killAt] = process.argv.slice(2);
const done = await prepareHome(home, { afterStep: (step) => { if (step === killAt) process.kill(process.pid, 'SIGKILL'); } });
process.stdout.write(JSON.stringify(done));
`,
  );
});
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

let bases: string[] = [];
let s: Shed | undefined;
afterEach(() => {
  for (const b of bases) fs.rmSync(b, { recursive: true, force: true });
  bases = [];
  s?.cleanup();
  s = undefined;
});

/** A storage base with alice's Documents in an earlier version's layout: `data/.git` made by a real git, `commits` commits. */
function oldLayout(commits = 3, filesPerCommit = 2): { base: string; home: string; data: string; head: string } {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-migrate-')));
  bases.push(base);
  const home = path.join(base, 'users', 'alice');
  const data = path.join(home, 'Documents', 'data');
  fs.mkdirSync(data, { recursive: true });
  git(data, 'init', '-q', '-b', 'main');
  for (let c = 0; c < commits; c++) {
    for (let f = 0; f < filesPerCommit; f++) fs.writeFileSync(path.join(data, `f${c}-${f}.txt`), `commit ${c} file ${f}\n`);
    git(data, 'add', '-A');
    git(data, '-c', 'user.name=Alice', '-c', 'user.email=alice@fileshed', 'commit', '-q', '-m', `change ${c}`);
  }
  return { base, home, data, head: git(data, 'rev-parse', 'HEAD').trim() };
}

/** The repository at `gitdir` (work tree `data`) is valid and holds the history `head`. */
function expectRepo(gitdir: string, data: string, head: string, commits: number): void {
  const run = (...args: string[]) => gitRun(data, `--git-dir=${gitdir}`, `--work-tree=${data}`, ...args);
  const fsck = run('fsck', '--strict', '--no-progress', '--no-dangling');
  expect(fsck.status, fsck.stdout + fsck.stderr).toBe(0);
  expect(run('rev-parse', 'HEAD').stdout.trim()).toBe(head);
  expect(Number(run('rev-list', '--count', 'HEAD').stdout.trim())).toBe(commits);
  expect(run('status', '--porcelain').stdout).toBe('');
}

function runChild(home: string, killAt: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }> {
  const p = spawn(process.execPath, [child, home, killAt], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  p.stdout.on('data', (d) => (out += d));
  return new Promise((resolve) => p.on('exit', (code, signal) => resolve({ code, signal, out })));
}

const marker = (home: string) => path.join(home, 'Storage', 'locks', '.shed-layout');

describe('an earlier version\'s repository moves to git/ beside data/', () => {
  it('a trusted data/.git moves with its whole history; its config becomes Fileshed\'s and its hooks go; a real git reads it there', async () => {
    const o = oldLayout();
    fs.writeFileSync(path.join(o.data, '.git', 'config'), '[core]\n\tbare = false\n\tfsmonitor = touch /tmp/owned-by-config\n');
    const done = await prepareHome(o.home);
    expect(done).toEqual([{ zone: 'Documents', outcome: 'moved', space: 'users/alice' }]);
    const gitdir = path.join(o.home, 'Documents', 'git');
    expect(fs.existsSync(path.join(o.data, '.git'))).toBe(false);
    expectRepo(gitdir, o.data, o.head, 3);
    expect(fs.readFileSync(path.join(gitdir, 'config'), 'utf8')).not.toContain('fsmonitor');
    expect(fs.existsSync(path.join(gitdir, 'hooks'))).toBe(false);
    expect(fs.readFileSync(marker(o.home), 'utf8')).toBe('git-beside-data\n');
  });

  it.each(STEPS)('killed right after the step "%s": exactly one valid repository (at %s), the whole history; the next run finishes the move', async (step, where) => {
    const o = oldLayout();
    const gitdir = path.join(o.home, 'Documents', 'git');
    const killed = await runChild(o.home, step);
    expect(killed.signal).toBe('SIGKILL');
    const old = fs.existsSync(path.join(o.data, '.git'));
    const moved = fs.existsSync(gitdir);
    expect(old !== moved, `one repository, not ${old && moved ? 'two' : 'none'} (killed after ${step})`).toBe(true);
    expect(moved ? 'git' : 'data/.git').toBe(where);
    expectRepo(moved ? gitdir : path.join(o.data, '.git'), o.data, o.head, 3);
    expect(fs.existsSync(marker(o.home))).toBe(step === 'marked');
    const again = await runChild(o.home, 'never');
    expect(again.code).toBe(0);
    expect(fs.existsSync(path.join(o.data, '.git'))).toBe(false);
    expectRepo(gitdir, o.data, o.head, 3);
    expect(fs.existsSync(marker(o.home))).toBe(true);
    expect(fs.readdirSync(path.join(o.home, 'Documents')).sort()).toEqual(['data', 'git']);
  }, 30_000);

  it('killed at random moments while it checks a large repository: never two halves, never a lost history', async () => {
    const o = oldLayout(40, 50); // 2,000 files, ~2,100 objects to walk before the move
    const gitdir = path.join(o.home, 'Documents', 'git');
    let moves = 0;
    for (let round = 0; round < 8; round++) {
      const p = spawn(process.execPath, [child, o.home, 'never'], { stdio: ['ignore', 'ignore', 'inherit'] });
      // Listened for from the start: a child that finishes before the kill has already exited.
      const exited = new Promise((r) => p.on('exit', r));
      await new Promise((r) => setTimeout(r, 20 + Math.floor(Math.random() * 120)));
      p.kill('SIGKILL');
      await exited;
      const old = fs.existsSync(path.join(o.data, '.git'));
      const moved = fs.existsSync(gitdir);
      expect(old !== moved).toBe(true);
      expectRepo(moved ? gitdir : path.join(o.data, '.git'), o.data, o.head, 40);
      if (moved) moves++;
      if (moved) break;
    }
    const again = await runChild(o.home, 'never');
    expect(again.code).toBe(0);
    expectRepo(gitdir, o.data, o.head, 40);
    expect(moves).toBeLessThanOrEqual(1);
  }, 120_000);

  it('the first modifying call moves it and says so; recovery at start does the same for every space', async () => {
    const o = oldLayout();
    s = makeShed({ storage_base_path: o.base });
    const r = await s.call('shed_create_file', { zone: 'documents', path: 'new.txt', content: 'n\n' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.message).toContain('version history of Documents moved out of the zone');
    expectRepo(path.join(o.home, 'Documents', 'git'), o.data, git(o.data, 'rev-parse', 'HEAD').trim(), 4);
    const again = await s.call('shed_create_file', { zone: 'documents', path: 'two.txt', content: '2\n' });
    expect(again.message).not.toContain('moved');

    const b = oldLayout();
    const report = await recoverStorage(b.base);
    expect(report.migrations).toEqual([{ zone: 'Documents', outcome: 'moved', space: 'users/alice' }]);
    expectRepo(path.join(b.home, 'Documents', 'git'), b.data, b.head, 3);
  });
});

describe('an untrusted data/.git is left as user data; a new history starts', () => {
  /** A second user whose repository (new layout) the attacker's links point at. */
  function victim(base: string): { gitdir: string; refs: string } {
    const data = path.join(base, 'users', 'bob', 'Documents', 'data');
    fs.mkdirSync(data, { recursive: true });
    const gitdir = path.join(base, 'users', 'bob', 'Documents', 'git');
    fs.writeFileSync(path.join(data, 'diary.txt'), 'dear diary\n');
    gitRun(data, `--git-dir=${gitdir}`, 'init', '-q', '-b', 'main');
    gitRun(data, `--git-dir=${gitdir}`, `--work-tree=${data}`, 'add', '-A');
    gitRun(data, `--git-dir=${gitdir}`, `--work-tree=${data}`, '-c', 'user.name=Bob', '-c', 'user.email=b@x', 'commit', '-q', '-m', 'bob');
    return { gitdir, refs: fs.readFileSync(path.join(gitdir, 'refs/heads/main'), 'utf8') };
  }

  const plants: [string, (dotgit: string, bob: string) => void][] = [
    ['objects is a link to another user\'s objects', (g, bob) => {
      fs.rmSync(path.join(g, 'objects'), { recursive: true });
      fs.symlinkSync(path.join(bob, 'objects'), path.join(g, 'objects'));
    }],
    ['a ref is a (relative) link to another user\'s branch', (g, bob) => {
      fs.rmSync(path.join(g, 'refs/heads/main'));
      fs.symlinkSync(path.relative(path.join(g, 'refs/heads'), path.join(bob, 'refs/heads/main')), path.join(g, 'refs/heads/main'));
    }],
    ['HEAD is a link', (g, bob) => {
      fs.rmSync(path.join(g, 'HEAD'));
      fs.symlinkSync(path.join(bob, 'HEAD'), path.join(g, 'HEAD'));
    }],
    ['packed-refs is a link', (g, bob) => fs.symlinkSync(path.join(bob, 'refs/heads/main'), path.join(g, 'packed-refs'))],
    ['objects/info/alternates names another repository', (g, bob) => fs.writeFileSync(path.join(g, 'objects/info/alternates'), `${path.join(bob, 'objects')}\n`)],
    ['a FIFO inside', (g) => expect(spawnSync('mkfifo', [path.join(g, 'refs', 'fifo')]).status).toBe(0)],
    ['the branch points at a missing commit', (g) => fs.writeFileSync(path.join(g, 'refs/heads/main'), `${'1'.repeat(40)}\n`)],
    ['.git is a link', (g, bob) => {
      fs.rmSync(g, { recursive: true });
      fs.symlinkSync(bob, g);
    }],
  ];

  it.each(plants)('%s: not trusted, left in place, never read; the victim\'s repository unchanged', async (_name, plant) => {
    const o = oldLayout();
    const bob = victim(o.base);
    plant(path.join(o.data, '.git'), bob.gitdir);
    const before = fs.lstatSync(path.join(o.data, '.git'));
    const done = await prepareHome(o.home);
    expect(done).toHaveLength(1);
    expect(done[0]!.outcome).toBe('untrusted');
    expect(done[0]!.reason).toBeTruthy();
    expect(fs.lstatSync(path.join(o.data, '.git')).ino).toBe(before.ino);
    expect(fs.existsSync(path.join(o.home, 'Documents', 'git'))).toBe(false);
    expect(fs.existsSync(marker(o.home))).toBe(true);
    // The first commit starts a new history from the current files; bob's repository is untouched.
    s = makeShed({ storage_base_path: o.base });
    const r = await s.call('shed_create_file', { zone: 'documents', path: 'after.txt', content: 'a\n' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    const mine = path.join(o.home, 'Documents', 'git');
    const log = gitRun(o.data, `--git-dir=${mine}`, `--work-tree=${o.data}`, 'log', '--format=%s');
    expect(log.stdout.trim().split('\n')).toHaveLength(1);
    const tree = gitRun(o.data, `--git-dir=${mine}`, 'ls-tree', '-r', '--name-only', 'HEAD').stdout;
    expect(tree).toContain('after.txt');
    expect(tree).not.toContain('diary.txt');
    expect(fs.readFileSync(path.join(bob.gitdir, 'refs/heads/main'), 'utf8')).toBe(bob.refs);
    const fsck = gitRun(bob.gitdir, `--git-dir=${bob.gitdir}`, 'fsck', '--strict', '--no-dangling');
    expect(fsck.status, fsck.stderr).toBe(0);
  });

  it('killed right after its check: nothing changed; the next run leaves it too', async () => {
    const o = oldLayout();
    fs.symlinkSync('/etc/passwd', path.join(o.data, '.git', 'description-link'));
    expect((await runChild(o.home, 'checked')).signal).toBe('SIGKILL');
    expect(fs.existsSync(marker(o.home))).toBe(false);
    expect(fs.existsSync(path.join(o.home, 'Documents', 'git'))).toBe(false);
    const again = await runChild(o.home, 'never');
    expect(JSON.parse(again.out)[0].outcome).toBe('untrusted');
    expect(fs.existsSync(path.join(o.data, '.git', 'description-link'))).toBe(true);
    expect(fs.existsSync(marker(o.home))).toBe(true);
  });

  it('a .git made after this version took over the space is never taken for the repository', async () => {
    s = makeShed();
    expect((await s.call('shed_create_file', { zone: 'storage', path: 'x.txt', content: 'x' })).success).toBe(true); // the space gets its marker
    // A well-formed repository the user made (a whole history of their own), at a moment the zone has no history yet.
    const data = s.zonePath('documents');
    fs.mkdirSync(data, { recursive: true });
    git(data, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(data, 'forged.txt'), 'forged\n');
    git(data, 'add', '-A');
    git(data, '-c', 'user.name=Bob', '-c', 'user.email=bob@fileshed', 'commit', '-q', '-m', 'forged by someone else');
    const r = await s.call('shed_create_file', { zone: 'documents', path: 'real.txt', content: 'r\n' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.message).not.toContain('history');
    const mine = path.join(data, '..', 'git');
    const subjects = gitRun(data, `--git-dir=${mine}`, 'log', '--format=%s').stdout.trim().split('\n');
    expect(subjects).toEqual(['Create real.txt']);
    expect(fs.existsSync(path.join(data, '.git', 'HEAD'))).toBe(true);
  });
});
