import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';

let s: Shed;
beforeEach(() => {
  s = makeShed();
});
afterEach(() => s.cleanup());

const arrange = (zone: 'storage' | 'uploads' | 'documents', rel: string, body: string | Buffer) => {
  const abs = s.zonePath(zone, rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, body);
};
const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

describe('shed_read', () => {
  it('reads a whole small file with line counts', async () => {
    arrange('storage', 'a.txt', 'x\ny\nz');
    const r = await s.call('shed_read', { zone: 'storage', path: 'a.txt' });
    expect(r.data).toMatchObject({ content: 'x\ny\nz', total_lines: 3, start_line: 1, end_line: 3, truncated: false, size: 5 });
  });
  it('reads a line range', async () => {
    arrange('storage', 'l.txt', lines(100));
    const r = await s.call('shed_read', { zone: 'storage', path: 'l.txt', start_line: 10, end_line: 12 });
    expect(r.data?.content).toBe('line 10\nline 11\nline 12\n');
    expect(r.data).toMatchObject({ start_line: 10, end_line: 12, total_lines: 100 });
  });
  it('truncates at max_output on a line boundary and says where to continue', async () => {
    arrange('storage', 'big.txt', lines(10_000));
    const r = await s.call('shed_read', { zone: 'storage', path: 'big.txt', max_output: 100 });
    expect(r.data?.truncated).toBe(true);
    expect((r.data?.content as string).length).toBeLessThanOrEqual(100);
    expect((r.data?.content as string).endsWith('\n')).toBe(true);
    const next = r.data?.next_start_line as number;
    expect(r.message).toContain(`start_line=${next}`);
    const more = await s.call('shed_read', { zone: 'storage', path: 'big.txt', start_line: next, end_line: next });
    expect(more.data?.content).toBe(`line ${next}\n`);
  });
  it('caps a 20 MB file at the default limit without flooding', async () => {
    arrange('storage', 'huge.txt', Buffer.alloc(20 * 1024 * 1024, 'a\n'));
    const r = await s.call('shed_read', { zone: 'storage', path: 'huge.txt' });
    expect(r.data?.truncated).toBe(true);
    expect((r.data?.content as string).length).toBeLessThanOrEqual(50_000);
    expect(r.data?.total_lines).toBe(10 * 1024 * 1024);
  });
  it('cuts one enormous line and continues on the same line', async () => {
    arrange('storage', 'one.txt', 'z'.repeat(5000));
    const r = await s.call('shed_read', { zone: 'storage', path: 'one.txt', max_output: 1000 });
    expect((r.data?.content as string).length).toBe(1000);
    expect(r.data?.next_start_line).toBe(1);
  });
  it('reads in every zone, Uploads included', async () => {
    arrange('uploads', 'u.csv', 'a,b\n');
    expect((await s.call('shed_read', { zone: 'uploads', path: 'u.csv' })).data?.content).toBe('a,b\n');
  });
  it('refuses binary files and folders, reports missing files', async () => {
    arrange('storage', 'b.bin', Buffer.from([1, 0, 2]));
    expect((await s.call('shed_read', { zone: 'storage', path: 'b.bin' })).error?.code).toBe('INVALID_FORMAT');
    fs.mkdirSync(s.zonePath('storage', 'dir'), { recursive: true });
    expect((await s.call('shed_read', { zone: 'storage', path: 'dir' })).error?.code).toBe('NOT_A_FILE');
    const missing = await s.call('shed_read', { zone: 'storage', path: 'nope.txt' });
    expect(missing.error?.code).toBe('FILE_NOT_FOUND');
    expect(missing.error?.message).not.toContain(s.base);
  });
  it('start_line past the end is a clear success, end_line before start_line is an error', async () => {
    arrange('storage', 'a.txt', 'x\n');
    const r = await s.call('shed_read', { zone: 'storage', path: 'a.txt', start_line: 5 });
    expect(r.success).toBe(true);
    expect(r.data?.content).toBe('');
    expect(r.message).toContain('only 1 line;');
    expect((await s.call('shed_read', { zone: 'storage', path: 'a.txt', start_line: 5, end_line: 2 })).error?.code).toBe('INVALID_PARAMETER');
  });
  it('empty file', async () => {
    arrange('storage', 'e.txt', '');
    expect((await s.call('shed_read', { zone: 'storage', path: 'e.txt' })).data).toMatchObject({ content: '', total_lines: 0 });
  });
});
