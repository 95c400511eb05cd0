import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';

let s: Shed;
afterEach(() => s?.cleanup());

function put(rel: string, bytes: Uint8Array | string, zone: 'storage' | 'documents' | 'uploads' = 'storage'): string {
  const abs = s.zonePath(zone, rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, bytes);
  return abs;
}

const convert = (args: Record<string, unknown>) => s.call('shed_convert_eol', { zone: 'storage', ...args });
const disk = (rel: string, zone: 'storage' | 'documents' = 'storage') => fs.readFileSync(s.zonePath(zone, rel), 'latin1');

describe('shed_convert_eol: conversions', () => {
  it('converts CRLF to LF by default', async () => {
    s = makeShed();
    put('a.txt', 'one\r\ntwo\r\nthree');
    const r = await convert({ path: 'a.txt' });
    expect(r.success).toBe(true);
    expect(disk('a.txt')).toBe('one\ntwo\nthree');
    expect(r.data).toMatchObject({ path: 'a.txt', zone: 'Storage', original_format: 'dos', new_format: 'unix', changed: true, lines_converted: 2, file_size: 13 });
    expect(r.message).toContain('Storage/a.txt');
  });

  it.each(['dos', 'crlf', 'windows', 'CRLF', 'Windows'])('converts LF to CRLF with to=%j', async (to) => {
    s = makeShed();
    put('a.txt', 'x\ny\n');
    const r = await convert({ path: 'a.txt', to });
    expect(r.success).toBe(true);
    expect(disk('a.txt')).toBe('x\r\ny\r\n');
    expect(r.data).toMatchObject({ original_format: 'unix', new_format: 'dos', lines_converted: 2 });
  });

  it('normalises mixed endings (CRLF, LF, lone CR) to LF', async () => {
    s = makeShed();
    put('m.txt', 'a\r\nb\nc\rd\r\n');
    const r = await convert({ path: 'm.txt', to: 'lf' });
    expect(disk('m.txt')).toBe('a\nb\nc\nd\n');
    expect(r.data).toMatchObject({ original_format: 'mixed', lines_converted: 3 });
  });

  it('normalises mixed endings to CRLF without doubling CRs', async () => {
    s = makeShed();
    put('m.txt', 'a\r\nb\nc\rd');
    const r = await convert({ path: 'm.txt', to: 'dos' });
    expect(disk('m.txt')).toBe('a\r\nb\r\nc\r\nd');
    expect(r.data).toMatchObject({ original_format: 'mixed', lines_converted: 2 });
  });

  it('converts old Mac CR endings', async () => {
    s = makeShed();
    put('mac.txt', 'a\rb\r');
    const r = await convert({ path: 'mac.txt', to: 'unix' });
    expect(disk('mac.txt')).toBe('a\nb\n');
    expect(r.data?.original_format).toBe('mac');
  });

  it('keeps UTF-8 content intact', async () => {
    s = makeShed();
    put('u.txt', 'héllo €\r\n日本\r\n');
    await convert({ path: 'u.txt' });
    expect(fs.readFileSync(s.zonePath('storage', 'u.txt'), 'utf8')).toBe('héllo €\n日本\n');
  });

  it('does not write when nothing changes', async () => {
    s = makeShed();
    const abs = put('a.txt', 'x\ny\n');
    const before = fs.statSync(abs);
    const r = await convert({ path: 'a.txt', to: 'unix' });
    expect(r.success).toBe(true);
    expect(r.data).toMatchObject({ changed: false, lines_converted: 0, original_format: 'unix' });
    expect(fs.statSync(abs).ino).toBe(before.ino); // an atomic write would have replaced the inode
    expect(r.message).toContain('not changed');
  });

  it('reports none for a file without line endings', async () => {
    s = makeShed();
    const abs = put('one.txt', 'single line');
    const ino = fs.statSync(abs).ino;
    const r = await convert({ path: 'one.txt', to: 'dos' });
    expect(r.data).toMatchObject({ original_format: 'none', changed: false });
    expect(fs.statSync(abs).ino).toBe(ino);
  });

  it('works in Documents', async () => {
    s = makeShed();
    put('d.txt', 'a\r\n', 'documents');
    const r = await s.call('shed_convert_eol', { zone: 'documents', path: 'd.txt', to: 'unix' });
    expect(r.success).toBe(true);
    expect(disk('d.txt', 'documents')).toBe('a\n');
  });
});

describe('shed_convert_eol: refusals', () => {
  it('refuses an unknown target listing the accepted values', async () => {
    s = makeShed();
    put('a.txt', 'x\r\n');
    const r = await convert({ path: 'a.txt', to: 'mac' });
    expect(r.error?.code).toBe('INVALID_PARAMETER');
    expect(r.error?.message).toContain("'to'");
    for (const v of ['unix', 'lf', 'dos', 'crlf', 'windows']) expect(r.error?.message).toContain(`"${v}"`);
    expect(r.error?.hint).toContain('shed_convert_eol(');
    expect(disk('a.txt')).toBe('x\r\n');
  });

  it('refuses binary files with INVALID_FORMAT and leaves them alone', async () => {
    s = makeShed();
    const bytes = Buffer.from([0x41, 0x0d, 0x0a, 0x00, 0x42, 0x0a]);
    put('b.bin', bytes);
    const r = await convert({ path: 'b.bin' });
    expect(r.error?.code).toBe('INVALID_FORMAT');
    expect(fs.readFileSync(s.zonePath('storage', 'b.bin'))).toEqual(bytes);
  });

  it('refuses folders, the zone root and missing files', async () => {
    s = makeShed();
    fs.mkdirSync(s.zonePath('storage', 'dir'), { recursive: true });
    expect((await convert({ path: 'dir' })).error?.code).toBe('NOT_A_FILE');
    expect((await convert({ path: '.' })).error?.code).toBe('INVALID_PATH');
    expect((await convert({ path: 'nope.txt' })).error?.code).toBe('FILE_NOT_FOUND');
  });

  it('refuses Uploads with ZONE_READONLY and leaves the file alone', async () => {
    s = makeShed();
    put('u.txt', 'a\r\n', 'uploads');
    const r = await s.call('shed_convert_eol', { zone: 'uploads', path: 'u.txt' });
    expect(r.error?.code).toBe('ZONE_READONLY');
    expect(fs.readFileSync(s.zonePath('uploads', 'u.txt'), 'latin1')).toBe('a\r\n');
  });

  it('refuses traversal and a symlink leading outside, leaving the outside file unchanged', async () => {
    s = makeShed();
    const outsideDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-outside-'));
    const outside = path.join(outsideDir, 'victim.txt');
    fs.writeFileSync(outside, 'a\r\nb\r\n');
    try {
      fs.mkdirSync(s.zonePath('storage'), { recursive: true });
      fs.symlinkSync(outside, s.zonePath('storage', 'link.txt'));
      expect((await convert({ path: 'link.txt' })).error?.code).toBe('PATH_ESCAPE');
      expect((await convert({ path: '../../../victim.txt' })).error?.code).toBe('PATH_ESCAPE');
      expect(fs.readFileSync(outside, 'latin1')).toBe('a\r\nb\r\n');
    } finally {
      fs.rmSync(outsideDir, { recursive: true, force: true });
    }
  });

  it('refuses a result above max_file_size_mb', async () => {
    s = makeShed({ max_file_size_mb: 1 });
    put('big.txt', 'a\n'.repeat(400 * 1024)); // 800 KiB, 1.2 MiB as CRLF
    const r = await convert({ path: 'big.txt', to: 'dos' });
    expect(r.error?.code).toBe('FILE_TOO_LARGE');
    expect(fs.statSync(s.zonePath('storage', 'big.txt')).size).toBe(800 * 1024);
  });

  it('refuses growth past the quota', async () => {
    s = makeShed({ quota_per_user_mb: 1 });
    put('nl.txt', '\n'.repeat(600 * 1024)); // doubles to 1.2 MiB
    const r = await convert({ path: 'nl.txt', to: 'dos' });
    expect(r.error?.code).toBe('QUOTA_EXCEEDED');
    expect(fs.statSync(s.zonePath('storage', 'nl.txt')).size).toBe(600 * 1024);
  });

  it('shrinking always passes the quota', async () => {
    s = makeShed({ quota_per_user_mb: 1 });
    put('crlf.txt', '\r\n'.repeat(400 * 1024));
    const r = await convert({ path: 'crlf.txt', to: 'unix' });
    expect(r.success).toBe(true);
    expect(fs.statSync(s.zonePath('storage', 'crlf.txt')).size).toBe(400 * 1024);
  });

  it('respects a lock held by another conversation, not one of this conversation', async () => {
    s = makeShed();
    put('a.txt', 'x\r\n');
    const lock = path.join(s.base, 'users', 'alice', 'Storage', 'locks', 'a.txt.lock');
    fs.mkdirSync(path.dirname(lock), { recursive: true });
    fs.writeFileSync(lock, JSON.stringify({ user_id: 'alice', conv_id: 'other', locked_at: new Date().toISOString(), path: 'a.txt' }));
    expect((await convert({ path: 'a.txt' })).error?.code).toBe('FILE_LOCKED');
    expect(disk('a.txt')).toBe('x\r\n');
    fs.writeFileSync(lock, JSON.stringify({ user_id: 'alice', conv_id: 'c1', locked_at: new Date().toISOString(), path: 'a.txt' }));
    expect((await convert({ path: 'a.txt' })).success).toBe(true);
    expect(disk('a.txt')).toBe('x\n');
  });
});
