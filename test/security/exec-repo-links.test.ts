/**
 * The repository of Documents and of group spaces is not in the zone any more (SPEC sections 4-5):
 * a `.git` a user makes inside `data/` is only user data. The attacks of the third review, in every
 * sandbox mode:
 * - a tar of symbolic links extracted as `.git` (objects, refs, HEAD, packed-refs pointing at
 *   another user's and a group's repository; relative and absolute), then `git show`, `git log`, a
 *   write and `git restore`: nothing of the others comes out, nothing is committed into their
 *   repositories (their refs and `git fsck` unchanged), the attacker's own history goes on;
 * - the same links in a zip for shed_unzip: refused before anything is written;
 * - `cp -r src/. .` with a forged `src/.git` (a branch at a missing commit): the history stays whole
 *   and every later git call works.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, mod, type Result, type Shed } from '../helpers/shed.js';
import { fsckClean, git, repoOf } from '../vcs/helpers.js';
import { buildZip, S_IFLNK } from '../archive/zipbuilder.js';
import { MODES } from './exec-harness.js';

const DIARY = 'dear diary: only bob may read this\n';
const PLAN = 'team plan: only the team may read this\n';

describe.each(MODES)('%s mode', (mode) => {
  let s: Shed;
  let docs: string;
  let victims: { name: string; data: string; refs: string }[];

  beforeEach(async () => {
    s = makeShed({ sandbox: mode });
    await mod.admin.groups.add(s.base, 'team', 'Team');
    await mod.admin.groups.addMember(s.base, 'team', 'bob');
    const ok = (r: Result) => expect(r.success, JSON.stringify(r.error)).toBe(true);
    ok(await s.call('shed_create_file', { zone: 'documents', path: 'diary.txt', content: DIARY }, { user: 'bob' }));
    ok(await s.call('shed_create_file', { zone: 'group', group: 'team', path: 'plan.txt', content: PLAN }, { user: 'bob' }));
    ok(await s.call('shed_create_file', { zone: 'documents', path: 'a.txt', content: 'one\n' }));
    ok(await s.call('shed_patch_text', { zone: 'documents', path: 'a.txt', content: 'two\n', overwrite: true }));
    docs = s.zonePath('documents');
    victims = [s.zonePath('documents', '', 'bob'), path.join(s.base, 'groups', 'team', 'data')].map((data) => ({
      name: data,
      data,
      refs: fs.readFileSync(path.join(repoOf(data), 'refs', 'heads', 'main'), 'utf8'),
    }));
  });
  afterEach(() => s.cleanup());

  const gitCall = (...args: string[]) => s.call('shed_exec', { zone: 'documents', cmd: 'git', args });

  function expectNothingOfTheOthers(results: Result[]): void {
    for (const r of results) {
      const text = JSON.stringify(r);
      expect(text).not.toContain('dear diary');
      expect(text).not.toContain('team plan');
    }
    for (const v of victims) {
      expect(fs.readFileSync(path.join(repoOf(v.data), 'refs', 'heads', 'main'), 'utf8'), `${v.name}: branch moved`).toBe(v.refs);
      expect(git(v.data, 'rev-list', '--count', 'HEAD').trim(), `${v.name}: a commit was added`).toBe('1');
      expect(fsckClean(v.data).ok).toBe(true);
    }
  }

  it('a tar of links extracted as .git (relative and absolute, to another user\'s and a group\'s repository) is never read as a repository', async () => {
    const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-tar-'));
    try {
      const bobGit = repoOf(s.zonePath('documents', '', 'bob'));
      const teamGit = repoOf(path.join(s.base, 'groups', 'team', 'data'));
      fs.mkdirSync(path.join(stage, '.git', 'refs', 'heads'), { recursive: true });
      // As the review planted them: relative to alice's Documents/data/.git, and absolute.
      const fromDotGit = (to: string) => path.relative(path.join(docs, '.git'), to);
      fs.symlinkSync(fromDotGit(path.join(bobGit, 'objects')), path.join(stage, '.git', 'objects'));
      fs.symlinkSync(fromDotGit(path.join(bobGit, 'HEAD')), path.join(stage, '.git', 'HEAD'));
      fs.symlinkSync(path.join(bobGit, 'packed-refs'), path.join(stage, '.git', 'packed-refs'));
      fs.symlinkSync(path.join(teamGit, 'refs', 'heads', 'main'), path.join(stage, '.git', 'refs', 'heads', 'main'));
      fs.symlinkSync(path.join(teamGit, 'objects'), path.join(stage, '.git', 'team-objects'));
      execFileSync('tar', ['-cf', path.join(docs, 'links.tar'), '.git'], { cwd: stage });
    } finally {
      fs.rmSync(stage, { recursive: true, force: true });
    }
    const first = git(docs, 'rev-list', '--max-parents=0', 'HEAD').trim();
    const start = git(docs, 'rev-parse', 'HEAD').trim();
    const results: Result[] = [];
    const untar = await s.call('shed_exec', { zone: 'documents', cmd: 'tar', args: ['-xf', 'links.tar'] });
    results.push(untar);
    // Links leading out of the zone are removed after the command, in .git too (the sweep covers everything).
    for (const name of ['objects', 'HEAD', 'packed-refs', 'refs/heads/main', 'team-objects']) {
      const st = fs.lstatSync(path.join(docs, '.git', name), { throwIfNoEntry: false });
      expect(st?.isSymbolicLink() ?? false, `.git/${name} left as a link leading out`).toBe(false);
    }
    for (const args of [['show', 'HEAD:diary.txt'], ['show', 'main:plan.txt'], ['log', '-p'], ['show', 'HEAD~1:a.txt']]) results.push(await gitCall(...args));
    const log = await gitCall('log', '--format=%s');
    results.push(log);
    const write = await s.call('shed_create_file', { zone: 'documents', path: 'b.txt', content: 'b\n' });
    results.push(write);
    expect(write.data?.commit, JSON.stringify(write)).toMatch(/^[0-9a-f]{7}$/);
    // a.txt as alice first wrote it.
    const restore = await gitCall('restore', `--source=${first.slice(0, 7)}`, '--', 'a.txt');
    results.push(restore);
    expect(restore.data?.commit, JSON.stringify(restore)).toMatch(/^[0-9a-f]{7}$/);
    expect(fs.readFileSync(path.join(docs, 'a.txt'), 'utf8')).toBe('one\n');
    expectNothingOfTheOthers(results);
    // Alice's own history went on from where it was, with her commits only; checked by a real git where it lives.
    expect(git(docs, 'merge-base', '--is-ancestor', start, 'HEAD')).toBe('');
    expect(new Set(git(docs, 'log', '--format=%ae').trim().split('\n'))).toEqual(new Set(['alice@fileshed']));
    expect(git(docs, 'ls-tree', '-r', '--name-only', 'HEAD').trim().split('\n')).toEqual(expect.arrayContaining(['a.txt', 'b.txt']));
    expect(git(docs, 'ls-tree', '-r', '--name-only', 'HEAD')).not.toMatch(/diary|plan/);
    expect(fsckClean(docs).ok).toBe(true);
  }, 60_000);

  it('shed_unzip of the same links, or of a .git folder, into Documents is refused before anything is written', async () => {
    fs.mkdirSync(s.zonePath('storage'), { recursive: true });
    fs.writeFileSync(path.join(s.zonePath('storage'), 'links.zip'), buildZip([{ name: '.git/objects', data: '../../../../bob/Documents/git/objects', mode: S_IFLNK }]));
    const links = await s.call('shed_unzip', { zone: 'documents', src: 'links.zip', src_zone: 'storage' });
    expect(links.error?.code, JSON.stringify(links)).toMatch(/PATH_ESCAPE|PROTECTED_PATH/);
    fs.writeFileSync(path.join(s.zonePath('storage'), 'dotgit.zip'), buildZip([{ name: '.git/HEAD', data: 'ref: refs/heads/main\n' }]));
    const dotgit = await s.call('shed_unzip', { zone: 'documents', src: 'dotgit.zip', src_zone: 'storage' });
    expect(dotgit.error?.code).toBe('PROTECTED_PATH');
    expect(fs.existsSync(path.join(docs, '.git'))).toBe(false);
    expectNothingOfTheOthers([links, dotgit]);
  });

  it('cp -r src/. . with a forged src/.git (branch at a missing commit) leaves the history whole; every later git call works', async () => {
    const forged = path.join(docs, 'src', '.git');
    fs.mkdirSync(path.join(forged, 'refs', 'heads'), { recursive: true });
    fs.mkdirSync(path.join(forged, 'objects'), { recursive: true });
    fs.writeFileSync(path.join(forged, 'HEAD'), 'ref: refs/heads/main\n');
    fs.writeFileSync(path.join(forged, 'refs', 'heads', 'main'), `${'0'.repeat(39)}1\n`);
    fs.writeFileSync(path.join(docs, 'src', 'x.txt'), 'x\n');
    const before = git(docs, 'rev-parse', 'HEAD').trim();
    const cp = await s.call('shed_exec', { zone: 'documents', cmd: 'cp', args: ['-r', 'src/.', '.'] });
    expect(cp.success, JSON.stringify(cp.error)).toBe(true);
    expect(fs.readFileSync(path.join(docs, '.git', 'refs', 'heads', 'main'), 'utf8')).toBe(`${'0'.repeat(39)}1\n`); // kept as the user's data
    const results: Result[] = [cp];
    for (const args of [['log', '--oneline'], ['status'], ['show', 'HEAD:x.txt'], ['diff', 'HEAD~1']]) {
      const r = await gitCall(...args);
      results.push(r);
      expect(r.success, `git ${args.join(' ')}: ${JSON.stringify(r.error)}`).toBe(true);
      expect(r.data?.returncode).toBe(0);
    }
    const write = await s.call('shed_create_file', { zone: 'documents', path: 'later.txt', content: 'l\n' });
    expect(write.data?.commit).toMatch(/^[0-9a-f]{7}$/);
    // The history went on from where it was: two commits of alice before, the cp (x.txt), the write.
    expect(git(docs, 'rev-list', '--count', 'HEAD').trim()).toBe('4');
    expect(git(docs, 'rev-parse', 'HEAD~2').trim()).toBe(before);
    expect(git(docs, 'ls-tree', '-r', '--name-only', 'HEAD').trim().split('\n').sort()).toEqual(['a.txt', 'later.txt', 'x.txt']);
    expect(fsckClean(docs).ok).toBe(true);
    expectNothingOfTheOthers(results);
  }, 60_000);
});
