import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';

let s: Shed;
beforeEach(() => {
  s = makeShed();
});
afterEach(() => s.cleanup());

function put(file: string, content: string | Buffer = 'x'): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

/** Writes a lock as another conversation of alice would (conv c1 is the caller's own). */
function lockOf(zoneDir: 'Storage' | 'Documents', rel: string, conv: string, lockedAt = new Date().toISOString()): string {
  const file = path.join(s.base, 'users', 'alice', zoneDir, 'locks', `${rel}.lock`);
  put(file, JSON.stringify({ user_id: 'alice', conv_id: conv, locked_at: lockedAt, path: rel }));
  return file;
}

describe('shed_delete', () => {
  it('deletes a file in Storage and reports it', async () => {
    put(s.zonePath('storage', 'notes/a.txt'), 'hello');
    put(s.zonePath('storage', 'notes/b.txt'), 'keep');
    const r = await s.call('shed_delete', { zone: 'storage', path: 'notes/a.txt' });
    expect(r.success).toBe(true);
    expect(r.data).toEqual({ zone: 'Storage', path: 'notes/a.txt', deleted: true, was_directory: false, files_removed: 1 });
    expect(r.message).toBe('Deleted Storage/notes/a.txt.');
    expect(fs.existsSync(s.zonePath('storage', 'notes/a.txt'))).toBe(false);
    expect(fs.readFileSync(s.zonePath('storage', 'notes/b.txt'), 'utf8')).toBe('keep');
  });

  it('deletes a folder recursively and counts the files removed', async () => {
    put(s.zonePath('storage', 'proj/a.txt'));
    put(s.zonePath('storage', 'proj/sub/b.txt'));
    put(s.zonePath('storage', 'proj/sub/deeper/c.txt'));
    fs.mkdirSync(s.zonePath('storage', 'proj/empty'));
    put(s.zonePath('storage', 'other.txt'), 'stays');
    const r = await s.call('shed_delete', { zone: 'storage', path: 'proj' });
    expect(r.success).toBe(true);
    expect(r.data).toMatchObject({ path: 'proj', was_directory: true, files_removed: 3 });
    expect(r.message).toContain('3 files');
    expect(fs.existsSync(s.zonePath('storage', 'proj'))).toBe(false);
    expect(fs.readFileSync(s.zonePath('storage', 'other.txt'), 'utf8')).toBe('stays');
  });

  it('deletes an empty folder', async () => {
    fs.mkdirSync(s.zonePath('storage', 'void'), { recursive: true });
    const r = await s.call('shed_delete', { zone: 'storage', path: 'void/' });
    expect(r.data).toMatchObject({ path: 'void', was_directory: true, files_removed: 0 });
    expect(r.message).toContain('empty folder');
    expect(fs.existsSync(s.zonePath('storage', 'void'))).toBe(false);
  });

  it('deletes in Uploads (its only allowed write), only in the calling conversation', async () => {
    put(s.zonePath('uploads', 'x.txt'), 'c1 upload');
    put(s.zonePath('uploads', 'x.txt', 'alice', 'c2'), 'c2 upload');
    const r = await s.call('shed_delete', { zone: 'uploads', path: 'x.txt' });
    expect(r.success).toBe(true);
    expect(r.data).toMatchObject({ zone: 'Uploads', path: 'x.txt', deleted: true });
    expect(fs.existsSync(s.zonePath('uploads', 'x.txt'))).toBe(false);
    expect(fs.readFileSync(s.zonePath('uploads', 'x.txt', 'alice', 'c2'), 'utf8')).toBe('c2 upload');
  });

  it('accepts the zone name in any case', async () => {
    put(s.zonePath('uploads', 'y.txt'));
    const r = await s.call('shed_delete', { zone: 'Uploads', path: 'y.txt' });
    expect(r.success).toBe(true);
    expect(fs.existsSync(s.zonePath('uploads', 'y.txt'))).toBe(false);
  });

  it('removes a symbolic link pointing outside the zone, never its target', async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-outside-'));
    try {
      const secret = path.join(outside, 'secret.txt');
      fs.writeFileSync(secret, 'precious');
      fs.mkdirSync(s.zonePath('storage'), { recursive: true });
      fs.symlinkSync(secret, s.zonePath('storage', 'link'));
      const r = await s.call('shed_delete', { zone: 'storage', path: 'link' });
      expect(r.success).toBe(true);
      expect(r.data).toMatchObject({ was_directory: false, files_removed: 1 });
      expect(r.message).toContain('link');
      expect(fs.lstatSync(s.zonePath('storage', 'link'), { throwIfNoEntry: false })).toBeUndefined();
      expect(fs.readFileSync(secret, 'utf8')).toBe('precious');
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('removes a link to a folder without emptying the folder', async () => {
    put(s.zonePath('storage', 'real/keep.txt'), 'k');
    fs.symlinkSync('real', s.zonePath('storage', 'alias'));
    const r = await s.call('shed_delete', { zone: 'storage', path: 'alias' });
    expect(r.data).toMatchObject({ was_directory: false, files_removed: 1 });
    expect(fs.existsSync(s.zonePath('storage', 'alias'))).toBe(false);
    expect(fs.readFileSync(s.zonePath('storage', 'real/keep.txt'), 'utf8')).toBe('k');
  });

  it('removes a folder holding a link to outside without touching the outside', async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-outside-'));
    try {
      fs.writeFileSync(path.join(outside, 'o.txt'), 'o');
      put(s.zonePath('storage', 'd/f.txt'));
      fs.symlinkSync(outside, s.zonePath('storage', 'd/out'));
      const r = await s.call('shed_delete', { zone: 'storage', path: 'd' });
      expect(r.data).toMatchObject({ was_directory: true, files_removed: 2 });
      expect(fs.readFileSync(path.join(outside, 'o.txt'), 'utf8')).toBe('o');
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it.each(['.', '/', '', './'])('refuses the zone root (%j)', async (p) => {
    put(s.zonePath('storage', 'a.txt'));
    const r = await s.call('shed_delete', { zone: 'storage', path: p });
    expect(r.success).toBe(false);
    // "" is a missing parameter; the others name the root.
    expect(r.error!.code).toBe(p === '' ? 'MISSING_PARAMETER' : 'INVALID_PATH');
    expect(r.error!.message).toContain('path');
    expect(fs.existsSync(s.zonePath('storage', 'a.txt'))).toBe(true);
  });

  it('reports a missing file with FILE_NOT_FOUND', async () => {
    const r = await s.call('shed_delete', { zone: 'storage', path: 'ghost.txt' });
    expect(r.error!.code).toBe('FILE_NOT_FOUND');
    expect(r.error!.message).toContain('Storage/ghost.txt');
    expect(r.error!.hint).toContain('shed_tree');
  });

  it('refuses .. above the root', async () => {
    const r = await s.call('shed_delete', { zone: 'storage', path: '../Documents' });
    expect(r.error!.code).toBe('PATH_ESCAPE');
  });

  it('a .git folder in Documents is the user\'s data: deleted like any folder, the history (kept outside the zone) intact', async () => {
    expect((await s.call('shed_create_file', { zone: 'documents', path: 'a.txt', content: 'a' })).success).toBe(true);
    put(s.zonePath('documents', '.git/HEAD'), 'ref: refs/heads/main\n');
    put(s.zonePath('documents', 'sub/.git/HEAD'), 'x');
    for (const p of ['.git/HEAD', '/.git', 'sub/.git']) {
      const r = await s.call('shed_delete', { zone: 'documents', path: p });
      expect(r.success, JSON.stringify(r.error)).toBe(true);
    }
    expect(fs.existsSync(s.zonePath('documents', '.git'))).toBe(false);
    expect(fs.existsSync(s.zonePath('documents', 'sub/.git'))).toBe(false);
    const log = await s.call('shed_exec', { zone: 'documents', cmd: 'git', args: ['log', '--oneline'] });
    expect(String(log.data?.stdout).trim().split('\n')).toHaveLength(1);
  });

  it('a .git folder in Storage is an ordinary folder', async () => {
    put(s.zonePath('storage', '.git/HEAD'));
    const r = await s.call('shed_delete', { zone: 'storage', path: '.git' });
    expect(r.success).toBe(true);
  });

  it('deletes in Documents', async () => {
    put(s.zonePath('documents', 'report.md'), '# r');
    const r = await s.call('shed_delete', { zone: 'documents', path: 'report.md', message: 'drop the report' });
    expect(r.success).toBe(true);
    expect(r.data).toMatchObject({ zone: 'Documents', path: 'report.md', deleted: true });
    expect(fs.existsSync(s.zonePath('documents', 'report.md'))).toBe(false);
  });

  it('refuses a file locked by another conversation', async () => {
    put(s.zonePath('storage', 'a.txt'), 'data');
    lockOf('Storage', 'a.txt', 'c2');
    const r = await s.call('shed_delete', { zone: 'storage', path: 'a.txt' });
    expect(r.error!.code).toBe('FILE_LOCKED');
    expect(r.error!.message).toContain('another conversation');
    expect(fs.readFileSync(s.zonePath('storage', 'a.txt'), 'utf8')).toBe('data');
  });

  it('ignores an expired lock and a lock of the same conversation', async () => {
    put(s.zonePath('storage', 'old.txt'));
    lockOf('Storage', 'old.txt', 'c2', new Date(Date.now() - 48 * 3600_000).toISOString());
    expect((await s.call('shed_delete', { zone: 'storage', path: 'old.txt' })).success).toBe(true);
    put(s.zonePath('storage', 'mine.txt'));
    lockOf('Storage', 'mine.txt', 'c1');
    expect((await s.call('shed_delete', { zone: 'storage', path: 'mine.txt' })).success).toBe(true);
  });

  it('refuses a folder when another conversation locked a file inside it', async () => {
    put(s.zonePath('documents', 'team/plans/q3.md'), 'plan');
    lockOf('Documents', 'team/plans/q3.md', 'c9');
    const r = await s.call('shed_delete', { zone: 'documents', path: 'team' });
    expect(r.error!.code).toBe('FILE_LOCKED');
    expect(r.error!.message).toContain('team/plans/q3.md');
    expect(fs.readFileSync(s.zonePath('documents', 'team/plans/q3.md'), 'utf8')).toBe('plan');
  });

  it('sees the lock of the real file when the path goes through a folder link', async () => {
    put(s.zonePath('storage', 'real/a.txt'), 'data');
    fs.symlinkSync('real', s.zonePath('storage', 'alias'));
    lockOf('Storage', 'real/a.txt', 'c2');
    const r = await s.call('shed_delete', { zone: 'storage', path: 'alias/a.txt' });
    expect(r.error!.code).toBe('FILE_LOCKED');
    expect(fs.readFileSync(s.zonePath('storage', 'real/a.txt'), 'utf8')).toBe('data');
  });

  it('refuses an unknown group', async () => {
    const r = await s.call('shed_delete', { zone: 'group', group: 'team', path: 'a.txt' });
    expect(r.error!.code).toBe('GROUP_NOT_FOUND');
  });

  it('names the parameter when path is missing', async () => {
    const r = await s.call('shed_delete', { zone: 'storage' });
    expect(r.error!.code).toBe('MISSING_PARAMETER');
    expect(r.error!.message).toContain("'path'");
    expect(r.error!.hint).toContain('shed_delete(');
  });

  it('deletes a folder 2,000 levels deep, links inside removed and never followed, files counted', async () => {
    const outside = path.join(s.base, 'outside.txt');
    fs.writeFileSync(outside, 'keep me');
    // Built through descriptors (/proc/self/fd/N/name), as a full path 2,000 levels deep is longer than the kernel accepts.
    fs.mkdirSync(s.zonePath('storage', ''), { recursive: true });
    let fd = fs.openSync(s.zonePath('storage', ''), 'r');
    let files = 0;
    for (let depth = 1; depth <= 2000; depth++) {
      fs.mkdirSync(`/proc/self/fd/${fd}/d`);
      const next = fs.openSync(`/proc/self/fd/${fd}/d`, 'r');
      fs.closeSync(fd);
      fd = next;
      if (depth % 500 === 0) {
        fs.writeFileSync(`/proc/self/fd/${fd}/f${depth}.txt`, 'x');
        fs.symlinkSync(outside, `/proc/self/fd/${fd}/out${depth}`);
        files += 2;
      }
    }
    fs.closeSync(fd);
    // Not watched by the lag probe: deleting a 2,000-deep tree still holds the event loop 200-320 ms of
    // CPU on a loaded machine (known; closing its 2,000 folder watches is already spread out).
    const r = await s.call('shed_delete', { zone: 'storage', path: 'd' }, { lag: false });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data!.files_removed).toBe(files);
    expect(fs.existsSync(s.zonePath('storage', 'd'))).toBe(false);
    expect(fs.readFileSync(outside, 'utf8')).toBe('keep me');
  });

  it('deletes a folder of 10,000 files without holding the event loop', async () => {
    for (let i = 0; i < 10; i++) {
      const dir = s.zonePath('storage', `wide/p${i}`);
      fs.mkdirSync(dir, { recursive: true });
      for (let j = 0; j < 1000; j++) fs.writeFileSync(path.join(dir, `f${j}`), '');
    }
    // The suite's lag probe watches the call (test/helpers/lag.ts): no stretch of over 200 ms of the
    // loop's CPU, none of 5 s on the clock; one synchronous removal of the tree takes seconds.
    const r = await s.call('shed_delete', { zone: 'storage', path: 'wide' });
    expect(r.success).toBe(true);
    expect(r.data!.files_removed).toBe(10_000);
    expect(fs.existsSync(s.zonePath('storage', 'wide'))).toBe(false);
  });
});
