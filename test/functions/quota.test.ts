/**
 * Quota enforcement through shed_create_file (SPEC section 7: quota on every write path, judged by
 * net growth). Quota 1 MiB per user, covering Uploads (all conversations), Storage and Documents.
 * Files are also changed directly on disk and by another process, behind the counter's back.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Result, type Shed } from '../helpers/shed.js';

const QUOTA = 1024 * 1024; // quota_per_user_mb: 1

let s: Shed;

beforeEach(() => {
  s = makeShed({ quota_per_user_mb: 1 });
});

afterEach(() => {
  s.cleanup();
});

function create(p: string, content: string, zone = 'storage'): Promise<Result> {
  return s.call('shed_create_file', { zone, path: p, content });
}

function expectOk(r: Result): void {
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  expect(r.success).toBe(true);
}

function expectQuotaExceeded(r: Result): void {
  expect(r.success, JSON.stringify(r)).toBe(false);
  expect(r.error?.code).toBe('QUOTA_EXCEEDED');
  expect(r.error?.message).toMatch(/quota/i);
  expect(r.error?.hint).toBeTruthy();
}

function fill(zonePath: string, bytes: number): void {
  fs.mkdirSync(path.dirname(zonePath), { recursive: true });
  fs.writeFileSync(zonePath, Buffer.alloc(bytes, 0x61));
}

describe('quota: the limit itself', () => {
  it('a write of exactly the quota passes', async () => {
    expectOk(await create('full.txt', 'a'.repeat(QUOTA)));
    expect(fs.statSync(s.zonePath('storage', 'full.txt')).size).toBe(QUOTA);
  });

  it('a write of quota + 1 byte fails with QUOTA_EXCEEDED and writes nothing', async () => {
    expectQuotaExceeded(await create('over.txt', 'a'.repeat(QUOTA + 1)));
    expect(fs.existsSync(s.zonePath('storage', 'over.txt'))).toBe(false);
    expect(fs.readdirSync(s.zonePath('storage'))).toEqual([]); // no temp file left behind either
  });

  it('filling up to exactly the limit passes, one byte more fails, nothing written', async () => {
    expectOk(await create('big.txt', 'b'.repeat(QUOTA - 100)));
    expectOk(await create('exact.txt', 'c'.repeat(100)));
    const r = await create('one-more.txt', 'd');
    expectQuotaExceeded(r);
    expect(fs.existsSync(s.zonePath('storage', 'one-more.txt'))).toBe(false);
    expect(r.error?.details).toMatchObject({ quota_bytes: QUOTA, requested_bytes: 1, used_bytes: QUOTA });
  });

  it('a refused write into a new folder creates no folder', async () => {
    expectOk(await create('big.txt', 'b'.repeat(QUOTA)));
    expectQuotaExceeded(await create('newdir/sub/x.txt', 'x'));
    expect(fs.existsSync(s.zonePath('storage', 'newdir'))).toBe(false);
  });

  it('multi-byte characters are counted in bytes, not characters', async () => {
    // 'é' is two bytes: QUOTA/2 of them fill the quota exactly, one more character does not fit.
    expectOk(await create('e1.txt', '\u00e9'.repeat(QUOTA / 2)));
    expectQuotaExceeded(await create('e2.txt', '\u00e9'));
    expect(fs.existsSync(s.zonePath('storage', 'e2.txt'))).toBe(false);
  });
});

describe('quota: overwriting is judged by net growth', () => {
  it('overwriting a file with same-size content passes at full quota', async () => {
    expectOk(await create('f.txt', 'a'.repeat(QUOTA)));
    expectOk(await create('f.txt', 'b'.repeat(QUOTA)));
    const bytes = fs.readFileSync(s.zonePath('storage', 'f.txt'));
    expect(bytes.length).toBe(QUOTA);
    expect(bytes[0]).toBe(0x62);
    expect(bytes[QUOTA - 1]).toBe(0x62);
  });

  it('overwriting with smaller content passes at full quota; one byte larger fails and keeps the old file', async () => {
    expectOk(await create('f.txt', 'a'.repeat(QUOTA)));
    expectOk(await create('f.txt', 'b'.repeat(QUOTA - 10)));
    expectOk(await create('g.txt', 'g'.repeat(10)));
    expectQuotaExceeded(await create('f.txt', 'c'.repeat(QUOTA - 9)));
    const bytes = fs.readFileSync(s.zonePath('storage', 'f.txt'));
    expect(bytes.length).toBe(QUOTA - 10);
    expect(bytes[0]).toBe(0x62);
  });
});

describe('quota: changes behind its back', () => {
  it('after a big file is appended directly with fs, the next write is refused; after deleting it, writes pass', async () => {
    expectOk(await create('small.txt', 'hello')); // usage is known (and watched) from here
    const big = s.zonePath('storage', 'big.bin');
    fill(big, 1000);
    fs.appendFileSync(big, Buffer.alloc(QUOTA - 1000 - 5)); // exactly at the quota now
    expectQuotaExceeded(await create('next.txt', 'x'));
    expect(fs.existsSync(s.zonePath('storage', 'next.txt'))).toBe(false);
    fs.rmSync(big);
    expectOk(await create('next.txt', 'x'));
    expect(fs.readFileSync(s.zonePath('storage', 'next.txt'), 'utf8')).toBe('x');
  });

  it('an existing file grown by another process counts at once', async () => {
    expectOk(await create('log.txt', 'start\n'));
    expectOk(await create('pad.txt', 'p'.repeat(QUOTA - 6 - 10)));
    expectOk(await create('ten.txt', '0123456789')); // exactly full
    fs.rmSync(s.zonePath('storage', 'ten.txt'));
    expectOk(await create('ten.txt', '0123456789')); // the deletion was seen
    fs.rmSync(s.zonePath('storage', 'ten.txt'));
    execFileSync('sh', ['-c', 'echo x >> log.txt'], { cwd: s.zonePath('storage') }); // +2 bytes
    expectQuotaExceeded(await create('ten.txt', '0123456789'));
    expectOk(await create('eight.txt', '01234567'));
  });

  it('a file truncated directly frees space at once', async () => {
    expectOk(await create('f.txt', 'a'.repeat(QUOTA)));
    expectQuotaExceeded(await create('g.txt', 'g'));
    fs.truncateSync(s.zonePath('storage', 'f.txt'), QUOTA - 1);
    expectOk(await create('g.txt', 'g'));
  });

  it('files in Documents count against the same quota', async () => {
    expectOk(await create('s.txt', 'start'));
    fill(s.zonePath('documents', 'big.pdf'), QUOTA - 5);
    expectQuotaExceeded(await create('t.txt', 't'));
  });

  it('through the API only: Storage first, then Documents filled to the quota, then nothing more fits anywhere', async () => {
    expectOk(await create('s.txt', 'start')); // Documents has never been opened yet
    expectOk(await create('big.md', 'd'.repeat(QUOTA - 5), 'documents'));
    expectQuotaExceeded(await create('t.txt', 't'));
    expectQuotaExceeded(await create('u.md', 'u', 'documents'));
  });

  it('files in Uploads of any conversation count, even when Uploads did not exist at the first write', async () => {
    expectOk(await create('s.txt', 'start')); // Uploads has never been used yet
    fill(s.zonePath('uploads', 'scan.pdf', 'alice', 'other-chat'), QUOTA - 5);
    expectQuotaExceeded(await create('t.txt', 't'));
  });

  it("another user's files do not count", async () => {
    fill(s.zonePath('storage', 'bob-big.bin', 'bob'), QUOTA);
    expectOk(await create('mine.txt', 'm'.repeat(QUOTA)));
  });
});

describe('quota: zero quota', () => {
  it('quota_per_user_mb=0 refuses any growth', async () => {
    s.cleanup();
    s = makeShed({ quota_per_user_mb: 0 });
    expectQuotaExceeded(await create('x.txt', 'x'));
    expect(fs.existsSync(s.zonePath('storage', 'x.txt'))).toBe(false);
    expectOk(await create('empty.txt', ''));
  });
});

describe('quota: folders count, like files, by their own size (st_size)', () => {
  // 4 KiB per folder on ext4; a file system with tiny folder sizes cannot show the overrun here.
  const folderSize = () => fs.lstatSync(path.dirname(s.zonePath('storage'))).size;

  it('folders made by a command are charged, and a command making too many is stopped', async () => {
    fs.mkdirSync(s.zonePath('storage'), { recursive: true });
    const size = folderSize();
    if (size < 512) return;
    const ten = await s.call('shed_exec', { zone: 'storage', cmd: 'mkdir', args: ['-p', ...Array.from({ length: 10 }, (_, i) => `few/f${i}`)] });
    expectOk(ten);
    const stats = await s.call('shed_stats');
    expect(stats.data!.zones.Storage.size_bytes).toBeGreaterThanOrEqual(11 * size);
    const many = Math.ceil(QUOTA / size) + 20;
    const r = await s.call('shed_exec', { zone: 'storage', cmd: 'mkdir', args: Array.from({ length: many }, (_, i) => `d${i}`) });
    expectQuotaExceeded(r);
    // Stopped near the quota: far fewer folders than asked for (the overshoot is bounded like files').
    expect(fs.readdirSync(s.zonePath('storage')).length).toBeLessThan(many);
  });
});
