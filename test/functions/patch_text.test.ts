import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';

let s: Shed;
beforeEach(() => {
  s = makeShed();
});
afterEach(() => s.cleanup());

const disk = (rel: string) => fs.readFileSync(s.zonePath('storage', rel), 'utf8');
const arrange = (rel: string, text: string | Buffer) => {
  const abs = s.zonePath('storage', rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, text);
};

describe('shed_create_file', () => {
  it('creates a file with parent folders, exactly as given', async () => {
    const r = await s.call('shed_create_file', { zone: 'storage', path: 'a/b/c.txt', content: 'no newline' });
    expect(r.success).toBe(true);
    expect(r.data).toMatchObject({ path: 'a/b/c.txt', zone: 'Storage', created: true, file_size: 10 });
    expect(disk('a/b/c.txt')).toBe('no newline');
  });
  it('replaces an existing file and keeps no temp files behind', async () => {
    arrange('x.txt', 'old content');
    const r = await s.call('shed_create_file', { zone: 'storage', path: 'x.txt', content: 'new' });
    expect(r.data?.created).toBe(false);
    expect(disk('x.txt')).toBe('new');
    expect(fs.readdirSync(s.zonePath('storage'))).toEqual(['x.txt']);
  });
  it('writes bytes from hex and base64', async () => {
    await s.call('shed_create_file', { zone: 'storage', path: 'h.bin', content: '89 50 4e 47 00 ff', file_type: 'bytes' });
    expect([...fs.readFileSync(s.zonePath('storage', 'h.bin'))]).toEqual([0x89, 0x50, 0x4e, 0x47, 0, 0xff]);
    await s.call('shed_create_file', { zone: 'storage', path: 'b.bin', content: Buffer.from([1, 2, 3]).toString('base64'), file_type: 'bytes', content_format: 'base64' });
    expect([...fs.readFileSync(s.zonePath('storage', 'b.bin'))]).toEqual([1, 2, 3]);
  });
  it('works in documents, refuses uploads (read-only) and the zone root', async () => {
    expect((await s.call('shed_create_file', { zone: 'documents', path: 'd.md', content: '# D' })).success).toBe(true);
    expect(fs.readFileSync(s.zonePath('documents', 'd.md'), 'utf8')).toBe('# D');
    expect((await s.call('shed_create_file', { zone: 'uploads', path: 'u.txt', content: 'x' })).error?.code).toBe('ZONE_READONLY');
    expect((await s.call('shed_create_file', { zone: 'storage', path: '/', content: 'x' })).error?.code).toBe('INVALID_PATH');
  });
  it('refuses a file used as a folder', async () => {
    arrange('f.txt', 'x');
    const r = await s.call('shed_create_file', { zone: 'storage', path: 'f.txt/inner.txt', content: 'y' });
    expect(r.error?.code).toBe('INVALID_PATH');
  });
  it('enforces max_file_size_mb on the resulting size', async () => {
    const small = makeShed({ max_file_size_mb: 1 });
    try {
      const r = await small.call('shed_create_file', { zone: 'storage', path: 'big.txt', content: 'x'.repeat(1024 * 1024 + 1) });
      expect(r.error?.code).toBe('FILE_TOO_LARGE');
      expect(fs.existsSync(small.zonePath('storage', 'big.txt'))).toBe(false);
    } finally {
      small.cleanup();
    }
  });
});

describe('shed_patch_text', () => {
  it('appends whole lines by default (position end)', async () => {
    arrange('n.txt', 'one\ntwo');
    const r = await s.call('shed_patch_text', { zone: 'storage', path: 'n.txt', content: 'three' });
    expect(r.success).toBe(true);
    expect(disk('n.txt')).toBe('one\ntwo\nthree\n');
    expect(r.data).toMatchObject({ position: 'end', lines_affected: 1, created: false });
  });
  it('creates a missing file for start/end, refuses before/after on a missing file', async () => {
    expect((await s.call('shed_patch_text', { zone: 'storage', path: 'new.txt', content: 'hi', position: 'start' })).data?.created).toBe(true);
    expect(disk('new.txt')).toBe('hi\n');
    const r = await s.call('shed_patch_text', { zone: 'storage', path: 'missing.txt', content: 'x', position: 'after', line: 1 });
    expect(r.error?.code).toBe('FILE_NOT_FOUND');
    expect(r.error?.hint).toContain('shed_create_file(');
  });
  it('inserts and replaces by line and pattern', async () => {
    arrange('p.md', '# Title\nbody\n## End\n');
    await s.call('shed_patch_text', { zone: 'storage', path: 'p.md', content: 'intro', position: 'after', line: 1 });
    expect(disk('p.md')).toBe('# Title\nintro\nbody\n## End\n');
    await s.call('shed_patch_text', { zone: 'storage', path: 'p.md', content: 'BODY', position: 'replace', pattern: 'body' });
    expect(disk('p.md')).toBe('# Title\nintro\nBODY\n## End\n');
    const r = await s.call('shed_patch_text', { zone: 'storage', path: 'p.md', content: '---', position: 'before', pattern: '^#', match_all: true });
    expect(r.data?.pattern_matches).toBe(2);
    expect(disk('p.md')).toBe('---\n# Title\nintro\nBODY\n---\n## End\n');
    await s.call('shed_patch_text', { zone: 'storage', path: 'p.md', content: 'X', position: 'replace', line: 2, end_line: 4 });
    expect(disk('p.md')).toBe('---\nX\n---\n## End\n');
  });
  it('overwrite=true ignores positioning parameters, even invalid ones', async () => {
    arrange('o.txt', 'old');
    const r = await s.call('shed_patch_text', { zone: 'storage', path: 'o.txt', content: 'new', overwrite: true, position: 'overwrite', line: 0, pattern: '' });
    expect(r.success).toBe(true);
    expect(r.data?.position).toBe('overwrite');
    expect(disk('o.txt')).toBe('new');
  });
  it('teaches on position="overwrite" without overwrite', async () => {
    const r = await s.call('shed_patch_text', { zone: 'storage', path: 'o.txt', content: 'x', position: 'overwrite' });
    expect(r.error?.code).toBe('INVALID_PARAMETER');
    expect(r.error?.message).toContain("'position'");
    expect(r.error?.message).toContain("'overwrite'");
    expect(r.error?.hint).toContain('overwrite=true');
  });
  it('refuses binary and non-UTF-8 files instead of damaging them', async () => {
    arrange('bin.dat', Buffer.from([0x41, 0x00, 0x42]));
    expect((await s.call('shed_patch_text', { zone: 'storage', path: 'bin.dat', content: 'x' })).error?.code).toBe('INVALID_FORMAT');
    arrange('latin.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])); // "café" in Latin-1
    expect((await s.call('shed_patch_text', { zone: 'storage', path: 'latin.txt', content: 'x' })).error?.code).toBe('INVALID_FORMAT');
    expect([...fs.readFileSync(s.zonePath('storage', 'latin.txt'))]).toEqual([0x63, 0x61, 0x66, 0xe9, 0x0a]);
  });
  it('keeps a UTF-8 byte order mark', async () => {
    arrange('bom.txt', '\ufeffa\n');
    await s.call('shed_patch_text', { zone: 'storage', path: 'bom.txt', content: 'b' });
    expect(fs.readFileSync(s.zonePath('storage', 'bom.txt'))).toEqual(Buffer.from('\ufeffa\nb\n'));
  });
  it('respects locks: another conversation, and an open locked edit of the same conversation', async () => {
    arrange('l.txt', 'a\n');
    const lock = path.join(s.base, 'users/alice/Storage/locks/l.txt.lock');
    fs.mkdirSync(path.dirname(lock), { recursive: true });
    fs.writeFileSync(lock, JSON.stringify({ user_id: 'alice', conv_id: 'other', locked_at: new Date().toISOString(), path: 'l.txt' }));
    expect((await s.call('shed_patch_text', { zone: 'storage', path: 'l.txt', content: 'b' })).error?.code).toBe('FILE_LOCKED');
    expect((await s.call('shed_patch_text', { zone: 'storage', path: 'l.txt', content: 'b', safe: false })).error?.code).toBe('FILE_LOCKED');
    fs.writeFileSync(lock, JSON.stringify({ user_id: 'alice', conv_id: 'c1', locked_at: new Date().toISOString(), path: 'l.txt' }));
    const own = await s.call('shed_patch_text', { zone: 'storage', path: 'l.txt', content: 'b' });
    expect(own.error?.code).toBe('FILE_LOCKED');
    expect(own.error?.hint).toContain('shed_lockedit_save');
    expect(fs.existsSync(lock)).toBe(true);
    // An expired lock is taken over.
    fs.writeFileSync(lock, JSON.stringify({ user_id: 'bob', conv_id: 'x', locked_at: '2000-01-01T00:00:00Z', path: 'l.txt' }));
    expect((await s.call('shed_patch_text', { zone: 'storage', path: 'l.txt', content: 'b' })).success).toBe(true);
    expect(disk('l.txt')).toBe('a\nb\n');
    expect(fs.existsSync(lock)).toBe(false);
  });
  it('serialises concurrent appends without losing any', async () => {
    arrange('c.txt', '');
    await Promise.all(Array.from({ length: 20 }, (_, i) => s.call('shed_patch_text', { zone: 'storage', path: 'c.txt', content: `line ${i}`, safe: false })));
    expect(disk('c.txt').split('\n').filter(Boolean).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `line ${i}`).sort());
  });
  it('counts net growth against the quota (same-size rewrite at full quota passes)', async () => {
    const q = makeShed({ quota_per_user_mb: 1 });
    try {
      const full = 'x'.repeat(1024 * 1024 - 10);
      expect((await q.call('shed_create_file', { zone: 'storage', path: 'f.txt', content: full })).success).toBe(true);
      expect((await q.call('shed_create_file', { zone: 'storage', path: 'f.txt', content: 'y'.repeat(full.length) })).success).toBe(true);
      const over = await q.call('shed_patch_text', { zone: 'storage', path: 'f.txt', content: 'z'.repeat(20) });
      expect(over.error?.code).toBe('QUOTA_EXCEEDED');
      expect(fs.statSync(q.zonePath('storage', 'f.txt')).size).toBe(full.length);
    } finally {
      q.cleanup();
    }
  });
});

describe('shed_patch_text: the model\'s pattern never holds the event loop', () => {
  /** Runs `fn` while a 10 ms timer measures the event loop's longest delay. */
  async function loopDelay<T>(fn: () => Promise<T>): Promise<{ value: T; worstMs: number }> {
    let worst = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last - 10);
      last = now;
    }, 10);
    try {
      return { value: await fn(), worstMs: worst };
    } finally {
      clearInterval(timer);
    }
  }

  it('a catastrophic pattern answers PATTERN_NOT_FOUND at once (linear-time engine)', async () => {
    arrange('evil.txt', `${'a'.repeat(27)}!\n`);
    const t0 = performance.now();
    const r = await s.call('shed_patch_text', { zone: 'storage', path: 'evil.txt', pattern: '^(a+)+$', position: 'replace', content: 'x' });
    expect(r.error?.code).toBe('PATTERN_NOT_FOUND');
    expect(performance.now() - t0).toBeLessThan(5000); // a backtracking engine takes 2^27 steps here
    const before = await s.call('shed_patch_text', { zone: 'storage', path: 'evil.txt', pattern: '^(a|aa)+!$', position: 'before', content: 'top' });
    expect(before.success, JSON.stringify(before.error)).toBe(true);
    expect(disk('evil.txt')).toBe(`top\n${'a'.repeat(27)}!\n`);
  });

  it('a pattern too costly for the file runs off the event loop and stops at the deadline (TIMEOUT, file unchanged)', async () => {
    const slow = makeShed({ exec_timeout_default: 1 });
    try {
      const text = `lorem ipsum dolor sit amet ${'x'.repeat(20)}\n`.repeat(1500);
      const file = slow.zonePath('storage', 'big.txt');
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, text);
      // Linear in the file, but times a program of ~8,000 instructions: minutes of work.
      const pattern = '(?s)(.{1,999}){1}(.{1,999}){1}(.{1,999}){1}(.{1,999})x$';
      const { value: r, worstMs } = await loopDelay(() => slow.call('shed_patch_text', { zone: 'storage', path: 'big.txt', pattern, position: 'replace', content: 'y' }));
      expect(r.error?.code, JSON.stringify(r)).toBe('TIMEOUT');
      expect(r.error?.hint).toMatch(/simpler pattern|line numbers/);
      expect(fs.readFileSync(file, 'utf8')).toBe(text);
      expect(worstMs).toBeLessThan(500);
    } finally {
      slow.cleanup();
    }
  });

  it('backreferences and lookarounds are refused with an error that teaches; the file is unchanged', async () => {
    arrange('r.txt', 'abab\n');
    for (const pattern of ['(ab)\\1', 'a(?=b)', '(?<=a)b']) {
      const r = await s.call('shed_patch_text', { zone: 'storage', path: 'r.txt', pattern, position: 'replace', content: 'x' });
      expect(r.error?.code).toBe('INVALID_PARAMETER');
      expect(r.error?.message).toMatch(/backreference|lookahead|lookbehind/);
    }
    expect(disk('r.txt')).toBe('abab\n');
  });
});
