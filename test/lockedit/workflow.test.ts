/**
 * The locked-edit workflow through the public functions: open, overwrite, save, cancel, the
 * errors of every broken state, stale and corrupt locks, and the rule that a safe-mode patch
 * never destroys an open edit.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { git } from '../vcs/helpers.js';
import { copyPath, exists, lockPath, plantLock, put, read, readLockJson, workBase } from './helpers.js';

let s: Shed;
beforeEach(() => {
  s = makeShed({ sandbox: 'validated' });
  put(s.zonePath('storage', 'notes.md'), 'line one\nline two\n');
});
afterEach(() => s.cleanup());

const open = (p = 'notes.md', chat = 'c1', zone = 'storage') => s.call('shed_lockedit_open', { zone, path: p }, { chat });
const overwrite = (content: string, extra: Record<string, unknown> = {}, chat = 'c1') => s.call('shed_lockedit_overwrite', { zone: 'storage', path: 'notes.md', content, ...extra }, { chat });
const save = (chat = 'c1', p = 'notes.md', zone = 'storage', extra: Record<string, unknown> = {}) => s.call('shed_lockedit_save', { zone, path: p, ...extra }, { chat });
const cancel = (chat = 'c1', p = 'notes.md') => s.call('shed_lockedit_cancel', { zone: 'storage', path: p }, { chat });

describe('open', () => {
  it('locks the file for this conversation, copies it and returns its content', async () => {
    const r = await open();
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data).toMatchObject({ zone: 'Storage', path: 'notes.md', size: 18, content: 'line one\nline two\n', is_binary: false, continued: false });
    expect(readLockJson(s, 'notes.md')).toMatchObject({ user_id: 'alice', conv_id: 'c1', path: 'notes.md', kind: 'edit' });
    expect(read(copyPath(s, 'notes.md'))).toBe('line one\nline two\n');
    expect(JSON.stringify(r)).not.toContain(s.base);
  });

  it('refuses another conversation of the same user with FILE_LOCKED and a way out', async () => {
    await open();
    const r = await open('notes.md', 'c2');
    expect(r.error!.code).toBe('FILE_LOCKED');
    expect(r.error!.message).toContain('another conversation');
    expect(r.error!.hint).toContain('shed_force_unlock');
    expect(exists(copyPath(s, 'notes.md', 'c2'))).toBe(false);
    expect(readLockJson(s, 'notes.md').conv_id).toBe('c1');
  });

  it('opening again in the same conversation continues the edit and keeps unsaved changes', async () => {
    await open();
    await overwrite('changed\n');
    const again = await open();
    expect(again.success).toBe(true);
    expect(again.data).toMatchObject({ continued: true, content: 'changed\n' });
    expect(again.message).toContain('unsaved changes');
  });

  it('refuses missing files, folders, the zone root, escapes and Uploads', async () => {
    expect((await open('nope.md')).error!.code).toBe('FILE_NOT_FOUND');
    fs.mkdirSync(s.zonePath('storage', 'dir'));
    expect((await open('dir')).error!.code).toBe('NOT_A_FILE');
    expect((await open('.')).error!.code).toBe('INVALID_PATH');
    expect((await open('../../Documents/data/x')).error!.code).toBe('PATH_ESCAPE');
    expect((await open('Storage/notes.md')).error!.code).toBe('PATH_STARTS_WITH_ZONE');
    put(s.zonePath('uploads', 'u.txt'), 'u');
    const up = await s.call('shed_lockedit_open', { zone: 'uploads', path: 'u.txt' });
    expect(up.error!.code).toBe('ZONE_READONLY');
    const g = await s.call('shed_lockedit_open', { zone: 'group', group: 'team', path: 'a' });
    expect(g.error!.code).toBe('GROUP_NOT_FOUND');
    // No file lock was left (the folder may hold the user's call lock and change stamp).
    const locks = path.join(workBase(s), 'locks');
    const left = exists(locks) ? fs.readdirSync(locks, { recursive: true }).map(String).filter((n) => n.endsWith('.lock')) : [];
    expect(left).toEqual([]);
  });

  it('refuses a symbolic link (writes never go through links) and locks the real file under an alias folder', async () => {
    fs.symlinkSync('notes.md', s.zonePath('storage', 'link.md'));
    const viaLink = await open('link.md');
    expect(viaLink.error!.code).toBe('INVALID_PATH');
    expect(viaLink.error!.hint).toContain('notes.md');
    put(s.zonePath('storage', 'real/a.txt'), 'a');
    fs.symlinkSync('real', s.zonePath('storage', 'alias'));
    expect((await open('alias/a.txt')).success).toBe(true);
    expect(exists(lockPath(s, 'real/a.txt'))).toBe(true);
    expect((await open('real/a.txt', 'c2')).error!.code).toBe('FILE_LOCKED');
  });

  it('does not show a binary file but opens it', async () => {
    put(s.zonePath('storage', 'b.bin'), Buffer.from([0, 1, 2, 255]));
    const r = await open('b.bin');
    expect(r.data).toMatchObject({ is_binary: true, content: '', size: 4 });
  });

  it('truncates the content of a large file to the output limit and says how to see more', async () => {
    s.tools.valves = { ...s.tools.valves, max_output_default: 100 };
    put(s.zonePath('storage', 'big.txt'), 'x'.repeat(5000));
    const r = await open('big.txt');
    expect(r.data!.truncated).toBe(true);
    expect(String(r.data!.content)).toHaveLength(100);
    expect(r.message).toContain('shed_lockedit_exec');
    expect(fs.statSync(copyPath(s, 'big.txt')).size).toBe(5000);
  });
});

describe('overwrite', () => {
  it('changes only the working copy, replacing or appending', async () => {
    await open();
    const r = await overwrite('new\n');
    expect(r.data).toMatchObject({ bytes_written: 4, new_size: 4, mode: 'overwrite' });
    expect(read(copyPath(s, 'notes.md'))).toBe('new\n');
    const a = await overwrite('more\n', { append: true });
    expect(a.data).toMatchObject({ bytes_written: 5, new_size: 9, mode: 'append' });
    expect(read(copyPath(s, 'notes.md'))).toBe('new\nmore\n');
    expect(read(s.zonePath('storage', 'notes.md'))).toBe('line one\nline two\n');
    expect(r.message).toContain('shed_lockedit_save');
  });

  it('refuses a working copy above the file size limit', async () => {
    s.tools.valves = { ...s.tools.valves, max_file_size_mb: 1 };
    await open();
    const r = await overwrite('y'.repeat(1024 * 1024 + 1));
    expect(r.error!.code).toBe('FILE_TOO_LARGE');
    expect(read(copyPath(s, 'notes.md'))).toBe('line one\nline two\n');
  });

  it('without an open edit: NOT_IN_EDIT_MODE naming the call that opens it', async () => {
    const r = await overwrite('x');
    expect(r.error!.code).toBe('NOT_IN_EDIT_MODE');
    expect(r.error!.hint).toContain('shed_lockedit_open(zone="storage", path="notes.md")');
    expect(read(s.zonePath('storage', 'notes.md'))).toBe('line one\nline two\n');
  });

  it('from another conversation: NOT_LOCK_OWNER, nothing written', async () => {
    await open();
    const r = await overwrite('theirs', {}, 'c2');
    expect(r.error!.code).toBe('NOT_LOCK_OWNER');
    expect(r.error!.hint).toContain('shed_force_unlock');
    expect(read(copyPath(s, 'notes.md'))).toBe('line one\nline two\n');
  });
});

describe('save', () => {
  it('writes the working copy to the file, releases the lock and closes edit mode', async () => {
    await open();
    await overwrite('final text\n');
    const r = await save();
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data).toMatchObject({ zone: 'Storage', path: 'notes.md', size: 11, previous_size: 18, edit_mode: 'closed' });
    expect(read(s.zonePath('storage', 'notes.md'))).toBe('final text\n');
    expect(exists(lockPath(s, 'notes.md'))).toBe(false);
    expect(exists(copyPath(s, 'notes.md'))).toBe(false);
    expect(fs.readdirSync(path.join(workBase(s), 'editzone'))).toEqual([]);
    // Another conversation can open it now.
    expect((await open('notes.md', 'c2')).success).toBe(true);
  });

  it('a second save says NOT_IN_EDIT_MODE with a hint to open again', async () => {
    await open();
    expect((await save()).success).toBe(true);
    const again = await save();
    expect(again.success).toBe(false);
    expect(again.error!.code).toBe('NOT_IN_EDIT_MODE');
    expect(again.error!.hint).toMatch(/shed_lockedit_open\(zone="storage", path="notes.md"\)/);
    expect(again.error!.hint).toContain('close edit mode');
  });

  it('commits in Documents with the message, authored by the user', async () => {
    put(s.zonePath('documents', 'doc.md'), 'v1\n');
    expect((await s.call('shed_patch_text', { zone: 'documents', path: 'doc.md', content: 'v2' })).success).toBe(true);
    await open('doc.md', 'c1', 'documents');
    await s.call('shed_lockedit_overwrite', { zone: 'documents', path: 'doc.md', content: 'v3\n' });
    const r = await save('c1', 'doc.md', 'documents', { message: 'Rewrite the doc' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data!.commit).toMatch(/^[0-9a-f]{7}$/);
    const repo = s.zonePath('documents');
    expect(git(repo, 'log', '-1', '--format=%s|%an')).toBe('Rewrite the doc|ALICE\n');
    expect(git(repo, 'show', 'HEAD:doc.md')).toBe('v3\n');
    expect(git(repo, 'status', '--porcelain')).toBe('');
    // Without a message: a descriptive default.
    await open('doc.md', 'c1', 'documents');
    await s.call('shed_lockedit_overwrite', { zone: 'documents', path: 'doc.md', content: 'v4\n' });
    await save('c1', 'doc.md', 'documents');
    expect(git(repo, 'log', '-1', '--format=%s')).toBe('Edit doc.md\n');
  });

  it('a refused save (quota) keeps the edit open, so it can be fixed and saved', async () => {
    const q = makeShed({ quota_per_user_mb: 1, sandbox: 'validated' });
    try {
      put(q.zonePath('storage', 'f.txt'), 'small');
      await q.call('shed_lockedit_open', { zone: 'storage', path: 'f.txt' });
      // Grown behind the function's back (as a command could): the save must still be judged.
      fs.writeFileSync(copyPath(q, 'f.txt'), Buffer.alloc(1024 * 1024 + 10, 0x61));
      const r = await q.call('shed_lockedit_save', { zone: 'storage', path: 'f.txt' });
      expect(r.error!.code).toBe('QUOTA_EXCEEDED');
      expect(read(q.zonePath('storage', 'f.txt'))).toBe('small');
      expect(exists(lockPath(q, 'f.txt'))).toBe(true);
      await q.call('shed_lockedit_overwrite', { zone: 'storage', path: 'f.txt', content: 'fits' });
      expect((await q.call('shed_lockedit_save', { zone: 'storage', path: 'f.txt' })).success).toBe(true);
      expect(read(q.zonePath('storage', 'f.txt'))).toBe('fits');
    } finally {
      q.cleanup();
    }
  });

  it('a refused save (file size) keeps the file and the edit', async () => {
    s.tools.valves = { ...s.tools.valves, max_file_size_mb: 1 };
    await open();
    fs.writeFileSync(copyPath(s, 'notes.md'), Buffer.alloc(1024 * 1024 + 1, 0x62));
    expect((await save()).error!.code).toBe('FILE_TOO_LARGE');
    expect(read(s.zonePath('storage', 'notes.md'))).toBe('line one\nline two\n');
    expect(exists(copyPath(s, 'notes.md'))).toBe(true);
  });

  it('recreates the file if it was deleted meanwhile (same conversation)', async () => {
    await open();
    await overwrite('back\n');
    fs.unlinkSync(s.zonePath('storage', 'notes.md'));
    expect((await save()).success).toBe(true);
    expect(read(s.zonePath('storage', 'notes.md'))).toBe('back\n');
  });
});

describe('working copies count against the quota while the edit is open', () => {
  const KB = 1024;
  let q: Shed;
  beforeEach(() => {
    q = makeShed({ quota_per_user_mb: 1, sandbox: 'validated' });
  });
  afterEach(() => q.cleanup());
  const qcall = (fn: string, args: Record<string, unknown> = {}) => q.call(fn, { zone: 'storage', path: 'f.bin', ...args });

  it('open refuses a copy that does not fit, and leaves no lock behind', async () => {
    put(q.zonePath('storage', 'f.bin'), Buffer.alloc(600 * KB));
    const r = await qcall('shed_lockedit_open');
    expect(r.error!.code).toBe('QUOTA_EXCEEDED');
    expect(r.error!.message).toContain('open edits count');
    expect(exists(lockPath(q, 'f.bin'))).toBe(false);
    expect(exists(copyPath(q, 'f.bin'))).toBe(false);
  });

  it('overwrite may grow the copy only into the free space', async () => {
    put(q.zonePath('storage', 'f.bin'), Buffer.alloc(300 * KB));
    expect((await qcall('shed_lockedit_open')).success).toBe(true);
    expect((await qcall('shed_lockedit_overwrite', { content: 'a'.repeat(500 * KB) })).success).toBe(true);
    const r = await qcall('shed_lockedit_overwrite', { content: 'a'.repeat(800 * KB) });
    expect(r.error!.code).toBe('QUOTA_EXCEEDED');
    expect(fs.statSync(copyPath(q, 'f.bin')).size).toBe(500 * KB);
  });

  it('a command cannot grow the copy past the free space (file size limit of the command)', async () => {
    put(q.zonePath('storage', 'f.bin'), Buffer.alloc(100 * KB));
    await qcall('shed_lockedit_open');
    const r = await qcall('shed_lockedit_exec', { cmd: 'truncate', args: ['-s', '2M', 'f.bin'] });
    expect(r.data!.returncode).not.toBe(0);
    expect(fs.statSync(copyPath(q, 'f.bin')).size).toBe(100 * KB);
    const ok = await qcall('shed_lockedit_exec', { cmd: 'truncate', args: ['-s', '500K', 'f.bin'] });
    expect(ok.data!.returncode).toBe(0);
    expect(fs.statSync(copyPath(q, 'f.bin')).size).toBe(500 * KB);
  });
});

describe('cancel', () => {
  it('discards the working copy, releases the lock, leaves the file', async () => {
    await open();
    await overwrite('throw away');
    const r = await cancel();
    expect(r.data).toMatchObject({ changes_discarded: true, lock_released: true, edit_mode: 'closed' });
    expect(read(s.zonePath('storage', 'notes.md'))).toBe('line one\nline two\n');
    expect(exists(lockPath(s, 'notes.md'))).toBe(false);
    expect(exists(copyPath(s, 'notes.md'))).toBe(false);
    expect((await cancel()).error!.code).toBe('NOT_IN_EDIT_MODE');
  });

  it('another conversation cannot cancel (and so release) the edit', async () => {
    await open();
    const r = await cancel('c2');
    expect(r.error!.code).toBe('NOT_LOCK_OWNER');
    expect(r.error!.hint).toContain('shed_force_unlock');
    expect(readLockJson(s, 'notes.md').conv_id).toBe('c1');
    expect(exists(copyPath(s, 'notes.md'))).toBe(true);
  });
});

describe('stale, corrupt and lost locks', () => {
  it('a lock older than lock_max_age_hours is taken over, and the answer says so', async () => {
    plantLock(s, 'notes.md', { conv_id: 'old', locked_at: '2000-01-01T00:00:00Z' });
    put(copyPath(s, 'notes.md', 'old'), 'abandoned changes');
    const r = await open();
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data!.stale_lock_taken_over).toMatchObject({ reason: 'expired', locked_at: '2000-01-01T00:00:00Z', held_by: 'another conversation' });
    expect(r.message).toMatch(/stale lock \(expired\) was taken over/);
    expect(readLockJson(s, 'notes.md').conv_id).toBe('c1');
    expect(exists(copyPath(s, 'notes.md', 'old'))).toBe(false);
    // The old conversation can no longer save.
    const old = await save('old');
    expect(old.error!.code).toBe('NOT_LOCK_OWNER');
  });

  it('a lock within its age is respected (lock_max_age_hours)', async () => {
    s.tools.valves = { ...s.tools.valves, lock_max_age_hours: 2 };
    plantLock(s, 'notes.md', { conv_id: 'recent', locked_at: new Date(Date.now() - 3600_000).toISOString() });
    expect((await open()).error!.code).toBe('FILE_LOCKED');
    plantLock(s, 'notes.md', { conv_id: 'recent', locked_at: new Date(Date.now() - 3 * 3600_000).toISOString() });
    expect((await open()).success).toBe(true);
  });

  it('a corrupt lock is taken over', async () => {
    put(lockPath(s, 'notes.md'), '{not json');
    const r = await open();
    expect(r.success).toBe(true);
    expect(r.data!.stale_lock_taken_over).toEqual({ reason: 'corrupt' });
  });

  it('the write lock of a process that died is stale at once', async () => {
    plantLock(s, 'notes.md', { conv_id: 'c9', kind: 'write', pid: 2 ** 22 + 12345, host: os.hostname() });
    const r = await open();
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data!.stale_lock_taken_over).toMatchObject({ reason: 'abandoned' });
  });

  it('activity renews the lock: an edit in use does not expire', async () => {
    s.tools.valves = { ...s.tools.valves, lock_max_age_hours: 1 };
    await open();
    const aged = { ...readLockJson(s, 'notes.md'), locked_at: new Date(Date.now() - 2 * 3600_000).toISOString() };
    fs.writeFileSync(lockPath(s, 'notes.md'), JSON.stringify(aged));
    await overwrite('still working\n');
    expect(Date.now() - Date.parse(String(readLockJson(s, 'notes.md').locked_at))).toBeLessThan(60_000);
    expect((await open('notes.md', 'c2')).error!.code).toBe('FILE_LOCKED');
  });

  it('a session whose lock was force-unlocked cannot save; it can cancel or reopen', async () => {
    await open();
    await overwrite('unsaved\n');
    const f = await s.call('shed_force_unlock', { zone: 'storage', path: 'notes.md' }, { chat: 'c2' });
    expect(f.data).toMatchObject({ lock_removed: true, working_copies_removed: 1 });
    // force_unlock removed the working copy too: nothing is open any more.
    expect((await save()).error!.code).toBe('NOT_IN_EDIT_MODE');
    // A lost lock with the copy still there (e.g. the lock file alone was removed):
    await open();
    await overwrite('unsaved again\n');
    fs.rmSync(lockPath(s, 'notes.md'));
    const lost = await save();
    expect(lost.error!.code).toBe('NOT_LOCK_OWNER');
    expect(lost.error!.details).toMatchObject({ lost_session: true });
    expect(lost.error!.hint).toContain('shed_lockedit_open');
    expect(read(s.zonePath('storage', 'notes.md'))).toBe('line one\nline two\n');
    const c = await cancel();
    expect(c.success).toBe(true);
    expect(c.message).toContain('already been lost');
    expect(exists(copyPath(s, 'notes.md'))).toBe(false);
  });

  it('reopening after a lost lock starts from the current file, not the stale copy', async () => {
    await open();
    await overwrite('stale copy\n');
    fs.rmSync(lockPath(s, 'notes.md'));
    const r = await open();
    expect(r.data).toMatchObject({ continued: false, content: 'line one\nline two\n' });
  });
});

describe('locks and the other write functions', () => {
  it('a safe-mode patch never destroys an open edit, in this or another conversation', async () => {
    await open();
    await overwrite('my edit\n');
    const lockBefore = read(lockPath(s, 'notes.md'));
    for (const chat of ['c1', 'c2']) {
      const p = await s.call('shed_patch_text', { zone: 'storage', path: 'notes.md', content: 'patched' }, { chat });
      expect(p.error!.code).toBe('FILE_LOCKED');
    }
    expect(read(lockPath(s, 'notes.md'))).toBe(lockBefore);
    expect(read(copyPath(s, 'notes.md'))).toBe('my edit\n');
    expect(read(s.zonePath('storage', 'notes.md'))).toBe('line one\nline two\n');
    expect((await save()).success).toBe(true);
    expect(read(s.zonePath('storage', 'notes.md'))).toBe('my edit\n');
    // Without an edit, the patch takes and releases its own short lock.
    expect((await s.call('shed_patch_text', { zone: 'storage', path: 'notes.md', content: 'x' })).success).toBe(true);
    expect(exists(lockPath(s, 'notes.md'))).toBe(false);
  });

  it('delete and rename by another conversation are refused while the edit is open', async () => {
    await open();
    expect((await s.call('shed_delete', { zone: 'storage', path: 'notes.md' }, { chat: 'c2' })).error!.code).toBe('FILE_LOCKED');
    expect((await s.call('shed_rename', { zone: 'storage', old_path: 'notes.md', new_path: 'x.md' }, { chat: 'c2' })).error!.code).toBe('FILE_LOCKED');
    expect(exists(s.zonePath('storage', 'notes.md'))).toBe(true);
  });
});

describe('shed_force_unlock', () => {
  it('removes the lock and the working copies of every conversation; the file is untouched', async () => {
    await open();
    await overwrite('c1 changes');
    put(copyPath(s, 'notes.md', 'c7'), 'a leftover of another conversation');
    const r = await s.call('shed_force_unlock', { zone: 'storage', path: 'notes.md' }, { chat: 'c2' });
    expect(r.data).toMatchObject({ lock_removed: true, working_copies_removed: 2, previous_lock: { held_by: 'another conversation' } });
    expect(read(s.zonePath('storage', 'notes.md'))).toBe('line one\nline two\n');
    expect(exists(lockPath(s, 'notes.md'))).toBe(false);
    expect(fs.readdirSync(path.join(workBase(s), 'editzone'))).toEqual([]);
    expect((await open('notes.md', 'c2')).success).toBe(true);
  });

  it('succeeds when nothing is locked, and works for a file that no longer exists', async () => {
    const r = await s.call('shed_force_unlock', { zone: 'storage', path: 'notes.md' });
    expect(r.success).toBe(true);
    expect(r.message).toContain('not locked');
    plantLock(s, 'gone.txt', {});
    const g = await s.call('shed_force_unlock', { zone: 'storage', path: 'gone.txt' });
    expect(g.data).toMatchObject({ lock_removed: true });
    expect(exists(lockPath(s, 'gone.txt'))).toBe(false);
  });

  it('refuses Uploads and needs a path', async () => {
    expect((await s.call('shed_force_unlock', { zone: 'uploads', path: 'a' })).error!.code).toBe('ZONE_READONLY');
    expect((await s.call('shed_force_unlock', { zone: 'storage' })).error!.code).toBe('MISSING_PARAMETER');
  });
});
