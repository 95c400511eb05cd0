/**
 * The archive code on Node's own zlib (issue 34: one decompression engine). Writing: a file larger
 * than one read chunk (4 MiB) is deflated chunk by chunk, each chunk primed with the previous one's
 * last 32 KiB, and must join into one DEFLATE stream that Info-ZIP's unzip accepts, about as small
 * as a single pass. Reading: an entry whose compressed data exceeds one slice (32 KiB) is inflated
 * as a stream; damage in its middle, a lie about its size, or a cut stream each give a clean refusal
 * and leave nothing behind.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { put } from '../sqlite/helpers.js';
import { buildZip } from './zipbuilder.js';

let s: Shed;
afterEach(() => s?.cleanup());

/** Text that compresses (about 3:1) but not trivially: words drawn by a fixed-seed generator. */
function prose(bytes: number, seed = 7): Buffer {
  const words = ['alpha', 'beta', 'gamma', 'delta', 'river', 'stone', 'light', 'seven', 'orange', 'quiet', 'north', 'paper', 'ZIP', '1234', '\n'];
  let x = seed;
  const parts: string[] = [];
  let n = 0;
  while (n < bytes) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const w = `${words[x % words.length]!}${x % 3 === 0 ? String(x % 997) : ''} `;
    parts.push(w);
    n += w.length;
  }
  return Buffer.from(parts.join('')).subarray(0, bytes);
}

describe('writing: chunked deflate joins into one stream', () => {
  it('a 10 MiB file (three read chunks) round-trips through unzip, as small as one pass', async () => {
    s = makeShed({ max_file_size_mb: 50, quota_per_user_mb: 200 });
    const data = prose(10 * 1024 * 1024 + 12345);
    put(s, 'big/text.txt', data);
    const r = await s.call('shed_zip', { zone: 'storage', src: 'big', dest: 'big.zip' });
    expect(r.success).toBe(true);
    const zip = s.zonePath('storage', 'big.zip');
    expect(execFileSync('unzip', ['-t', zip]).toString()).toContain('No errors detected');
    expect(execFileSync('unzip', ['-p', zip, 'big/text.txt'], { maxBuffer: 64 * 1024 * 1024 }).equals(data)).toBe(true);
    const onePass = zlib.deflateRawSync(data, { level: 6 }).length;
    const archive = fs.statSync(zip).size;
    expect(archive).toBeLessThan(onePass * 1.01 + 1024);
  });
});

describe('reading: large entries inflate as a stream', () => {
  it("an entry written by Info-ZIP's zip, 300 KiB compressed, comes out byte-exact", async () => {
    s = makeShed();
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'engine-'));
    try {
      const data = Buffer.concat([prose(2 * 1024 * 1024, 3), crypto.randomBytes(200_000)]);
      fs.writeFileSync(path.join(work, 'mixed.bin'), data);
      execFileSync('zip', ['-q', '-9', path.join(work, 'a.zip'), 'mixed.bin'], { cwd: work });
      put(s, 'a.zip', fs.readFileSync(path.join(work, 'a.zip')));
      const r = await s.call('shed_unzip', { zone: 'storage', src: 'a.zip', dest: 'out' });
      expect(r.success).toBe(true);
      expect(fs.readFileSync(s.zonePath('storage', 'out/mixed.bin')).equals(data)).toBe(true);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });

  it('damage in the middle of a large stream, a stream cut short, a size lie: clean refusals, nothing left', async () => {
    s = makeShed({ zip_max_ratio: 0 });
    const data = prose(3 * 1024 * 1024, 11);
    const good = zlib.deflateRawSync(data);
    expect(good.length).toBeGreaterThan(64 * 1024); // past one slice: the streaming path
    const broken = Buffer.from(good);
    for (let i = 0; i < 64; i++) broken[Math.floor(good.length / 2) + i] = 0xff;
    const cases: Array<[string, Parameters<typeof buildZip>[0][number], string, RegExp]> = [
      ['damaged.zip', { name: 'a.txt', data, raw: broken }, 'INVALID_FORMAT', /damaged|checksum|bytes instead/],
      ['cut.zip', { name: 'a.txt', data, raw: good.subarray(0, good.length - 1000) }, 'INVALID_FORMAT', /damaged|bytes instead/],
      ['liar.zip', { name: 'a.txt', data, declaredSize: 1024 * 1024 }, 'ZIP_BOMB', /inflates past/],
    ];
    for (const [name, entry, code, message] of cases) {
      put(s, name, buildZip([entry]));
      const r = await s.call('shed_unzip', { zone: 'storage', src: name, dest: 'out' });
      expect(r.error?.code, name).toBe(code);
      expect(r.error?.message, name).toMatch(message);
      expect(fs.existsSync(s.zonePath('storage', 'out')), name).toBe(false);
    }
    expect(fs.readdirSync(path.join(s.base, 'users', 'alice', 'Storage', 'tmp')).filter((n) => n.startsWith('unzip-'))).toEqual([]);
    // And the intact one still extracts.
    put(s, 'good.zip', buildZip([{ name: 'a.txt', data, raw: good }]));
    expect((await s.call('shed_unzip', { zone: 'storage', src: 'good.zip', dest: 'out' })).success).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'out/a.txt')).equals(data)).toBe(true);
  });

  it('a small entry (one slice) that inflates past its declared size is stopped at one byte past it', async () => {
    s = makeShed({ zip_max_ratio: 0 });
    const data = Buffer.alloc(8 * 1024 * 1024, 'a'); // deflates to ~8 KiB: the one-call path
    put(s, 'small-liar.zip', buildZip([{ name: 'a.txt', data, declaredSize: 1000 }]));
    const r = await s.call('shed_unzip', { zone: 'storage', src: 'small-liar.zip', dest: 'out' });
    expect(r.error?.code).toBe('ZIP_BOMB');
    expect(r.error?.message).toContain('inflates past');
  });
});
