/**
 * No read or write path that can abort the process on a network filesystem's stale handle.
 * Node's whole-file calls by name (`readFileSync(path, 'utf8')`, `writeFileSync(path, text)`,
 * `appendFileSync`) close the file in C++ and abort (exit 134) when close fails with ESTALE; every
 * whole-file read and write in src goes through core/base/fs/read.ts instead, which opens and closes
 * the descriptor itself and retries ESTALE. The scan below keeps it that way; the GlusterFS test
 * (test/scale) provokes real stale handles.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isStale, readBytes, readText, retryStale, writeBytes } from '../../src/core/base/fs/read.js';

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name.endsWith('.ts')).map((e) => path.join(e.parentPath, e.name));
}

describe('whole-file reads and writes', () => {
  it('no source calls readFileSync / writeFileSync / appendFileSync / fs.promises whole-file helpers (except on /proc)', () => {
    const offenders: string[] = [];
    for (const file of sources('src')) {
      if (file === path.join('src', 'core', 'base', 'fs', 'read.ts')) continue;
      fs.readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/^\s*(\*|\/\/)/.test(line)) return; // comments
          if (/\b(readFileSync|writeFileSync|appendFileSync)\s*\(/.test(line) && !line.includes('/proc/')) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
          if (/\bpromises\.(readFile|writeFile|appendFile)\s*\(|\bfsp?\.(readFile|writeFile|appendFile)\s*\(/.test(line)) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });

  it('the scan finds what it looks for (a planted call is reported)', () => {
    const planted = "const t = fs.readFileSync(file, 'utf8');";
    expect(/\b(readFileSync|writeFileSync|appendFileSync)\s*\(/.test(planted)).toBe(true);
  });

  it('ESTALE (errno -116, unnamed by libuv) is retried, then reported; other errors are not retried', () => {
    const stale = Object.assign(new Error('Unknown system error -116'), { errno: -116, code: 'Unknown system error -116' });
    expect(isStale(stale)).toBe(true);
    expect(isStale(Object.assign(new Error('x'), { code: 'ESTALE' }))).toBe(true);
    expect(isStale(Object.assign(new Error('x'), { code: 'ENOENT', errno: -2 }))).toBe(false);
    let calls = 0;
    expect(retryStale(() => (++calls < 3 ? (() => { throw stale; })() : 'third time'))).toBe('third time');
    expect(calls).toBe(3);
    calls = 0;
    expect(() => retryStale(() => { calls++; throw stale; })).toThrow(/-116/);
    expect(calls).toBe(5);
    calls = 0;
    expect(() => retryStale(() => { calls++; throw Object.assign(new Error('gone'), { code: 'ENOENT' }); })).toThrow('gone');
    expect(calls).toBe(1);
  });

  it('reads and writes whole files through descriptors: empty, small, larger than the first buffer, appended', () => {
    const dir = fs.mkdtempSync(path.join(fs.realpathSync('/tmp'), 'safe-fs-'));
    try {
      const f = path.join(dir, 'a.txt');
      writeBytes(f, '');
      expect(readText(f)).toBe('');
      writeBytes(f, 'héllo');
      expect(readText(f)).toBe('héllo');
      const big = Buffer.alloc(300_000, 7);
      writeBytes(f, big);
      expect(readBytes(f).equals(big)).toBe(true);
      writeBytes(f, 'x', { append: true });
      expect(readBytes(f).length).toBe(300_001);
      expect(() => writeBytes(f, 'y', { exclusive: true })).toThrow(/EEXIST/);
      fs.symlinkSync(f, path.join(dir, 'link'));
      expect(() => readBytes(path.join(dir, 'link'), { noFollow: true })).toThrow(/ELOOP/);
      expect(() => readText(path.join(dir, 'missing'))).toThrow(/ENOENT/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
