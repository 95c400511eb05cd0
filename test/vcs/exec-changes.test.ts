/**
 * shed_exec in Documents finds what a command changed from the folders the quota watch saw change
 *, not from two full snapshots. The commit must be exactly what a full comparison
 * gives: after each command, real `git status` is clean and the commit lists exactly the changed paths.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { git } from './helpers.js';

let s: Shed;
afterEach(() => s?.cleanup());

const docs = (rel = '') => s.zonePath('documents', rel);

async function setUp(mode: string): Promise<void> {
  s = makeShed({ sandbox: mode });
  const put = (rel: string, text: string) => s.call('shed_create_file', { zone: 'documents', path: rel, content: text });
  await put('a/b/c/d/e/deep.txt', 'deep\n');
  await put('x/one.txt', 'one\n');
  await put('gone/p/q.txt', 'q\n');
  await put('gone/r.txt', 'r\n');
  await put('top.txt', 'top\n');
  await put('f', 'a file that becomes a folder\n');
}

async function exec(cmd: string, args: string[], extra: Record<string, unknown> = {}) {
  const r = await s.call('shed_exec', { zone: 'documents', cmd, args, ...extra });
  expect(r.success, JSON.stringify(r.error)).toBe(true);
  expect(r.data!.returncode, String(r.data!.stderr)).toBe(0);
  return r;
}

/** The last commit's changes as "A path" / "M path" / "D path", sorted; and the worktree is clean. */
function lastCommit(): string[] {
  expect(git(docs(), 'status', '--porcelain'), 'everything the command did is committed').toBe('');
  return git(docs(), 'show', '--name-status', '--format=', '--no-renames', 'HEAD').trim().split('\n').map((l) => l.replace('\t', ' ')).sort();
}

describe.each(['validated', 'bwrap'])('sandbox %s', (mode) => {
  it('a change deep in the tree', async () => {
    await setUp(mode);
    await exec('sed', ['-i', 's/deep/DEEP/', 'a/b/c/d/e/deep.txt']);
    expect(lastCommit()).toEqual(['M a/b/c/d/e/deep.txt']);
  });

  it('a rename across folders, into a new deep folder', async () => {
    await setUp(mode);
    await exec('mkdir', ['-p', 'y/z']);
    await exec('mv', ['x/one.txt', 'y/z/one.txt']);
    expect(lastCommit()).toEqual(['A y/z/one.txt', 'D x/one.txt']);
  });

  it('a deleted folder with subfolders', async () => {
    await setUp(mode);
    await exec('rm', ['-r', 'gone']);
    expect(lastCommit()).toEqual(['D gone/p/q.txt', 'D gone/r.txt']);
  });

  it('a copied folder tree, a file replaced by a folder, and cp -p (same mtime)', async () => {
    await setUp(mode);
    await exec('cp', ['-r', 'a', 'copy']);
    expect(lastCommit()).toEqual(['A copy/b/c/d/e/deep.txt']);
    await exec('rm', ['f']);
    await exec('mkdir', ['-p', 'f/inside']);
    await exec('cp', ['top.txt', 'f/inside/t.txt']);
    expect(lastCommit()).toEqual(['A f/inside/t.txt']);
    fs.writeFileSync(docs('src.txt'), 'same size A\n');
    fs.utimesSync(docs('src.txt'), new Date('2020-01-01'), new Date('2020-01-01'));
    await exec('cp', ['-p', 'src.txt', 'top.txt']); // top.txt: other bytes, an old mtime
    expect(lastCommit()).toEqual(['A src.txt', 'M top.txt']);
  });

  it('a file changed by another process while the command runs is committed too', async () => {
    await setUp(mode);
    const timer = setTimeout(() => fs.writeFileSync(docs('a/b/c/d/e/deep.txt'), 'changed meanwhile\n'), 150);
    await exec('sleep', ['0.5']);
    clearTimeout(timer);
    expect(lastCommit()).toEqual(['M a/b/c/d/e/deep.txt']);
  });

  it('a file rewritten with the same size right after the previous call is still seen (racy timestamps)', async () => {
    await setUp(mode);
    await exec('cp', ['top.txt', 'x/one.txt']); // same size as before ("one\n" → "top\n")
    expect(lastCommit()).toEqual(['M x/one.txt']);
    await exec('sed', ['-i', 's/top/pot/', 'x/one.txt']);
    expect(lastCommit()).toEqual(['M x/one.txt']);
  });

  it('a command that changes nothing makes no commit', async () => {
    await setUp(mode);
    const head = git(docs(), 'rev-parse', 'HEAD');
    const r = await exec('ls', ['-R']);
    expect(r.data!.commit).toBeUndefined();
    expect(git(docs(), 'rev-parse', 'HEAD')).toBe(head);
  });
});

describe('the watch falls back to a full comparison when it cannot vouch', () => {
  it('a tree forgotten mid-command (usage cache invalidated) still gives the exact commit', async () => {
    await setUp('validated');
    const { invalidateTree } = await import('../../src/core/services/quota/usage.js');
    const root = path.join(s.base, 'users', 'alice', 'Documents', 'data');
    const timer = setTimeout(() => invalidateTree(root), 100);
    fs.writeFileSync(docs('late.txt'), 'x');
    await exec('sleep', ['0.3']);
    clearTimeout(timer);
    // The whole zone is compared with the last commit: late.txt (written before the call) comes in too.
    expect(lastCommit()).toEqual(['A late.txt']);
  });
});
