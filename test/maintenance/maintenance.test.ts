/**
 * shed_maintenance: removes expired, abandoned and corrupt locks with their working copies,
 * working copies without a lock, old scratch folders and temp files of interrupted writes; keeps
 * every live edit and every fresh temp file; reports what it removed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { copyPath, exists, lockPath, plantLock, put, read, workBase } from '../lockedit/helpers.js';

let s: Shed;
beforeEach(() => {
  s = makeShed({ sandbox: 'validated' });
});
afterEach(() => s.cleanup());

const maintain = () => s.call('shed_maintenance', {});
const age = (p: string, hours: number) => {
  const t = new Date(Date.now() - hours * 3600_000);
  fs.utimesSync(p, t, t);
};

describe('shed_maintenance', () => {
  it('on a fresh user: nothing to clean', async () => {
    const r = await maintain();
    expect(r.success).toBe(true);
    expect(r.data).toEqual({ expired_uploads: [], expired_locks: [], corrupted_locks: [], orphan_editzones: [], orphan_ownerships: [], temp_files: [], recovered_commits: [], internal_leftovers: 0, cleaned: 0 });
    expect(r.message).toBe('Maintenance complete: nothing to clean.');
  });

  it('cleans what interrupted work left and keeps the live edit', async () => {
    // A live edit of this conversation: must survive.
    put(s.zonePath('storage', 'live.md'), 'live');
    expect((await s.call('shed_lockedit_open', { zone: 'storage', path: 'live.md' })).success).toBe(true);
    await s.call('shed_lockedit_overwrite', { zone: 'storage', path: 'live.md', content: 'unsaved' });
    // An expired edit of another conversation, with its working copy.
    plantLock(s, 'old/expired.md', { conv_id: 'gone', locked_at: '2000-01-01T00:00:00Z' });
    put(copyPath(s, 'old/expired.md', 'gone'), 'abandoned');
    // A corrupt lock in Documents.
    put(lockPath(s, 'broken.md', 'documents'), 'not json at all');
    // A write lock of a process that died.
    plantLock(s, 'w.txt', { conv_id: 'c5', kind: 'write', pid: 2 ** 22 + 4321, host: os.hostname() });
    // A working copy with no lock at all, and one whose lock belongs to another conversation.
    put(copyPath(s, 'orphan.md', 'c3'), 'orphan');
    put(copyPath(s, 'live.md', 'c4'), 'a copy the lock does not know');
    // Temp files: an old one in Storage, one in Uploads of another conversation, a fresh one (kept).
    put(s.zonePath('storage', 'dir/.a.txt.0a1b2c.shedtmp'), 'half');
    age(s.zonePath('storage', 'dir/.a.txt.0a1b2c.shedtmp'), 2);
    put(s.zonePath('uploads', '.u.bin.99.shedtmp', 'alice', 'c9'), 'half');
    age(s.zonePath('uploads', '.u.bin.99.shedtmp', 'alice', 'c9'), 2);
    put(s.zonePath('storage', '.b.txt.fresh.shedtmp'), 'being written now');
    // An old scratch folder of lockedit_exec and an old lock temp file.
    put(path.join(workBase(s), 'scratch', 'c1-abc', 'f.txt'), 'x');
    age(path.join(workBase(s), 'scratch', 'c1-abc'), 2);
    put(path.join(workBase(s), 'locks', '.x.lock.deadbeef.tmp'), '{}');
    age(path.join(workBase(s), 'locks', '.x.lock.deadbeef.tmp'), 2);

    const r = await maintain();
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect((r.data!.expired_locks as string[]).sort()).toEqual(['Storage/old/expired.md', 'Storage/w.txt']);
    expect(r.data!.corrupted_locks).toEqual(['Documents/broken.md']);
    expect((r.data!.orphan_editzones as string[]).sort()).toEqual(['Storage/live.md', 'Storage/orphan.md']);
    expect((r.data!.temp_files as string[]).sort()).toEqual(['Storage/dir/.a.txt.0a1b2c.shedtmp', 'Uploads/c9/.u.bin.99.shedtmp']);
    expect(r.data!.internal_leftovers).toBe(2);
    expect(r.data!.cleaned).toBe(9);
    expect(r.message).toContain('9 items cleaned');
    expect(JSON.stringify(r)).not.toContain(s.base);

    expect(exists(lockPath(s, 'old/expired.md'))).toBe(false);
    expect(exists(copyPath(s, 'old/expired.md', 'gone'))).toBe(false);
    expect(exists(lockPath(s, 'broken.md', 'documents'))).toBe(false);
    expect(exists(lockPath(s, 'w.txt'))).toBe(false);
    expect(exists(copyPath(s, 'orphan.md', 'c3'))).toBe(false);
    expect(exists(copyPath(s, 'live.md', 'c4'))).toBe(false);
    expect(exists(path.join(workBase(s), 'scratch', 'c1-abc'))).toBe(false);
    expect(exists(s.zonePath('storage', '.b.txt.fresh.shedtmp'))).toBe(true);
    // The live edit is intact and can be saved.
    expect(exists(lockPath(s, 'live.md'))).toBe(true);
    expect(read(copyPath(s, 'live.md'))).toBe('unsaved');
    expect((await s.call('shed_lockedit_save', { zone: 'storage', path: 'live.md' })).success).toBe(true);
    expect(read(s.zonePath('storage', 'live.md'))).toBe('unsaved');
    // A second run finds nothing more.
    expect((await maintain()).data!.cleaned).toBe(0);
  });

  it('uses lock_max_age_hours: a lock younger than it stays', async () => {
    s.tools.valves = { ...s.tools.valves, lock_max_age_hours: 48 };
    plantLock(s, 'a.md', { conv_id: 'other', locked_at: new Date(Date.now() - 30 * 3600_000).toISOString() });
    put(copyPath(s, 'a.md', 'other'), 'x');
    expect((await maintain()).data!.cleaned).toBe(0);
    expect(exists(lockPath(s, 'a.md'))).toBe(true);
    s.tools.valves = { ...s.tools.valves, lock_max_age_hours: 24 };
    expect((await maintain()).data!.expired_locks).toEqual(['Storage/a.md']);
    expect(exists(copyPath(s, 'a.md', 'other'))).toBe(false);
  });

  it('a lock file whose recorded conversation is not a safe name removes no working copy outside the editzone', async () => {
    put(path.join(workBase(s), 'keep.txt'), 'keep');
    plantLock(s, 'keep.txt', { conv_id: '..', locked_at: '2000-01-01T00:00:00Z' });
    const r = await maintain();
    expect(r.data!.expired_locks).toEqual(['Storage/keep.txt']);
    expect(read(path.join(workBase(s), 'keep.txt'))).toBe('keep');
  });

  it('only touches the calling user', async () => {
    plantLock(s, 'x.md', { user_id: 'bob', conv_id: 'b', locked_at: '2000-01-01T00:00:00Z' });
    fs.renameSync(path.join(s.base, 'users', 'alice'), path.join(s.base, 'users', 'bob'));
    const r = await maintain();
    expect(r.data!.cleaned).toBe(0);
    expect(exists(path.join(s.base, 'users', 'bob', 'Storage', 'locks', 'x.md.lock'))).toBe(true);
  });
});
