import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ensureRepo, repoFor } from '../../src/core/vcs/repo.js';
import { recordChange } from '../../src/core/vcs/index.js';
import { makeShed, type Shed } from '../helpers/shed.js';
import { ALICE, fsckClean, git, put, tempZone } from './helpers.js';

let s: Shed | undefined;
let z: ReturnType<typeof tempZone> | undefined;
afterEach(() => {
  s?.cleanup();
  z?.cleanup();
  s = undefined;
  z = undefined;
});

describe('repositories are created on first use', () => {
  it('reading or listing Documents creates no repository; the first change does', async () => {
    s = makeShed();
    await s.call('shed_tree', { zone: 'documents' });
    expect(fs.existsSync(s.zonePath('documents', '.git'))).toBe(false);
    await s.call('shed_create_file', { zone: 'documents', path: 'a.txt', content: 'a' });
    expect(fs.statSync(s.zonePath('documents', '.git')).isDirectory()).toBe(true);
  });

  it('the repository is standard, on main, with no hooks and a config that only describes it', async () => {
    z = tempZone();
    await ensureRepo(repoFor(z));
    const gitdir = path.join(z.root, '.git');
    expect(fs.readFileSync(path.join(gitdir, 'HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
    expect(fs.existsSync(path.join(gitdir, 'hooks'))).toBe(false);
    const config = fs.readFileSync(path.join(gitdir, 'config'), 'utf8');
    expect(config).toContain('filemode = true');
    expect(config).not.toMatch(/ignorecase|symlinks|hooksPath|fsmonitor|pager|editor/);
    // No leftover of the atomic creation beside the zone.
    expect(fs.readdirSync(path.dirname(z.root)).filter((n) => n.startsWith('.git-init-'))).toEqual([]);
    expect(git(z.root, 'rev-parse', '--git-dir').trim()).toBe('.git');
  });

  it('concurrent creators end with one repository', async () => {
    z = tempZone();
    await Promise.all(Array.from({ length: 5 }, () => ensureRepo(repoFor(z!))));
    expect(fs.existsSync(path.join(z.root, '.git', 'HEAD'))).toBe(true);
    expect(fs.readdirSync(path.dirname(z.root)).filter((n) => n.startsWith('.git-init-'))).toEqual([]);
  });

  it('a .git that is a link is never followed: the change is kept, the commit is refused with a warning', async () => {
    z = tempZone();
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-elsewhere-'));
    try {
      fs.symlinkSync(elsewhere, path.join(z.root, '.git'));
      put(z.root, 'a.txt', 'a');
      const r = await recordChange(z, { paths: ['a.txt'], summary: 'x' }, ALICE, undefined);
      expect(r.commit).toBeUndefined();
      expect(r.warning).toMatch(/saved but not recorded.*damaged/);
      expect(fs.readdirSync(elsewhere)).toEqual([]);
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('a .git folder left without HEAD (interrupted foreign init) is made usable', async () => {
    z = tempZone();
    fs.mkdirSync(path.join(z.root, '.git'));
    put(z.root, 'a.txt', 'a');
    const r = await recordChange(z, { paths: ['a.txt'], summary: 'first' }, ALICE, undefined);
    expect(r.commit).toMatch(/^[0-9a-f]{7}$/);
    expect(fsckClean(z.root).ok).toBe(true);
    expect(git(z.root, 'log', '--format=%s').trim()).toBe('first');
  });
});
