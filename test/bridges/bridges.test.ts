/**
 * The four zone bridges: files and folders, with and without overwrite, quota and size limits,
 * commits in Documents (including the removal of a file that was never committed), locks, links
 * that must not cross zones, and a failed copy that must leave the source and the destination
 * as they were.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Result, type Shed } from '../helpers/shed.js';
import { copyPath, exists, listAll, plantLock, put, read } from '../lockedit/helpers.js';
import { git, gitRun } from '../vcs/helpers.js';

let s: Shed;
beforeEach(() => {
  s = makeShed();
});
afterEach(() => s.cleanup());

type ZoneKey = 'uploads' | 'storage' | 'documents';
interface Bridge {
  fn: string;
  from: ZoneKey;
  to: ZoneKey;
  move: boolean;
}
const BRIDGES: Bridge[] = [
  { fn: 'shed_move_uploads_to_storage', from: 'uploads', to: 'storage', move: true },
  { fn: 'shed_move_uploads_to_documents', from: 'uploads', to: 'documents', move: true },
  { fn: 'shed_copy_storage_to_documents', from: 'storage', to: 'documents', move: false },
  { fn: 'shed_move_documents_to_storage', from: 'documents', to: 'storage', move: true },
];
const LABEL = { uploads: 'Uploads', storage: 'Storage', documents: 'Documents' };

const docs = () => s.zonePath('documents');
/** The files of Documents' last commit. */
const committed = () => (gitRun(docs(), 'rev-parse', 'HEAD').status === 0 ? git(docs(), 'ls-tree', '-r', '--name-only', 'HEAD').split('\n').filter(Boolean) : []);

describe.each(BRIDGES)('$fn', (b) => {
  const call = (args: Record<string, unknown>): Promise<Result> => s.call(b.fn, args);
  const src = (rel = '') => s.zonePath(b.from, rel);
  const dst = (rel = '') => s.zonePath(b.to, rel);

  it('moves or copies a file to a new path, creating folders', async () => {
    put(src('in/report.csv'), 'a,b\n1,2\n');
    const r = await call({ src: 'in/report.csv', dest: 'reports/2024/report.csv' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data).toMatchObject({ src: 'in/report.csv', dest: 'reports/2024/report.csv', from: LABEL[b.from], to: LABEL[b.to], kind: 'file', files: 1, bytes: 8, replaced: false, source_kept: !b.move });
    expect(r.message).toContain(`${LABEL[b.to]}/reports/2024/report.csv`);
    expect(read(dst('reports/2024/report.csv'))).toBe('a,b\n1,2\n');
    expect(exists(src('in/report.csv'))).toBe(!b.move);
    expect(JSON.stringify(r)).not.toContain(s.base);
  });

  it('moves or copies a folder with everything in it', async () => {
    put(src('proj/a.txt'), 'A');
    put(src('proj/sub/deeper/b.txt'), 'BB');
    fs.mkdirSync(src('proj/empty'));
    const r = await call({ src: 'proj', dest: 'archive/proj' });
    expect(r.data).toMatchObject({ kind: 'folder', files: 2, bytes: 3 });
    expect(listAll(dst('archive/proj'))).toEqual(['a.txt', 'empty', 'sub', 'sub/deeper', 'sub/deeper/b.txt']);
    expect(read(dst('archive/proj/sub/deeper/b.txt'))).toBe('BB');
    expect(exists(src('proj'))).toBe(!b.move);
  });

  it('refuses an existing destination without overwrite, touching nothing', async () => {
    put(src('x.txt'), 'new');
    put(dst('x.txt'), 'old');
    const r = await call({ src: 'x.txt', dest: 'x.txt' });
    expect(r.error!.code).toBe('FILE_EXISTS');
    expect(r.error!.hint).toContain('overwrite=true');
    expect(r.error!.hint).toContain(`${b.fn}(`);
    expect(read(dst('x.txt'))).toBe('old');
    expect(read(src('x.txt'))).toBe('new');
  });

  it('replaces a file with overwrite=true', async () => {
    put(src('x.txt'), 'new');
    put(dst('x.txt'), 'old');
    const r = await call({ src: 'x.txt', dest: 'x.txt', overwrite: true });
    expect(r.data).toMatchObject({ replaced: true });
    expect(read(dst('x.txt'))).toBe('new');
    expect(exists(src('x.txt'))).toBe(!b.move);
  });

  it('replaces a whole folder with overwrite=true (nothing of the old one is left)', async () => {
    put(src('d/new.txt'), 'n');
    put(dst('d/old.txt'), 'o');
    put(dst('d/keep/deep.txt'), 'o');
    expect((await call({ src: 'd', dest: 'd' })).error!.code).toBe('FILE_EXISTS');
    const r = await call({ src: 'd', dest: 'd', overwrite: true });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(listAll(dst('d'))).toEqual(['new.txt']);
    expect(listAll(dst()).filter((n) => n.endsWith('.shedtmp'))).toEqual([]);
  });

  it('never replaces a folder by a file or a file by a folder, and says how to put a file inside', async () => {
    put(src('f.txt'), 'f');
    fs.mkdirSync(dst('box'), { recursive: true });
    const r = await call({ src: 'f.txt', dest: 'box', overwrite: true });
    expect(r.error!.code).toBe('FILE_EXISTS');
    expect(r.error!.hint).toContain('dest="box/f.txt"');
    const plain = await call({ src: 'f.txt', dest: 'box' });
    expect(plain.error!.hint).toContain('dest="box/f.txt"');
    expect(exists(src('f.txt'))).toBe(true);
    expect(listAll(dst('box'))).toEqual([]);
  });

  it('reports a missing source, the zone-name mistake, escapes and the zone roots clearly', async () => {
    const missing = await call({ src: 'nope.csv', dest: 'nope.csv' });
    expect(missing.error!.code).toBe('FILE_NOT_FOUND');
    if (b.from === 'uploads') expect(missing.error!.hint).toContain('shed_import(import_all=true)');
    put(src('a.txt'), 'a');
    expect((await call({ src: `${LABEL[b.from]}/a.txt`, dest: 'a.txt' })).error!.code).toBe('PATH_STARTS_WITH_ZONE');
    expect((await call({ src: 'a.txt', dest: `${LABEL[b.to]}/a.txt` })).error!.code).toBe('PATH_STARTS_WITH_ZONE');
    expect((await call({ src: '../a.txt', dest: 'a.txt' })).error!.code).toBe('PATH_ESCAPE');
    expect((await call({ src: 'a.txt', dest: '../../../elsewhere.txt' })).error!.code).toBe('PATH_ESCAPE');
    expect((await call({ src: '.', dest: 'all' })).error!.code).toBe('INVALID_PATH');
    expect((await call({ src: 'a.txt', dest: '/' })).error!.code).toBe('INVALID_PATH');
    expect((await call({ src: 'a.txt' })).error!.code).toBe('MISSING_PARAMETER');
    expect(exists(src('a.txt'))).toBe(true);
  });

  it('does not carry symbolic links across zones: skipped and listed (a move leaves them behind)', async () => {
    put(src('t/real.txt'), 'r');
    fs.symlinkSync('real.txt', src('t/link.txt'));
    fs.symlinkSync('../../../../../../../etc/passwd', src('t/evil'));
    const r = await call({ src: 't', dest: 't' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect((r.data!.skipped as string[]).sort()).toEqual(['evil', 'link.txt']);
    expect(r.message).toContain('links never cross zones');
    expect(listAll(dst('t'))).toEqual(['real.txt']);
    // A move keeps what it did not carry.
    expect(listAll(src('t'))).toEqual(b.move ? ['evil', 'link.txt'] : ['evil', 'link.txt', 'real.txt']);
    if (b.move) {
      fs.symlinkSync('t/link.txt', src('toplink'));
      const l = await call({ src: 'toplink', dest: 'toplink' });
      expect(l.error!.code).toBe('NOT_A_FILE');
      expect(exists(dst('toplink'))).toBe(false);
    }
  });

  it('a copy that fails half-way leaves the source whole and no destination (and no temp files)', async () => {
    // A tree whose deepest file fits at the source but not under the longer destination path:
    // the copy fails inside the tree, after other files were copied.
    const parts = Array.from({ length: 15 }, (_, i) => `${String(i).padStart(2, '0')}${'x'.repeat(247)}`);
    put(src('tree/first.txt'), 'first');
    put(src(`tree/${parts.join('/')}/deep.txt`), 'deep');
    fs.symlinkSync('first.txt', src('tree/link')); // forces a copy (not a rename) for moves too
    const before = listAll(src('tree'));
    const longDest = `${'d'.repeat(250)}/${'e'.repeat(250)}/tree`;
    const r = await call({ src: 'tree', dest: longDest });
    expect(r.success).toBe(false);
    expect(r.error!.code).toBe('IO_ERROR');
    expect(listAll(src('tree'))).toEqual(before);
    expect(read(src(`tree/${parts.join('/')}/deep.txt`))).toBe('deep');
    expect(exists(dst(longDest))).toBe(false);
    expect(listAll(dst()).filter((n) => n.includes('.shedtmp'))).toEqual([]);
  });

  it('refuses to take a file that another conversation has open in a locked edit (moves only)', async () => {
    if (b.from === 'uploads') return; // Uploads has no locks
    put(src('locked.txt'), 'l');
    plantLock(s, 'locked.txt', { conv_id: 'c2' }, b.from);
    const r = await call({ src: 'locked.txt', dest: 'locked.txt' });
    if (b.move) {
      expect(r.error!.code).toBe('FILE_LOCKED');
      expect(exists(src('locked.txt'))).toBe(true);
      expect(exists(dst('locked.txt'))).toBe(false);
    } else {
      expect(r.success).toBe(true);
    }
  });

  it('refuses to overwrite a destination that another conversation has open in a locked edit', async () => {
    if (b.to === 'uploads') return;
    put(src('x.txt'), 'new');
    put(dst('x.txt'), 'old');
    plantLock(s, 'x.txt', { conv_id: 'c2' }, b.to);
    expect((await call({ src: 'x.txt', dest: 'x.txt', overwrite: true })).error!.code).toBe('FILE_LOCKED');
    expect(read(dst('x.txt'))).toBe('old');
  });
});

describe('versioning', () => {
  it('move_uploads_to_documents commits the new file with the message, as the user', async () => {
    put(s.zonePath('uploads', 'data.csv'), 'x\n');
    const r = await s.call('shed_move_uploads_to_documents', { src: 'data.csv', dest: 'data/data.csv', message: 'Add the data' });
    expect(r.data!.commit).toMatch(/^[0-9a-f]{7}$/);
    expect(committed()).toEqual(['data/data.csv']);
    expect(git(docs(), 'log', '-1', '--format=%s|%an')).toBe('Add the data|ALICE\n');
    expect(git(docs(), 'status', '--porcelain')).toBe('');
  });

  it('copy_storage_to_documents commits each copy; overwriting makes a new version', async () => {
    put(s.zonePath('storage', 'r.md'), 'v1\n');
    await s.call('shed_copy_storage_to_documents', { src: 'r.md', dest: 'r.md' });
    fs.writeFileSync(s.zonePath('storage', 'r.md'), 'v2\n');
    const r = await s.call('shed_copy_storage_to_documents', { src: 'r.md', dest: 'r.md', overwrite: true });
    expect(r.data!.commit).toBeDefined();
    expect(git(docs(), 'show', 'HEAD:r.md')).toBe('v2\n');
    expect(git(docs(), 'show', 'HEAD~1:r.md')).toBe('v1\n');
    expect(git(docs(), 'log', '-1', '--format=%s')).toBe('Import r.md from Storage\n');
  });

  it('move_documents_to_storage removes the file from the repository, committed or not', async () => {
    put(s.zonePath('documents', 'kept.md'), 'k');
    put(s.zonePath('documents', 'gone.md'), 'g');
    await s.call('shed_patch_text', { zone: 'documents', path: 'kept.md', content: '!' });
    expect(committed()).toEqual(['gone.md', 'kept.md']);
    const r = await s.call('shed_move_documents_to_storage', { src: 'gone.md', dest: 'gone.md', message: 'Out of Documents' });
    expect(r.data!.commit).toBeDefined();
    expect(committed()).toEqual(['kept.md']);
    expect(git(docs(), 'log', '-1', '--format=%s')).toBe('Out of Documents\n');
    expect(read(s.zonePath('storage', 'gone.md'))).toBe('g');
    // Never committed: written directly, then moved out. It leaves Documents (disk and history).
    put(s.zonePath('documents', 'fresh.md'), 'never committed');
    const f = await s.call('shed_move_documents_to_storage', { src: 'fresh.md', dest: 'fresh.md' });
    expect(f.success).toBe(true);
    expect(exists(s.zonePath('documents', 'fresh.md'))).toBe(false);
    expect(committed()).not.toContain('fresh.md');
    expect(git(docs(), 'status', '--porcelain')).toBe('');
  });

  it('a folder moved out of Documents disappears from the repository', async () => {
    put(s.zonePath('documents', 'p/a.md'), 'a');
    put(s.zonePath('documents', 'p/b/c.md'), 'c');
    put(s.zonePath('documents', 'top.md'), 't');
    await s.call('shed_patch_text', { zone: 'documents', path: 'top.md', content: '!' });
    await s.call('shed_move_documents_to_storage', { src: 'p', dest: 'p' });
    expect(committed()).toEqual(['top.md']);
    expect(listAll(s.zonePath('storage', 'p'))).toEqual(['a.md', 'b', 'b/c.md']);
  });

  it('nothing is copied into a .git folder of Documents; a user\'s .git moves out to Storage like any folder', async () => {
    put(s.zonePath('documents', 'a.md'), 'a');
    await s.call('shed_patch_text', { zone: 'documents', path: 'a.md', content: '!' });
    put(s.zonePath('storage', 'hook'), '#!/bin/sh\n');
    expect((await s.call('shed_copy_storage_to_documents', { src: 'hook', dest: '.git/hooks/post-commit' })).error!.code).toBe('PROTECTED_PATH');
    expect(exists(path.join(docs(), '.git', 'hooks', 'post-commit'))).toBe(false);
    put(path.join(docs(), '.git', 'HEAD'), 'ref: refs/heads/main\n');
    const moved = await s.call('shed_move_documents_to_storage', { src: '.git', dest: 'repo/.git' });
    expect(moved.success, JSON.stringify(moved.error)).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'repo/.git/HEAD'), 'utf8')).toBe('ref: refs/heads/main\n');
    expect(committed()).toEqual(['a.md']);
  });
});

describe('limits', () => {
  it('a copy is refused over quota, before anything is written', async () => {
    const q = makeShed({ quota_per_user_mb: 1 });
    try {
      put(q.zonePath('storage', 'big.bin'), Buffer.alloc(600 * 1024));
      const r = await q.call('shed_copy_storage_to_documents', { src: 'big.bin', dest: 'big.bin' });
      expect(r.error!.code).toBe('QUOTA_EXCEEDED');
      expect(exists(q.zonePath('documents', 'big.bin'))).toBe(false);
      // A move stays within the user's space: no quota needed.
      const m = await q.call('shed_move_documents_to_storage', { src: 'nope', dest: 'x' });
      expect(m.error!.code).toBe('FILE_NOT_FOUND');
      put(q.zonePath('uploads', 'u.bin'), Buffer.alloc(300 * 1024));
      expect((await q.call('shed_move_uploads_to_storage', { src: 'u.bin', dest: 'u.bin' })).success).toBe(true);
    } finally {
      q.cleanup();
    }
  });

  it('a copy of a file above max_file_size_mb is refused', async () => {
    const q = makeShed({ max_file_size_mb: 1 });
    try {
      put(q.zonePath('storage', 'd/huge.bin'), Buffer.alloc(1024 * 1024 + 1));
      const r = await q.call('shed_copy_storage_to_documents', { src: 'd', dest: 'd' });
      expect(r.error!.code).toBe('FILE_TOO_LARGE');
      expect(r.error!.message).toContain('Storage/d/huge.bin');
      expect(exists(q.zonePath('documents', 'd'))).toBe(false);
    } finally {
      q.cleanup();
    }
  });

  it('Uploads is per conversation: another conversation does not see this one\'s uploads', async () => {
    put(s.zonePath('uploads', 'mine.txt'), 'm');
    const r = await s.call('shed_move_uploads_to_storage', { src: 'mine.txt', dest: 'mine.txt' }, { chat: 'c2' });
    expect(r.error!.code).toBe('FILE_NOT_FOUND');
    expect(exists(s.zonePath('uploads', 'mine.txt'))).toBe(true);
  });

  it('a locked edit of the same conversation does not block its own move (as delete)', async () => {
    put(s.zonePath('storage', 'e.txt'), 'e');
    await s.call('shed_lockedit_open', { zone: 'storage', path: 'e.txt' });
    expect(exists(copyPath(s, 'e.txt'))).toBe(true);
    expect((await s.call('shed_copy_storage_to_documents', { src: 'e.txt', dest: 'e.txt' })).success).toBe(true);
  });
});
