import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';

let s: Shed;
afterEach(() => {
  vi.restoreAllMocks();
  s?.cleanup();
});

const BYTES = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0x10, 0x7f, 0x41, 0x42]);

function put(zone: 'storage' | 'documents' | 'uploads', rel: string, bytes: Uint8Array | string): string {
  const abs = s.zonePath(zone, rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, bytes);
  return abs;
}

const read = (args: Record<string, unknown>) => s.call('shed_read_bytes', { zone: 'storage', ...args });

describe('shed_read_bytes', () => {
  it('returns the whole file as lowercase hex by default', async () => {
    s = makeShed();
    put('storage', 'a.bin', BYTES);
    const r = await read({ path: 'a.bin' });
    expect(r.success).toBe(true);
    expect(r.data).toMatchObject({
      path: 'a.bin',
      zone: 'Storage',
      content: '89504e4700ff107f4142',
      content_format: 'hex',
      offset: 0,
      bytes_read: 10,
      total_size: 10,
      truncated: false,
    });
    expect(r.data).not.toHaveProperty('next_offset');
  });

  it('returns base64 that decodes to the exact bytes', async () => {
    s = makeShed();
    put('storage', 'a.bin', BYTES);
    const r = await read({ path: 'a.bin', output_format: 'base64' });
    expect(Buffer.from(r.data?.content as string, 'base64')).toEqual(BYTES);
    expect(r.data?.content_format).toBe('base64');
  });

  it('reads a range with offset and length, and says where the rest starts', async () => {
    s = makeShed();
    put('storage', 'a.bin', BYTES);
    const r = await read({ path: 'a.bin', offset: 2, length: 3 });
    expect(r.data).toMatchObject({ content: '4e4700', bytes_read: 3, offset: 2, next_offset: 5, truncated: false });
  });

  it('accepts numeric strings for offset and length', async () => {
    s = makeShed();
    put('storage', 'a.bin', BYTES);
    const r = await read({ path: 'a.bin', offset: '8', length: '5' });
    expect(r.data).toMatchObject({ content: '4142', bytes_read: 2 });
  });

  it('returns empty content for an offset at or past the end', async () => {
    s = makeShed();
    put('storage', 'a.bin', BYTES);
    const r = await read({ path: 'a.bin', offset: 10 });
    expect(r.success).toBe(true);
    expect(r.data).toMatchObject({ content: '', bytes_read: 0, total_size: 10 });
    expect(r.message).toContain('offset 10');
  });

  it('cuts hex to the output limit and pages on with next_offset', async () => {
    s = makeShed({ max_output_default: 100 });
    const data = Buffer.from(Array.from({ length: 120 }, (_, i) => i));
    put('storage', 'big.bin', data);
    const first = await read({ path: 'big.bin' });
    expect(first.data).toMatchObject({ bytes_read: 50, truncated: true, next_offset: 50 });
    expect((first.data?.content as string).length).toBeLessThanOrEqual(100);
    expect(first.message).toContain('TRUNCATED');
    expect(first.message).toContain('offset=50');
    const second = await read({ path: 'big.bin', offset: 50 });
    const third = await read({ path: 'big.bin', offset: 100 });
    expect(third.data).toMatchObject({ truncated: false, bytes_read: 20 });
    const joined = Buffer.from((first.data!.content as string) + (second.data!.content as string) + (third.data!.content as string), 'hex');
    expect(joined).toEqual(data);
  });

  it('cuts base64 to the output limit too', async () => {
    s = makeShed({ max_output_default: 100 });
    put('storage', 'big.bin', Buffer.alloc(500, 3));
    const r = await read({ path: 'big.bin', output_format: 'base64', length: 400 });
    expect(r.data).toMatchObject({ bytes_read: 75, truncated: true, next_offset: 75 });
    expect((r.data?.content as string).length).toBeLessThanOrEqual(100);
  });

  it('reads only the requested range, never the whole file', async () => {
    s = makeShed();
    const abs = put('storage', 'huge.bin', '');
    fs.truncateSync(abs, 64 * 1024 * 1024); // sparse 64 MiB
    const whole = vi.spyOn(fs, 'readFileSync');
    const opened = vi.spyOn(fs, 'openSync'); // proves the spies see the function's fs calls
    const r = await read({ path: 'huge.bin', offset: 1000, length: 4 });
    expect(r.data).toMatchObject({ content: '00000000', total_size: 64 * 1024 * 1024 });
    expect(opened.mock.calls.some(([p]) => String(p).endsWith('huge.bin'))).toBe(true);
    expect(whole.mock.calls.some(([p]) => String(p).endsWith('huge.bin'))).toBe(false);
  });

  it('reads from Uploads', async () => {
    s = makeShed();
    put('uploads', 'up.bin', BYTES);
    const r = await s.call('shed_read_bytes', { zone: 'uploads', path: 'up.bin', length: 2 });
    expect(r.data?.content).toBe('8950');
  });

  it.each([
    [{ offset: -1 }, 'offset'],
    [{ length: 0 }, 'length'],
    [{ output_format: 'binary' }, 'output_format'],
  ])('refuses %j naming the parameter', async (extra, param) => {
    s = makeShed();
    put('storage', 'a.bin', BYTES);
    const r = await read({ path: 'a.bin', ...extra });
    expect(r.error?.code).toBe('INVALID_PARAMETER');
    expect(r.error?.message).toContain(`'${param}'`);
    expect(r.error?.hint).toContain('shed_read_bytes(');
  });

  it('gives FILE_NOT_FOUND and NOT_A_FILE', async () => {
    s = makeShed();
    fs.mkdirSync(s.zonePath('storage', 'dir'), { recursive: true });
    expect((await read({ path: 'nope.bin' })).error?.code).toBe('FILE_NOT_FOUND');
    expect((await read({ path: 'dir' })).error?.code).toBe('NOT_A_FILE');
  });

  it('refuses traversal and symlinks leading outside', async () => {
    s = makeShed();
    const outsideDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-outside-'));
    try {
      fs.writeFileSync(path.join(outsideDir, 'secret'), 'SECRET');
      fs.mkdirSync(s.zonePath('storage'), { recursive: true });
      fs.symlinkSync(path.join(outsideDir, 'secret'), s.zonePath('storage', 'link'));
      const viaLink = await read({ path: 'link' });
      expect(viaLink.error?.code).toBe('PATH_ESCAPE');
      expect(JSON.stringify(viaLink)).not.toContain(Buffer.from('SECRET').toString('hex'));
      expect((await read({ path: '../../../etc/passwd' })).error?.code).toBe('PATH_ESCAPE');
    } finally {
      fs.rmSync(outsideDir, { recursive: true, force: true });
    }
  });
});
