import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureRepo, repoFor } from '../../src/core/services/vcs/repo.js';
import { recordChange } from '../../src/core/services/vcs/index.js';
import { makeShed, mod, type Shed } from '../helpers/shed.js';
import { ALICE, fsckClean, git, GIT_ENV, put, tempZone } from './helpers.js';
import { execFileSync } from 'node:child_process';

let s: Shed | undefined;
let z: ReturnType<typeof tempZone> | undefined;
afterEach(() => {
  s?.cleanup();
  z?.cleanup();
  s = undefined;
  z = undefined;
});

describe('the repository lives at git/ beside data/, out of every command\'s reach', () => {
  it('reading or listing Documents creates no repository; the first modifying call does, beside data/', async () => {
    s = makeShed();
    await s.call('shed_tree', { zone: 'documents' });
    expect(fs.existsSync(path.join(s.zonePath('documents'), '..', 'git'))).toBe(false);
    await s.call('shed_create_file', { zone: 'documents', path: 'a.txt', content: 'a' });
    expect(fs.statSync(path.join(s.zonePath('documents'), '..', 'git')).isDirectory()).toBe(true);
    expect(fs.existsSync(s.zonePath('documents', '.git'))).toBe(false);
    expect(git(s.zonePath('documents'), 'log', '--format=%s').trim()).toBe('Create a.txt');
  });

  it('the repository is standard, on main, with no hooks and a config that only describes it', async () => {
    z = tempZone();
    await ensureRepo(repoFor(z));
    const gitdir = path.join(path.dirname(z.root), 'git');
    expect(repoFor(z).gitdir).toBe(gitdir);
    expect(fs.readFileSync(path.join(gitdir, 'HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
    expect(fs.existsSync(path.join(gitdir, 'hooks'))).toBe(false);
    const config = fs.readFileSync(path.join(gitdir, 'config'), 'utf8');
    expect(config).toContain('filemode = true');
    expect(config).not.toMatch(/ignorecase|symlinks|hooksPath|fsmonitor|pager|editor/);
    // No leftover of the atomic creation beside the zone.
    expect(fs.readdirSync(path.dirname(z.root)).filter((n) => n.startsWith('.git-init-'))).toEqual([]);
    // A real git reads it the way the layout says (SPEC section 4).
    expect(execFileSync('git', [`--git-dir=${gitdir}`, `--work-tree=${z.root}`, 'rev-parse', '--git-dir'], { env: GIT_ENV, encoding: 'utf8' }).trim()).toBe(gitdir);
    expect(fs.existsSync(path.join(z.root, '.git'))).toBe(false);
  });

  it('concurrent creators end with one repository', async () => {
    z = tempZone();
    await Promise.all(Array.from({ length: 5 }, () => ensureRepo(repoFor(z!))));
    expect(fs.existsSync(path.join(path.dirname(z.root), 'git', 'HEAD'))).toBe(true);
    expect(fs.readdirSync(path.dirname(z.root)).filter((n) => n.startsWith('.git-init-'))).toEqual([]);
  });

  it('a git/ that is a link is never followed: the change is kept, the commit is refused with a warning', async () => {
    z = tempZone();
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-elsewhere-'));
    try {
      fs.symlinkSync(elsewhere, path.join(path.dirname(z.root), 'git'));
      put(z.root, 'a.txt', 'a');
      const r = await recordChange(z, { paths: ['a.txt'], summary: 'x' }, ALICE, undefined);
      expect(r.commit).toBeUndefined();
      expect(r.warning).toMatch(/saved but not recorded.*symbolic link/);
      expect(fs.readdirSync(elsewhere)).toEqual([]);
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('a git/ folder left without HEAD is made usable', async () => {
    z = tempZone();
    fs.mkdirSync(path.join(path.dirname(z.root), 'git'));
    put(z.root, 'a.txt', 'a');
    const r = await recordChange(z, { paths: ['a.txt'], summary: 'first' }, ALICE, undefined);
    expect(r.commit).toMatch(/^[0-9a-f]{7}$/);
    expect(fsckClean(z.root).ok).toBe(true);
    expect(git(z.root, 'log', '--format=%s').trim()).toBe('first');
  });

  it('a storage base reached through a link works: server state is checked against real paths', async () => {
    const real = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-real-base-')));
    const alias = `${real}-alias`;
    fs.symlinkSync(real, alias);
    try {
      s = makeShed({ storage_base_path: alias });
      for (const content of ['one\n', 'two\n']) {
        const r = await s.call('shed_patch_text', { zone: 'documents', path: 'a.txt', content, overwrite: true });
        expect(r.data?.commit, JSON.stringify(r)).toMatch(/^[0-9a-f]{7}$/);
      }
      const log = await s.call('shed_exec', { zone: 'documents', cmd: 'git', args: ['log', '--oneline'] });
      expect(String(log.data?.stdout).trim().split('\n')).toHaveLength(2);
      await s.call('shed_stats', {});
      const usage = mod.admin.usage.read(alias);
      expect(usage.find((u) => u.kind === 'user' && u.id === 'alice')?.zones.Documents?.files).toBe(1);
    } finally {
      fs.rmSync(alias, { force: true });
      fs.rmSync(real, { recursive: true, force: true });
    }
  });

  it('a .git the user makes inside data/ is user data: never read as the repository, never committed', async () => {
    z = tempZone();
    put(z.root, 'a.txt', 'a');
    put(z.root, '.git/HEAD', 'ref: refs/heads/evil\n');
    put(z.root, '.git/config', '[core]\n\tfsmonitor = touch /tmp/owned\n');
    const r = await recordChange(z, { paths: [''], summary: 'first' }, ALICE, undefined);
    expect(r.commit).toMatch(/^[0-9a-f]{7}$/);
    expect(git(z.root, 'ls-tree', '-r', '--name-only', 'HEAD').trim()).toBe('a.txt');
    expect(git(z.root, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
    expect(fs.readFileSync(path.join(z.root, '.git/HEAD'), 'utf8')).toBe('ref: refs/heads/evil\n');
    expect(fsckClean(z.root).ok).toBe(true);
  });
});
