import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';

const PNG_SIG = '89504e470d0a1a0a';
let s: Shed;
afterEach(() => s?.cleanup());

function put(rel: string, bytes: Uint8Array | string): string {
  const abs = s.zonePath('storage', rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, bytes);
  return abs;
}

const patch = (args: Record<string, unknown>, as?: { chat?: string }) => s.call('shed_patch_bytes', { zone: 'storage', ...args }, as);

function writeLock(rel: string, conv: string, user = 'alice'): string {
  const file = path.join(s.base, 'users', 'alice', 'Storage', 'locks', `${rel}.lock`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify({ user_id: user, conv_id: conv, locked_at: new Date().toISOString(), path: rel }));
  return file;
}

describe('shed_patch_bytes: content formats', () => {
  it('creates a file from hex and the exact bytes land on disk', async () => {
    s = makeShed();
    const r = await patch({ path: 'img/a.png', content: PNG_SIG });
    expect(r.success).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'img/a.png'))).toEqual(Buffer.from(PNG_SIG, 'hex'));
    expect(r.data).toMatchObject({ path: 'img/a.png', zone: 'Storage', created: true, bytes_written: 8, file_size: 8, content_format: 'hex', safe_mode: true });
    expect(r.message).toContain('Storage/img/a.png');
  });

  it('ignores whitespace, newlines and 0x prefixes in hex', async () => {
    s = makeShed();
    const r = await patch({ path: 'a.bin', content: '0x89 0x50\n4E 47\t0d0a' });
    expect(r.success).toBe(true);
    expect([...fs.readFileSync(s.zonePath('storage', 'a.bin'))]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a]);
  });

  it.each([
    ['odd length', 'abc', 'odd'],
    ['non-hex character', '89zz', "'z'"],
    ['0x glued to a digit', '00x1', "'x'"],
  ])('refuses invalid hex (%s) naming content, writing nothing', async (_name, content, why) => {
    s = makeShed();
    const r = await patch({ path: 'a.bin', content });
    expect(r.error?.code).toBe('INVALID_PARAMETER');
    expect(r.error?.message).toContain("'content'");
    expect(r.error?.message).toContain(why);
    expect(r.error?.hint).toContain('shed_patch_bytes(');
    expect(r.error?.hint).toContain('content_format="raw"');
    expect(fs.existsSync(s.zonePath('storage', 'a.bin'))).toBe(false);
  });

  it('decodes standard and URL-safe base64 alike, whitespace ignored', async () => {
    s = makeShed();
    const bytes = Buffer.from([0xfb, 0xff, 0xbf, 0x00, 0x10]);
    const std = bytes.toString('base64'); // +/+/ABA=
    const url = bytes.toString('base64url'); // -_-_ABA
    expect(std).not.toBe(url);
    expect((await patch({ path: 'std.bin', content: `${std.slice(0, 4)}\n${std.slice(4)}`, content_format: 'base64' })).success).toBe(true);
    expect((await patch({ path: 'url.bin', content: url, content_format: 'BASE64' })).success).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'std.bin'))).toEqual(bytes);
    expect(fs.readFileSync(s.zonePath('storage', 'url.bin'))).toEqual(bytes);
  });

  it.each(['abc$', 'a', 'ab=c', 'SGVs=', 'SGVsbG8A===='])('refuses invalid base64 %j', async (content) => {
    s = makeShed();
    const r = await patch({ path: 'a.bin', content, content_format: 'base64' });
    expect(r.error?.code).toBe('INVALID_PARAMETER');
    expect(r.error?.message).toContain("'content' is not valid base64");
    expect(fs.existsSync(s.zonePath('storage', 'a.bin'))).toBe(false);
  });

  it('writes raw content as UTF-8', async () => {
    s = makeShed();
    await patch({ path: 't.txt', content: 'héllo €', content_format: 'raw' });
    expect(fs.readFileSync(s.zonePath('storage', 't.txt'))).toEqual(Buffer.from('héllo €', 'utf8'));
  });

  it('refuses an unknown content_format', async () => {
    s = makeShed();
    const r = await patch({ path: 'a.bin', content: '00', content_format: 'binary' });
    expect(r.error?.code).toBe('INVALID_PARAMETER');
    expect(r.error?.message).toContain('content_format');
  });
});

describe('shed_patch_bytes: positions', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['end (default)', {}, 'HelloXY'],
    ['start', { position: 'start' }, 'XYHello'],
    ['at 2', { position: 'at', offset: 2 }, 'HeXYllo'],
    ['at size (append)', { position: 'at', offset: 5 }, 'HelloXY'],
    ['replace 1 at 1', { position: 'replace', offset: 1, length: 1 }, 'HXYllo'],
    ['replace 0 = insert', { position: 'replace', offset: 1, length: 0 }, 'HXYello'],
    ['replace past end', { position: 'replace', offset: 3, length: 100 }, 'HelXY'],
  ];
  it.each(cases)('%s', async (_name, extra, expected) => {
    s = makeShed();
    put('h.txt', 'Hello');
    const r = await patch({ path: 'h.txt', content: '5859', ...extra });
    expect(r.success).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'h.txt'), 'latin1')).toBe(expected);
    expect(r.data?.created).toBe(false);
    expect(r.data?.file_size).toBe(expected.length);
  });

  it('reports offset and replaced bytes for replace', async () => {
    s = makeShed();
    put('h.txt', 'Hello');
    const r = await patch({ path: 'h.txt', content: '5859', position: 'replace', offset: 4, length: 9 });
    expect(r.data).toMatchObject({ position: 'replace', offset: 4, bytes_replaced: 1, bytes_written: 2 });
  });

  it('needs offset for at and replace (MISSING_PARAMETER)', async () => {
    s = makeShed();
    put('h.txt', 'Hello');
    for (const position of ['at', 'replace']) {
      const r = await patch({ path: 'h.txt', content: '00', position, length: 1 });
      expect(r.error?.code).toBe('MISSING_PARAMETER');
      expect(r.error?.message).toContain("'offset'");
      expect(r.error?.hint).toContain('offset=0');
    }
    expect(fs.readFileSync(s.zonePath('storage', 'h.txt'), 'utf8')).toBe('Hello');
  });

  it('needs length for replace (MISSING_PARAMETER)', async () => {
    s = makeShed();
    put('h.txt', 'Hello');
    const r = await patch({ path: 'h.txt', content: '00', position: 'replace', offset: 1 });
    expect(r.error?.code).toBe('MISSING_PARAMETER');
    expect(r.error?.message).toContain("'length'");
  });

  it('refuses an offset beyond the file size and leaves the file alone', async () => {
    s = makeShed();
    put('h.txt', 'Hello');
    const r = await patch({ path: 'h.txt', content: '00', position: 'at', offset: 10 });
    expect(r.error?.code).toBe('INVALID_PARAMETER');
    expect(r.error?.message).toContain('Offset 10 beyond file size (5)');
    expect(fs.readFileSync(s.zonePath('storage', 'h.txt'), 'utf8')).toBe('Hello');
  });

  it('refuses a negative offset naming the parameter', async () => {
    s = makeShed();
    put('h.txt', 'Hello');
    const r = await patch({ path: 'h.txt', content: '00', position: 'at', offset: -1 });
    expect(r.error?.code).toBe('INVALID_PARAMETER');
    expect(r.error?.message).toContain("'offset'");
  });

  it('refuses an unknown position', async () => {
    s = makeShed();
    const r = await patch({ path: 'h.txt', content: '00', position: 'middle' });
    expect(r.error?.code).toBe('INVALID_PARAMETER');
    expect(r.error?.message).toContain("'position'");
  });

  it('overwrite=true replaces the file and ignores position, offset and length', async () => {
    s = makeShed();
    put('h.txt', 'Hello world');
    const r = await patch({ path: 'h.txt', content: '4142', overwrite: true, position: 'nonsense', offset: 99, length: 'x' });
    expect(r.success).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'h.txt'), 'utf8')).toBe('AB');
    expect(r.data).toMatchObject({ position: 'overwrite', created: false, file_size: 2 });
    expect(r.data).not.toHaveProperty('offset');
    expect(r.message).toContain('overwritten');
  });

  it('overwrite=true creates a missing file whatever the position', async () => {
    s = makeShed();
    const r = await patch({ path: 'new.bin', content: '01', overwrite: true, position: 'replace', offset: 3 });
    expect(r.success).toBe(true);
    expect(r.data?.created).toBe(true);
    expect([...fs.readFileSync(s.zonePath('storage', 'new.bin'))]).toEqual([1]);
  });

  it('creates a missing file for start and for at offset 0', async () => {
    s = makeShed();
    expect((await patch({ path: 'a.bin', content: '01', position: 'start' })).data?.created).toBe(true);
    expect((await patch({ path: 'b.bin', content: '02', position: 'at', offset: 0 })).data?.created).toBe(true);
    expect([...fs.readFileSync(s.zonePath('storage', 'b.bin'))]).toEqual([2]);
  });

  it('gives FILE_NOT_FOUND for at offset>0 and replace on a missing file', async () => {
    s = makeShed();
    expect((await patch({ path: 'a.bin', content: '01', position: 'at', offset: 3 })).error?.code).toBe('FILE_NOT_FOUND');
    expect((await patch({ path: 'a.bin', content: '01', position: 'replace', offset: 0, length: 1 })).error?.code).toBe('FILE_NOT_FOUND');
    expect(fs.existsSync(s.zonePath('storage', 'a.bin'))).toBe(false);
  });
});

describe('shed_patch_bytes: zones, paths and links', () => {
  it('refuses Uploads with ZONE_READONLY', async () => {
    s = makeShed();
    const r = await s.call('shed_patch_bytes', { zone: 'uploads', path: 'a.bin', content: '00' });
    expect(r.error?.code).toBe('ZONE_READONLY');
    expect(fs.existsSync(s.zonePath('uploads', 'a.bin'))).toBe(false);
  });

  it('writes in Documents', async () => {
    s = makeShed();
    const r = await s.call('shed_patch_bytes', { zone: 'documents', path: 'd.bin', content: 'cafe' });
    expect(r.success).toBe(true);
    expect(fs.readFileSync(s.zonePath('documents', 'd.bin'))).toEqual(Buffer.from('cafe', 'hex'));
  });

  it('refuses .. above the zone root and writes nothing outside', async () => {
    s = makeShed();
    const r = await patch({ path: '../../escape.bin', content: '00' });
    expect(r.error?.code).toBe('PATH_ESCAPE');
    expect(fs.existsSync(path.join(s.base, 'users', 'alice', 'escape.bin'))).toBe(false);
    expect(fs.existsSync(path.join(s.base, 'users', 'escape.bin'))).toBe(false);
  });

  it('refuses a symlink pointing outside the zone and leaves the outside file unchanged', async () => {
    s = makeShed();
    const outsideDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-outside-'));
    const outside = path.join(outsideDir, 'secret.bin');
    fs.writeFileSync(outside, 'SECRET');
    try {
      fs.mkdirSync(s.zonePath('storage'), { recursive: true });
      fs.symlinkSync(outside, s.zonePath('storage', 'link.bin'));
      for (const extra of [{}, { overwrite: true }, { safe: false }, { position: 'at', offset: 0 }]) {
        const r = await patch({ path: 'link.bin', content: '41', ...extra });
        expect(r.error?.code).toBe('PATH_ESCAPE');
      }
      expect(fs.readFileSync(outside, 'utf8')).toBe('SECRET');
      expect(fs.lstatSync(s.zonePath('storage', 'link.bin')).isSymbolicLink()).toBe(true);
    } finally {
      fs.rmSync(outsideDir, { recursive: true, force: true });
    }
  });

  it('refuses a symlink inside the zone, naming the file it points to', async () => {
    s = makeShed();
    put('real.bin', 'abc');
    fs.symlinkSync(s.zonePath('storage', 'real.bin'), s.zonePath('storage', 'alias.bin'));
    const r = await patch({ path: 'alias.bin', content: '41' });
    expect(r.error?.code).toBe('INVALID_PATH');
    expect(r.error?.hint).toContain('path="real.bin"');
    expect(fs.lstatSync(s.zonePath('storage', 'alias.bin')).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'real.bin'), 'utf8')).toBe('abc');
  });

  it('refuses a folder with NOT_A_FILE and the zone root with INVALID_PATH', async () => {
    s = makeShed();
    fs.mkdirSync(s.zonePath('storage', 'dir'), { recursive: true });
    expect((await patch({ path: 'dir', content: '00' })).error?.code).toBe('NOT_A_FILE');
    expect((await patch({ path: '.', content: '00' })).error?.code).toBe('INVALID_PATH');
  });

  it('refuses a path starting with the zone name', async () => {
    s = makeShed();
    const r = await patch({ path: 'Storage/a.bin', content: '00' });
    expect(r.error?.code).toBe('PATH_STARTS_WITH_ZONE');
  });
});

describe('shed_patch_bytes: limits', () => {
  it('refuses a write past the quota and writes nothing', async () => {
    s = makeShed({ quota_per_user_mb: 1 });
    const content = Buffer.alloc(2 * 1024 * 1024, 7).toString('base64');
    const r = await patch({ path: 'big.bin', content, content_format: 'base64' });
    expect(r.error?.code).toBe('QUOTA_EXCEEDED');
    expect(fs.existsSync(s.zonePath('storage', 'big.bin'))).toBe(false);
  });

  it('judges the quota by net growth: replacing a file with one of the same size fits', async () => {
    s = makeShed({ quota_per_user_mb: 1 });
    put('f.bin', Buffer.alloc(800 * 1024, 1));
    const content = Buffer.alloc(800 * 1024, 2).toString('base64');
    const r = await patch({ path: 'f.bin', content, content_format: 'base64', overwrite: true });
    expect(r.success).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'f.bin'))[0]).toBe(2);
  });

  it('refuses a result above max_file_size_mb and leaves the file unchanged', async () => {
    s = makeShed({ max_file_size_mb: 1 });
    put('f.bin', Buffer.alloc(700 * 1024, 1));
    const r = await patch({ path: 'f.bin', content: Buffer.alloc(400 * 1024, 2).toString('base64'), content_format: 'base64' });
    expect(r.error?.code).toBe('FILE_TOO_LARGE');
    expect(fs.statSync(s.zonePath('storage', 'f.bin')).size).toBe(700 * 1024);
  });

  it('checks the resulting size, not old + new', async () => {
    s = makeShed({ max_file_size_mb: 1 });
    put('f.bin', Buffer.alloc(700 * 1024, 1));
    const r = await patch({
      path: 'f.bin',
      content: Buffer.alloc(700 * 1024, 2).toString('base64'),
      content_format: 'base64',
      position: 'replace',
      offset: 0,
      length: 700 * 1024,
    });
    expect(r.success).toBe(true);
    expect(fs.statSync(s.zonePath('storage', 'f.bin')).size).toBe(700 * 1024);
  });
});

describe('shed_patch_bytes: locks', () => {
  it('refuses a file locked by another conversation, safe or not', async () => {
    s = makeShed();
    put('h.txt', 'Hello');
    writeLock('h.txt', 'other-conv');
    for (const safe of [true, false]) {
      const r = await patch({ path: 'h.txt', content: '21', safe });
      expect(r.error?.code).toBe('FILE_LOCKED');
    }
    expect(fs.readFileSync(s.zonePath('storage', 'h.txt'), 'utf8')).toBe('Hello');
  });

  it('safe mode refuses an open locked edit of the same conversation; safe=false writes', async () => {
    s = makeShed();
    put('h.txt', 'Hello');
    const lock = writeLock('h.txt', 'c1');
    expect((await patch({ path: 'h.txt', content: '21' })).error?.code).toBe('FILE_LOCKED');
    expect(fs.readFileSync(s.zonePath('storage', 'h.txt'), 'utf8')).toBe('Hello');
    const r = await patch({ path: 'h.txt', content: '21', safe: false });
    expect(r.success).toBe(true);
    expect(r.data?.safe_mode).toBe(false);
    expect(fs.readFileSync(s.zonePath('storage', 'h.txt'), 'utf8')).toBe('Hello!');
    expect(fs.existsSync(lock)).toBe(true); // the session's lock is left alone
  });

  it('takes over an expired lock and releases its own lock after a safe write', async () => {
    s = makeShed({ lock_max_age_hours: 1 });
    put('h.txt', 'Hello');
    const file = path.join(s.base, 'users', 'alice', 'Storage', 'locks', 'h.txt.lock');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, JSON.stringify({ user_id: 'bob', conv_id: 'x', locked_at: '2000-01-01T00:00:00Z', path: 'h.txt' }));
    const r = await patch({ path: 'h.txt', content: '21' });
    expect(r.success).toBe(true);
    expect(fs.existsSync(file)).toBe(false);
  });
});
