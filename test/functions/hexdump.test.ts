import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';

let s: Shed;
const hasXxd = (() => {
  try {
    execFileSync('xxd', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
afterEach(() => s?.cleanup());

function put(rel: string, bytes: Uint8Array | string): void {
  const abs = s.zonePath('storage', rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, bytes);
}

const dump = (args: Record<string, unknown>) => s.call('shed_hexdump', { zone: 'storage', ...args });

describe('shed_hexdump', () => {
  it('formats a short file exactly like xxd (padded hex, two spaces, ASCII with dots)', async () => {
    s = makeShed();
    put('n.txt', '[1]\nNEW[3]\n');
    const r = await dump({ path: 'n.txt' });
    expect(r.success).toBe(true);
    expect(r.data?.hexdump).toBe('00000000: 5b31 5d0a 4e45 575b 335d 0a              [1].NEW[3].');
    expect(r.data).toMatchObject({ path: 'n.txt', zone: 'Storage', offset: 0, length: 11, file_size: 11 });
  });

  it('prints 16 bytes per line with absolute addresses, non-printables as dots', async () => {
    s = makeShed();
    put('b.bin', Buffer.from([...Buffer.from('Hello, world!\n\t'), 0x00, 0x7f, 0x80, 0xff, 0x20, 0x7e]));
    const r = await dump({ path: 'b.bin' });
    const lines = (r.data?.hexdump as string).split('\n');
    expect(lines).toEqual([
      '00000000: 4865 6c6c 6f2c 2077 6f72 6c64 210a 0900  Hello, world!...',
      '00000010: 7f80 ff20 7e                             ... ~',
    ]);
  });

  it('starts at offset and shows the file offset as address', async () => {
    s = makeShed();
    put('b.bin', Buffer.from(Array.from({ length: 40 }, (_, i) => 0x41 + (i % 26))));
    const r = await dump({ path: 'b.bin', offset: 16, length: 4 });
    expect(r.data?.hexdump).toBe('00000010: 5152 5354                                QRST');
    expect(r.data).toMatchObject({ offset: 16, length: 4, next_offset: 20 });
    expect(r.message).toContain('offset=20');
  });

  it('shows 256 bytes by default and tells where to continue', async () => {
    s = makeShed();
    put('big.bin', Buffer.alloc(1000, 0x61));
    const r = await dump({ path: 'big.bin' });
    expect(r.data).toMatchObject({ length: 256, next_offset: 256, file_size: 1000 });
    expect((r.data?.hexdump as string).split('\n')).toHaveLength(16);
  });

  it.skipIf(!hasXxd)('matches xxd byte for byte on random data', async () => {
    s = makeShed();
    put('r.bin', crypto.randomBytes(300));
    const r = await dump({ path: 'r.bin', offset: 5, length: 250 });
    const xxd = execFileSync('xxd', ['-s', '5', '-l', '250', s.zonePath('storage', 'r.bin')], { encoding: 'utf8' });
    // Only the final newline differs: a dump may legitimately end in spaces (bytes 0x20 in the ASCII column).
    expect(r.data?.hexdump).toBe(xxd.replace(/\n$/, ''));
  });

  it.skipIf(!hasXxd)('matches xxd when the last bytes are spaces', async () => {
    s = makeShed();
    put('sp.bin', Buffer.from('ab  '));
    const r = await dump({ path: 'sp.bin' });
    const xxd = execFileSync('xxd', [s.zonePath('storage', 'sp.bin')], { encoding: 'utf8' });
    expect(r.data?.hexdump).toBe(xxd.replace(/\n$/, ''));
  });

  it('keeps the dump within the output limit', async () => {
    s = makeShed({ max_output_default: 200 });
    put('big.bin', Buffer.alloc(1000, 0x61));
    const r = await dump({ path: 'big.bin', length: 1000 });
    expect(r.data).toMatchObject({ length: 32, next_offset: 32 });
    expect((r.data?.hexdump as string).length).toBeLessThanOrEqual(200);
  });

  it('clamps length to 1..4096', async () => {
    s = makeShed();
    put('big.bin', Buffer.alloc(10000, 0x61));
    const big = await dump({ path: 'big.bin', length: 100000 });
    expect(big.data?.length).toBe(4096);
    expect((big.data?.hexdump as string).split('\n')).toHaveLength(256);
    expect(big.message).toContain('adjusted');
    const zero = await dump({ path: 'big.bin', length: 0 });
    expect(zero.data?.length).toBe(1);
    expect(zero.data?.hexdump).toBe(`00000000: 61${' '.repeat(37)}  a`);
  });

  it('succeeds with a clear message when offset is at or past the end', async () => {
    s = makeShed();
    put('n.txt', 'abc');
    const r = await dump({ path: 'n.txt', offset: 3 });
    expect(r.success).toBe(true);
    expect(r.data).toMatchObject({ hexdump: '', length: 0, file_size: 3 });
    expect(r.message).toContain('offset 3');
    expect(r.message).toContain('past the end');
  });

  it('refuses a negative offset naming the parameter', async () => {
    s = makeShed();
    put('n.txt', 'abc');
    const r = await dump({ path: 'n.txt', offset: -5 });
    expect(r.error?.code).toBe('INVALID_PARAMETER');
    expect(r.error?.message).toContain("'offset'");
    expect(r.error?.hint).toContain('shed_hexdump(');
  });

  it('refuses a folder with NOT_A_FILE and a missing file with FILE_NOT_FOUND', async () => {
    s = makeShed();
    fs.mkdirSync(s.zonePath('storage', 'dir'), { recursive: true });
    expect((await dump({ path: 'dir' })).error?.code).toBe('NOT_A_FILE');
    expect((await dump({ path: 'none' })).error?.code).toBe('FILE_NOT_FOUND');
  });

  it('works in Uploads and Documents', async () => {
    s = makeShed();
    for (const zone of ['uploads', 'documents'] as const) {
      const abs = s.zonePath(zone, 'x.bin');
      fs.mkdirSync(path.dirname(abs), { recursive: true });
      fs.writeFileSync(abs, 'AB');
      const r = await s.call('shed_hexdump', { zone, path: 'x.bin' });
      expect(r.data?.hexdump).toBe(`00000000: 4142${' '.repeat(35)}  AB`);
    }
  });

  it('refuses traversal and symlinks leading outside', async () => {
    s = makeShed();
    const outsideDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-outside-'));
    try {
      fs.writeFileSync(path.join(outsideDir, 'secret'), 'SECRET');
      fs.mkdirSync(s.zonePath('storage'), { recursive: true });
      fs.symlinkSync(path.join(outsideDir, 'secret'), s.zonePath('storage', 'link'));
      const r = await dump({ path: 'link' });
      expect(r.error?.code).toBe('PATH_ESCAPE');
      expect(JSON.stringify(r)).not.toContain('SECRET');
      expect((await dump({ path: '../../x' })).error?.code).toBe('PATH_ESCAPE');
    } finally {
      fs.rmSync(outsideDir, { recursive: true, force: true });
    }
  });
});
