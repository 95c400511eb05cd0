/**
 * Links and special files planted inside a repository (`git/`, outside every zone: no command can
 * reach it, so this simulates any future way in): every read and write of server state goes through
 * fs/nofollow.ts, so each plant makes the access fail cleanly (IO_ERROR, or a commit warning) and
 * never shows another user's files, never commits into another user's repository.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Result, type Shed } from '../helpers/shed.js';
import { fsckClean, git, repoOf } from './helpers.js';

let s: Shed;
let mine: string;
let bobGit: string;
let bobRefs: string;
const DIARY = 'dear diary: bob only\n';

beforeEach(async () => {
  s = makeShed();
  expect((await s.call('shed_create_file', { zone: 'documents', path: 'diary.txt', content: DIARY }, { user: 'bob' })).success).toBe(true);
  expect((await s.call('shed_create_file', { zone: 'documents', path: 'a.txt', content: 'one\n' })).success).toBe(true);
  expect((await s.call('shed_patch_text', { zone: 'documents', path: 'a.txt', content: 'two\n', overwrite: true })).success).toBe(true);
  mine = repoOf(s.zonePath('documents'));
  bobGit = repoOf(s.zonePath('documents', '', 'bob'));
  bobRefs = fs.readFileSync(path.join(bobGit, 'refs/heads/main'), 'utf8');
});
afterEach(() => s.cleanup());

const gitCall = (...args: string[]) => s.call('shed_exec', { zone: 'documents', cmd: 'git', args });

/** Nothing of bob's came out, and his repository is as it was. */
function expectBobUntouched(results: Result[]): void {
  for (const r of results) expect(JSON.stringify(r)).not.toContain('dear diary');
  expect(fs.readFileSync(path.join(bobGit, 'refs/heads/main'), 'utf8')).toBe(bobRefs);
  expect(git(s.zonePath('documents', '', 'bob'), 'rev-list', '--count', 'HEAD').trim()).toBe('1');
  expect(fsckClean(s.zonePath('documents', '', 'bob')).ok).toBe(true);
}

/** A refusal that names the problem, or a write kept with a warning: never a success through the plant. */
function expectCleanFailure(r: Result): void {
  if (r.success) {
    expect(r.message, JSON.stringify(r)).toMatch(/not recorded in the Documents history/);
  } else {
    expect(r.error?.code, JSON.stringify(r.error)).toBe('IO_ERROR');
    expect(r.error?.message).toMatch(/symbolic link|special file/);
  }
}

const relLink = (from: string, to: string) => path.relative(path.dirname(from), to);

const plants: [string, () => void][] = [
  ['objects is a relative link to another user\'s objects', () => {
    fs.renameSync(path.join(mine, 'objects'), path.join(mine, 'objects.away'));
    fs.symlinkSync(relLink(path.join(mine, 'objects'), path.join(bobGit, 'objects')), path.join(mine, 'objects'));
  }],
  ['one objects/xx folder is an absolute link', () => {
    const head = git(s.zonePath('documents'), 'rev-parse', 'HEAD').trim();
    const dir = path.join(mine, 'objects', head.slice(0, 2));
    fs.rmSync(dir, { recursive: true });
    fs.symlinkSync(path.join(bobGit, 'objects', head.slice(0, 2)), dir);
  }],
  ['refs/heads/main is a link to another user\'s branch', () => {
    fs.rmSync(path.join(mine, 'refs/heads/main'));
    fs.symlinkSync(path.join(bobGit, 'refs/heads/main'), path.join(mine, 'refs/heads/main'));
  }],
  ['refs/heads is a relative folder link', () => {
    fs.rmSync(path.join(mine, 'refs/heads'), { recursive: true });
    fs.symlinkSync(relLink(path.join(mine, 'refs/heads'), path.join(bobGit, 'refs/heads')), path.join(mine, 'refs/heads'));
  }],
  ['HEAD is a link', () => {
    fs.rmSync(path.join(mine, 'HEAD'));
    fs.symlinkSync(path.join(bobGit, 'HEAD'), path.join(mine, 'HEAD'));
  }],
  ['packed-refs is a link (and the loose ref gone)', () => {
    fs.rmSync(path.join(mine, 'refs/heads/main'));
    fs.writeFileSync(path.join(bobGit, 'packed-refs'), `${bobRefs.trim()} refs/heads/main\n`);
    fs.symlinkSync(path.join(bobGit, 'packed-refs'), path.join(mine, 'packed-refs'));
  }],
  ['HEAD is a FIFO', () => {
    fs.rmSync(path.join(mine, 'HEAD'));
    expect(spawnSync('mkfifo', [path.join(mine, 'HEAD')]).status).toBe(0);
  }],
  ['git/ itself is a link to another user\'s repository', () => {
    fs.renameSync(mine, `${mine}.away`);
    fs.symlinkSync(bobGit, mine);
  }],
];

describe('a link or special file planted in git/: the access fails cleanly, nothing of another user leaks or changes', () => {
  it.each(plants)('%s', async (_name, plant) => {
    plant();
    const results: Result[] = [];
    for (const args of [['show', 'HEAD:diary.txt'], ['log', '--oneline'], ['show', 'HEAD~1:a.txt'], ['status']]) {
      const r = await gitCall(...args);
      results.push(r);
      expectCleanFailure(r);
    }
    const write = await s.call('shed_create_file', { zone: 'documents', path: 'b.txt', content: 'b\n' });
    results.push(write);
    expect(write.success, JSON.stringify(write.error)).toBe(true); // the file is written; only its commit is refused
    expectCleanFailure(write);
    const restore = await gitCall('restore', '--source=HEAD~1', '--', 'a.txt');
    results.push(restore);
    expectCleanFailure(restore);
    expect(fs.readFileSync(s.zonePath('documents', 'a.txt'), 'utf8')).toBe('two\n');
    expectBobUntouched(results);
  });

  it('the index or the config as links are never followed either; the history goes on', async () => {
    fs.writeFileSync(path.join(bobGit, 'config.keep'), fs.readFileSync(path.join(bobGit, 'config')));
    fs.rmSync(path.join(mine, 'index'));
    fs.symlinkSync(path.join(bobGit, 'index'), path.join(mine, 'index'));
    fs.rmSync(path.join(mine, 'config'));
    fs.symlinkSync(path.join(bobGit, 'config'), path.join(mine, 'config'));
    const bobIndex = fs.readFileSync(path.join(bobGit, 'index'));
    const write = await s.call('shed_create_file', { zone: 'documents', path: 'c.txt', content: 'c\n' });
    expect(write.success).toBe(true);
    expect(write.data?.commit).toMatch(/^[0-9a-f]{7}$/); // the commit stands; the index (a cache) is not written through the link
    const status = await gitCall('status');
    expectCleanFailure(status);
    expect(fs.readFileSync(path.join(bobGit, 'index')).equals(bobIndex)).toBe(true);
    expect(fs.readFileSync(path.join(bobGit, 'config'), 'utf8')).toBe(fs.readFileSync(path.join(bobGit, 'config.keep'), 'utf8'));
    expectBobUntouched([write, status]);
  });

  it('a lock file that is a link or a FIFO is taken over, never followed nor opened blocking', async () => {
    const bobLock = path.join(bobGit, 'fileshed.lock');
    fs.writeFileSync(bobLock, 'bob holds this');
    fs.symlinkSync(bobLock, path.join(mine, 'fileshed.lock'));
    const one = await s.call('shed_create_file', { zone: 'documents', path: 'd.txt', content: 'd\n' });
    expect(one.data?.commit, JSON.stringify(one)).toMatch(/^[0-9a-f]{7}$/);
    expect(fs.readFileSync(bobLock, 'utf8')).toBe('bob holds this');
    expect(spawnSync('mkfifo', [path.join(mine, 'fileshed.lock')]).status).toBe(0);
    const two = await s.call('shed_create_file', { zone: 'documents', path: 'e.txt', content: 'e\n' });
    expect(two.data?.commit, JSON.stringify(two)).toMatch(/^[0-9a-f]{7}$/);
    expectBobUntouched([one, two]);
  });
});
