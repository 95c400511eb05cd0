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
const read = (file: string) => fs.readFileSync(file, 'utf8');
const exists = (file: string) => fs.lstatSync(file, { throwIfNoEntry: false }) !== undefined;

describe('shed_rename', () => {
  it('renames a file, keeping its bytes', async () => {
    put(s.zonePath('storage', 'draft.txt'), 'v1 text');
    const r = await s.call('shed_rename', { zone: 'storage', old_path: 'draft.txt', new_path: 'final.txt' });
    expect(r.success).toBe(true);
    expect(r.data).toEqual({ zone: 'Storage', old_path: 'draft.txt', new_path: 'final.txt', was_directory: false, replaced: false });
    expect(r.message).toBe('Renamed Storage/draft.txt to Storage/final.txt.');
    expect(exists(s.zonePath('storage', 'draft.txt'))).toBe(false);
    expect(read(s.zonePath('storage', 'final.txt'))).toBe('v1 text');
  });

  it('creates the missing folders of new_path', async () => {
    put(s.zonePath('storage', 'a.txt'), 'A');
    const r = await s.call('shed_rename', { zone: 'storage', old_path: 'a.txt', new_path: 'x/y/z/a.txt' });
    expect(r.success).toBe(true);
    expect(read(s.zonePath('storage', 'x/y/z/a.txt'))).toBe('A');
  });

  it('moves a folder with its contents', async () => {
    put(s.zonePath('documents', 'proj/a.md'), 'a');
    put(s.zonePath('documents', 'proj/sub/b.md'), 'b');
    const r = await s.call('shed_rename', { zone: 'documents', old_path: 'proj', new_path: 'archive/proj-2024' });
    expect(r.success).toBe(true);
    expect(r.data).toMatchObject({ zone: 'Documents', was_directory: true });
    expect(r.message).toContain('folder');
    expect(read(s.zonePath('documents', 'archive/proj-2024/sub/b.md'))).toBe('b');
    expect(exists(s.zonePath('documents', 'proj'))).toBe(false);
  });

  it('refuses an existing destination file unless overwrite=true, and says how', async () => {
    put(s.zonePath('storage', 'new.txt'), 'new');
    put(s.zonePath('storage', 'old.txt'), 'old');
    const r = await s.call('shed_rename', { zone: 'storage', old_path: 'new.txt', new_path: 'old.txt' });
    expect(r.error!.code).toBe('FILE_EXISTS');
    expect(r.error!.message).toContain('Storage/old.txt');
    expect(r.error!.hint).toContain('overwrite=true');
    expect(read(s.zonePath('storage', 'new.txt'))).toBe('new');
    expect(read(s.zonePath('storage', 'old.txt'))).toBe('old');

    const ok = await s.call('shed_rename', { zone: 'storage', old_path: 'new.txt', new_path: 'old.txt', overwrite: true });
    expect(ok.success).toBe(true);
    expect(ok.data).toMatchObject({ replaced: true });
    expect(ok.message).toContain('replaced');
    expect(read(s.zonePath('storage', 'old.txt'))).toBe('new');
    expect(exists(s.zonePath('storage', 'new.txt'))).toBe(false);
  });

  it('accepts overwrite as a string the way small models send it', async () => {
    put(s.zonePath('storage', 'a'), '1');
    put(s.zonePath('storage', 'b'), '2');
    const r = await s.call('shed_rename', { zone: 'storage', old_path: 'a', new_path: 'b', overwrite: 'true' });
    expect(r.success).toBe(true);
    expect(read(s.zonePath('storage', 'b'))).toBe('1');
  });

  it('never replaces a folder, and never lets a folder replace a file', async () => {
    put(s.zonePath('storage', 'f.txt'), 'file');
    put(s.zonePath('storage', 'dir/inside.txt'), 'in');
    put(s.zonePath('storage', 'dir2/other.txt'), 'o');
    const fileOntoFolder = await s.call('shed_rename', { zone: 'storage', old_path: 'f.txt', new_path: 'dir', overwrite: true });
    expect(fileOntoFolder.error!.code).toBe('FILE_EXISTS');
    expect(fileOntoFolder.error!.hint).toContain('dir/f.txt');
    const folderOntoFile = await s.call('shed_rename', { zone: 'storage', old_path: 'dir', new_path: 'f.txt', overwrite: true });
    expect(folderOntoFile.error!.code).toBe('FILE_EXISTS');
    const folderOntoFolder = await s.call('shed_rename', { zone: 'storage', old_path: 'dir', new_path: 'dir2', overwrite: true });
    expect(folderOntoFolder.error!.code).toBe('FILE_EXISTS');
    expect(read(s.zonePath('storage', 'f.txt'))).toBe('file');
    expect(read(s.zonePath('storage', 'dir/inside.txt'))).toBe('in');
    expect(read(s.zonePath('storage', 'dir2/other.txt'))).toBe('o');
  });

  it('refuses moving a folder into itself or its own sub-folder', async () => {
    put(s.zonePath('storage', 'a/b/c.txt'), 'c');
    for (const dest of ['a/b/new', 'a/new', 'a/b/c/d']) {
      const r = await s.call('shed_rename', { zone: 'storage', old_path: 'a', new_path: dest });
      expect(r.error?.code).toBe('INVALID_PATH');
      expect(r.error!.message).toContain('into itself');
    }
    expect(read(s.zonePath('storage', 'a/b/c.txt'))).toBe('c');
    expect(exists(s.zonePath('storage', 'a/new'))).toBe(false);
    expect(exists(s.zonePath('storage', 'a/b/new'))).toBe(false);
  });

  it('refuses moving a folder into itself through a link', async () => {
    put(s.zonePath('storage', 'a/x.txt'), 'x');
    fs.symlinkSync('a', s.zonePath('storage', 'via'));
    const r = await s.call('shed_rename', { zone: 'storage', old_path: 'a', new_path: 'via/inner' });
    expect(r.error!.code).toBe('INVALID_PATH');
    expect(read(s.zonePath('storage', 'a/x.txt'))).toBe('x');
  });

  it('allows a sibling whose name starts like the folder', async () => {
    put(s.zonePath('storage', 'a/x.txt'), 'x');
    const r = await s.call('shed_rename', { zone: 'storage', old_path: 'a', new_path: 'ab/a' });
    expect(r.success).toBe(true);
    expect(read(s.zonePath('storage', 'ab/a/x.txt'))).toBe('x');
  });

  it('refuses the same path with INVALID_PARAMETER', async () => {
    put(s.zonePath('storage', 'same.txt'));
    for (const newPath of ['same.txt', './same.txt', '/same.txt']) {
      const r = await s.call('shed_rename', { zone: 'storage', old_path: 'same.txt', new_path: newPath });
      expect(r.error?.code).toBe('INVALID_PARAMETER');
      expect(r.error!.details).toMatchObject({ parameter: 'new_path' });
    }
    expect(exists(s.zonePath('storage', 'same.txt'))).toBe(true);
  });

  it('reports a missing source on old_path', async () => {
    const r = await s.call('shed_rename', { zone: 'storage', old_path: 'ghost.txt', new_path: 'b.txt' });
    expect(r.error!.code).toBe('FILE_NOT_FOUND');
    expect(r.error!.details).toMatchObject({ parameter: 'old_path' });
    expect(exists(s.zonePath('storage', 'b.txt'))).toBe(false);
  });

  it('refuses the zone root on either side', async () => {
    put(s.zonePath('storage', 'a.txt'));
    const fromRoot = await s.call('shed_rename', { zone: 'storage', old_path: '.', new_path: 'x' });
    expect(fromRoot.error!.code).toBe('INVALID_PATH');
    expect(fromRoot.error!.message).toContain('old_path');
    const toRoot = await s.call('shed_rename', { zone: 'storage', old_path: 'a.txt', new_path: '/' });
    expect(toRoot.error!.code).toBe('INVALID_PATH');
    expect(toRoot.error!.message).toContain('new_path');
  });

  it('is refused in Uploads (read-only) and for groups', async () => {
    put(s.zonePath('uploads', 'u.txt'));
    const r = await s.call('shed_rename', { zone: 'uploads', old_path: 'u.txt', new_path: 'v.txt' });
    expect(r.error!.code).toBe('ZONE_READONLY');
    expect(exists(s.zonePath('uploads', 'u.txt'))).toBe(true);
    const g = await s.call('shed_rename', { zone: 'group', group: 'team', old_path: 'a', new_path: 'b' });
    expect(g.error!.code).toBe('GROUP_NOT_FOUND');
  });

  it('refuses a source locked by another conversation', async () => {
    put(s.zonePath('storage', 'a.txt'), 'a');
    const lock = path.join(s.base, 'users', 'alice', 'Storage', 'locks', 'a.txt.lock');
    put(lock, JSON.stringify({ user_id: 'alice', conv_id: 'c2', locked_at: new Date().toISOString(), path: 'a.txt' }));
    const r = await s.call('shed_rename', { zone: 'storage', old_path: 'a.txt', new_path: 'b.txt' });
    expect(r.error!.code).toBe('FILE_LOCKED');
    expect(read(s.zonePath('storage', 'a.txt'))).toBe('a');
    expect(exists(s.zonePath('storage', 'b.txt'))).toBe(false);
  });

  it('refuses a folder holding a file locked by another conversation', async () => {
    put(s.zonePath('storage', 'd/a.txt'), 'a');
    const lock = path.join(s.base, 'users', 'alice', 'Storage', 'locks', 'd', 'a.txt.lock');
    put(lock, JSON.stringify({ user_id: 'alice', conv_id: 'c2', locked_at: new Date().toISOString(), path: 'd/a.txt' }));
    const r = await s.call('shed_rename', { zone: 'storage', old_path: 'd', new_path: 'e' });
    expect(r.error!.code).toBe('FILE_LOCKED');
    expect(exists(s.zonePath('storage', 'd/a.txt'))).toBe(true);
  });

  it('refuses overwriting a destination locked by another conversation', async () => {
    put(s.zonePath('storage', 'a.txt'), 'a');
    put(s.zonePath('storage', 'b.txt'), 'b');
    const lock = path.join(s.base, 'users', 'alice', 'Storage', 'locks', 'b.txt.lock');
    put(lock, JSON.stringify({ user_id: 'alice', conv_id: 'c2', locked_at: new Date().toISOString(), path: 'b.txt' }));
    const r = await s.call('shed_rename', { zone: 'storage', old_path: 'a.txt', new_path: 'b.txt', overwrite: true });
    expect(r.error!.code).toBe('FILE_LOCKED');
    expect(read(s.zonePath('storage', 'b.txt'))).toBe('b');
  });

  it('in Documents nothing is moved into a .git folder (it could never be versioned); moving out of one works', async () => {
    put(s.zonePath('documents', 'a.md'), 'a');
    expect((await s.call('shed_patch_text', { zone: 'documents', path: 'a.md', content: '!' })).success).toBe(true);
    put(s.zonePath('documents', '.git/config'), 'cfg');
    const into = await s.call('shed_rename', { zone: 'documents', old_path: 'a.md', new_path: '.git/hooks/post-commit' });
    expect(into.error!.code).toBe('PROTECTED_PATH');
    expect(into.error!.message).toContain('new_path');
    expect(into.error!.hint).toContain('zone="storage"');
    const nested = await s.call('shed_rename', { zone: 'documents', old_path: 'a.md', new_path: 'sub/.GIT/x' });
    expect(nested.error!.code).toBe('PROTECTED_PATH');
    expect(read(s.zonePath('documents', 'a.md'))).toBe('a\n!\n');
    expect(exists(s.zonePath('documents', '.git/hooks'))).toBe(false);
    const out = await s.call('shed_rename', { zone: 'documents', old_path: '.git/config', new_path: 'config' });
    expect(out.success, JSON.stringify(out.error)).toBe(true);
    expect(read(s.zonePath('documents', 'config'))).toBe('cfg');
  });

  it('never moves a link to where it leads outside: one pointing outside stays where it is, untouched', async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-outside-'));
    try {
      const secret = path.join(outside, 'secret.txt');
      fs.writeFileSync(secret, 'precious');
      fs.mkdirSync(s.zonePath('storage'), { recursive: true });
      fs.symlinkSync(secret, s.zonePath('storage', 'link'));
      const r = await s.call('shed_rename', { zone: 'storage', old_path: 'link', new_path: 'moved/link2' });
      expect(r.success).toBe(false);
      expect(r.error?.code).toBe('PATH_ESCAPE');
      expect(r.error?.hint).toContain('shed_delete');
      expect(fs.readlinkSync(s.zonePath('storage', 'link'))).toBe(secret);
      expect(exists(s.zonePath('storage', 'moved/link2'))).toBe(false);
      expect(read(secret)).toBe('precious');
      expect(fs.readdirSync(outside)).toEqual(['secret.txt']);
    } finally {
      fs.rmSync(outside, { recursive: true, force: true });
    }
  });

  it('names both parameters when they are missing', async () => {
    const r = await s.call('shed_rename', { zone: 'storage', old_path: 'a.txt' });
    expect(r.error!.code).toBe('MISSING_PARAMETER');
    expect(r.error!.message).toContain("'new_path'");
  });
});
