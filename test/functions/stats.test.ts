import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';

let s: Shed;
beforeEach(() => {
  s = makeShed({ quota_per_user_mb: 1 });
});
afterEach(() => s.cleanup());

const MIB = 1024 * 1024;

function put(file: string, content: string | Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

/** Folders count toward usage with their own size (st_size), like files; the zones' roots do not. */
function dirs(...abs: string[]): number {
  return abs.reduce((n, p) => n + fs.lstatSync(p).size, 0);
}

async function stats(shed = s) {
  const r = await shed.call('shed_stats');
  expect(r.success).toBe(true);
  return r.data as {
    zones: Record<'Uploads' | 'Storage' | 'Documents', { size_bytes: number; size_human: string; files: number }>;
    total: { size_bytes: number; size_human: string; files: number; quota_mb: number; quota_bytes: number; usage_percent: string; remaining_bytes: number };
  };
}

describe('shed_stats', () => {
  it('reports zero for a new user and creates nothing on disk', async () => {
    const d = await stats();
    expect(d.zones).toEqual({
      Uploads: { size_bytes: 0, size_human: '0 B', files: 0 },
      Storage: { size_bytes: 0, size_human: '0 B', files: 0 },
      Documents: { size_bytes: 0, size_human: '0 B', files: 0, history_bytes: 0 },
    });
    expect(d.total).toEqual({
      size_bytes: 0,
      size_human: '0 B',
      files: 0,
      quota_mb: 1,
      quota_bytes: MIB,
      usage_percent: '0.0%',
      remaining_bytes: MIB,
    });
    expect(fs.readdirSync(s.base)).toEqual([]);
  });

  it('counts exact bytes per zone: every Uploads conversation, nested folders, Documents history', async () => {
    put(s.zonePath('uploads', 'a.csv'), Buffer.alloc(1000));
    put(s.zonePath('uploads', 'b.csv', 'alice', 'c2'), Buffer.alloc(2000));
    put(s.zonePath('storage', 'top.bin'), Buffer.alloc(MIB / 4));
    put(s.zonePath('storage', 'x/y/z.bin'), Buffer.alloc(12345));
    put(s.zonePath('storage', '.dot'), 'abc');
    put(s.zonePath('documents', 'r.md'), 'hello');
    // The history sits beside the zone (Documents/git): it counts toward the quota, its objects are not "files".
    const history = path.join(s.zonePath('documents'), '..', 'git');
    put(path.join(history, 'objects/ab/cdef'), Buffer.alloc(300));
    // Outside the counted trees: another user, and the lock/editzone folders.
    put(s.zonePath('storage', 'theirs.bin', 'bob'), Buffer.alloc(5000));
    put(path.join(s.base, 'users', 'alice', 'Storage', 'locks', 'top.bin.lock'), '{}');

    const d = await stats();
    const upDirs = dirs(s.zonePath('uploads'), s.zonePath('uploads', '', 'alice', 'c2'));
    const storeDirs = dirs(s.zonePath('storage', 'x'), s.zonePath('storage', 'x/y'));
    const historyDirs = dirs(path.join(history, 'objects'), path.join(history, 'objects/ab'));
    expect(upDirs).toBeGreaterThan(0);
    expect(d.zones.Uploads).toMatchObject({ size_bytes: 3000 + upDirs, files: 2 });
    expect(d.zones.Storage).toMatchObject({ size_bytes: MIB / 4 + 12345 + 3 + storeDirs, files: 3 });
    expect(d.zones.Documents).toEqual({ size_bytes: 5, size_human: '5 B', files: 1, history_bytes: 300 + historyDirs });
    const used = 3000 + MIB / 4 + 12345 + 3 + 5 + 300 + upDirs + storeDirs + historyDirs;
    expect(d.total).toMatchObject({ size_bytes: used, files: 6, quota_bytes: MIB, remaining_bytes: MIB - used });
  });

  it('stays exact when files change directly on disk between two calls', async () => {
    put(s.zonePath('storage', 'grow.txt'), 'a'.repeat(100));
    put(s.zonePath('storage', 'shrink.txt'), 'b'.repeat(500));
    put(s.zonePath('storage', 'gone/one.txt'), 'c'.repeat(70));
    put(s.zonePath('uploads', 'up.txt'), 'd'.repeat(40));
    const before = await stats();
    expect(before.zones.Storage).toMatchObject({ size_bytes: 670 + dirs(s.zonePath('storage', 'gone')), files: 3 });
    expect(before.zones.Uploads).toMatchObject({ size_bytes: 40 + dirs(s.zonePath('uploads')), files: 1 });
    expect(before.zones.Documents).toMatchObject({ size_bytes: 0, files: 0 });

    fs.appendFileSync(s.zonePath('storage', 'grow.txt'), 'a'.repeat(23)); // 123
    fs.truncateSync(s.zonePath('storage', 'shrink.txt'), 7); // 7
    fs.rmSync(s.zonePath('storage', 'gone'), { recursive: true });
    put(s.zonePath('storage', 'new/deep/n.txt'), 'n'.repeat(9)); // 9
    fs.rmSync(s.zonePath('uploads', 'up.txt'));
    put(s.zonePath('documents', 'later.md'), 'l'.repeat(11)); // a zone that did not exist at the first call

    const after = await stats();
    const newDirs = dirs(s.zonePath('storage', 'new'), s.zonePath('storage', 'new/deep'));
    const convDir = dirs(s.zonePath('uploads'));
    expect(after.zones.Storage).toMatchObject({ size_bytes: 123 + 7 + 9 + newDirs, files: 3 });
    expect(after.zones.Uploads).toMatchObject({ size_bytes: convDir, files: 0 });
    expect(after.zones.Documents).toMatchObject({ size_bytes: 11, files: 1 });
    expect(after.total.size_bytes).toBe(123 + 7 + 9 + 11 + newDirs + convDir);

    fs.writeFileSync(s.zonePath('storage', 'grow.txt'), 'replaced'); // 8
    fs.renameSync(s.zonePath('storage', 'new'), s.zonePath('storage', 'renamed'));
    fs.rmSync(s.zonePath('documents'), { recursive: true });
    const third = await stats();
    expect(third.zones.Storage).toMatchObject({ size_bytes: 8 + 7 + 9 + dirs(s.zonePath('storage', 'renamed'), s.zonePath('storage', 'renamed/deep')), files: 3 });
    expect(third.zones.Documents).toMatchObject({ size_bytes: 0, files: 0 });
  });

  it('sees deletes and renames made through the tools', async () => {
    put(s.zonePath('storage', 'a.bin'), Buffer.alloc(4096));
    put(s.zonePath('uploads', 'u.bin'), Buffer.alloc(1024));
    expect((await stats()).total.size_bytes).toBe(5120 + dirs(s.zonePath('uploads')));
    expect((await s.call('shed_delete', { zone: 'uploads', path: 'u.bin' })).success).toBe(true);
    expect((await s.call('shed_rename', { zone: 'storage', old_path: 'a.bin', new_path: 'b/a.bin' })).success).toBe(true);
    const d = await stats();
    expect(d.zones.Uploads.size_bytes).toBe(dirs(s.zonePath('uploads')));
    expect(d.zones.Storage).toMatchObject({ size_bytes: 4096 + dirs(s.zonePath('storage', 'b')), files: 1 });
  });

  it('reports usage over the quota as more than 100% with nothing remaining', async () => {
    put(s.zonePath('storage', 'big.bin'), Buffer.alloc(MIB + MIB / 2));
    const d = await stats();
    expect(d.total).toMatchObject({ usage_percent: '150.0%', remaining_bytes: 0, size_human: '1.5 MiB' });
  });

  it('needs a user', async () => {
    const r = JSON.parse(await s.tools.shed_stats!({})) as { success: boolean; error: { code: string } };
    expect(r.success).toBe(false);
    expect(r.error.code).toBe('INVALID_USER');
  });

  it('keeps users apart', async () => {
    put(s.zonePath('storage', 'a.bin', 'bob'), Buffer.alloc(77));
    const bob = await s.call('shed_stats', {}, { user: 'bob' });
    expect(bob.data!.total.size_bytes).toBe(77);
    expect((await stats()).total.size_bytes).toBe(0);
  });
});
