/**
 * A kill between a commit's branch update and its index write (found by the crash-under-load
 * test): the commit stands, but a real git reading the folder sees the previous commit's index as
 * staged changes. Recovery at start rebuilds the index from HEAD, so `git status` is clean.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { serving } from '../../src/index.js';
import { makeShed, type Shed } from '../helpers/shed.js';
import { git as realGit } from '../vcs/helpers.js';

let shed: Shed;
afterEach(() => shed?.cleanup());
// Real git on a zone's work tree, its repository beside it (test/vcs/helpers.ts).
const git = (data: string, ...args: string[]) => realGit(data, ...args).trim();

it('recovery rebuilds an index left at the previous commit', async () => {
  shed = makeShed();
  expect((await shed.call('shed_create_file', { zone: 'documents', path: 'a.txt', content: 'a\n' })).success).toBe(true);
  const repo = shed.zonePath('documents');
  const gitdir = path.join(repo, '..', 'git');
  // The index files as they were before the next commit (what a kill right after the ref update leaves).
  const saved = fs.readdirSync(gitdir).filter((n) => n === 'index' || n.startsWith('sharedindex.') || n === 'fileshed-index-head');
  const copies = new Map(saved.map((n) => [n, fs.readFileSync(path.join(gitdir, n))]));
  expect((await shed.call('shed_create_file', { zone: 'documents', path: 'b.txt', content: 'b\n' })).success).toBe(true);
  for (const n of fs.readdirSync(gitdir)) if (n === 'index' || n.startsWith('sharedindex.') || n === 'fileshed-index-head') fs.rmSync(path.join(gitdir, n));
  for (const [n, bytes] of copies) fs.writeFileSync(path.join(gitdir, n), bytes);
  expect(git(repo, 'status', '--porcelain')).not.toBe(''); // b.txt: staged deletion + untracked

  const report = await serving.recoverStorage(shed.base);
  expect(report.commits).toEqual([]); // nothing to commit: the commit was made before the kill
  expect(git(repo, 'status', '--porcelain')).toBe('');
  expect(git(repo, 'log', '--format=%s')).not.toMatch(/Recovered/);
  git(repo, 'fsck', '--strict');
});
