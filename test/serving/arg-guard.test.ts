/**
 * Defects a prototype server showed: deeply nested JSON arguments and lone UTF-16
 * surrogates. Every answer is an envelope, never an exception, never a file named with U+FFFD.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';

let shed: Shed;
afterEach(() => shed?.cleanup());

/** {a:{a:{...}}} built without recursion, as JSON.parse of a client's body would give it. */
function nested(levels: number): unknown {
  let v: unknown = 'x';
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}

function nestedList(levels: number): unknown {
  return JSON.parse('['.repeat(levels) + ']'.repeat(levels));
}

describe('deeply nested arguments', () => {
  it.each([
    ['object', () => nested(100_000)],
    ['array', () => nestedList(100_000)],
  ])('100,000 levels of %s → INVALID_PARAMETER, no exception', async (_kind, make) => {
    shed = makeShed();
    for (const fn of ['shed_create_file', 'shed_exec', 'shed_sqlite', 'shed_tree']) {
      const res = await shed.call(fn, { zone: 'storage', path: 'a.txt', content: make() as string });
      expect(res.success).toBe(false);
      expect(res.error!.code).toBe('INVALID_PARAMETER');
      expect(res.error!.message).toMatch(/nested more than \d+ levels/);
    }
    expect(fs.existsSync(shed.zonePath('storage', 'a.txt'))).toBe(false);
  });

  it('deep value inside a host argument is refused too', async () => {
    shed = makeShed();
    const res = await shed.call('shed_tree', { zone: 'storage', __files__: nested(100_000) });
    expect(res.error?.code).toBe('INVALID_PARAMETER');
  });

  it('normal nesting (a list of strings) still works', async () => {
    shed = makeShed();
    await shed.call('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'hi\n' });
    const res = await shed.call('shed_exec', { zone: 'storage', cmd: 'cat', args: ['a.txt'] });
    expect(res.success).toBe(true);
  });
});

describe('lone UTF-16 surrogates', () => {
  it.each(['x\ud800.txt', 'x\udc00.txt', 'dir\udbff/y.txt'])('path %j → INVALID_PATH, no U+FFFD file', async (p) => {
    shed = makeShed();
    const res = await shed.call('shed_create_file', { zone: 'storage', path: p, content: 'hi' });
    expect(res.error?.code).toBe('INVALID_PATH');
    const root = shed.zonePath('storage');
    const names = fs.existsSync(root) ? fs.readdirSync(root, { recursive: true }).map(String) : [];
    expect(names.filter((n) => n.includes('\ufffd'))).toEqual([]);
  });

  it('other path parameters (rename new_path, sqlite output_csv) → INVALID_PATH', async () => {
    shed = makeShed();
    await shed.call('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'hi' });
    expect((await shed.call('shed_rename', { zone: 'storage', old_path: 'a.txt', new_path: 'b\ud800.txt' })).error?.code).toBe('INVALID_PATH');
    expect((await shed.call('shed_sqlite', { zone: 'storage', path: 'd.db', query: 'SELECT 1', output_csv: '\udfff.csv' })).error?.code).toBe('INVALID_PATH');
  });

  it('a string argument that is not a path → INVALID_PARAMETER', async () => {
    shed = makeShed();
    await shed.call('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'hi' });
    const cases: [string, Record<string, unknown>][] = [
      ['shed_create_file', { zone: 'storage', path: 'b.txt', content: 'bad \ud800 text' }],
      ['shed_exec', { zone: 'storage', cmd: 'grep', args: ['\ud800', 'a.txt'] }],
      ['shed_sqlite', { zone: 'storage', path: 'd.db', query: "SELECT '\udc00'" }],
    ];
    for (const [fn, args] of cases) {
      const res = await shed.call(fn, args);
      expect(res.error?.code, fn).toBe('INVALID_PARAMETER');
      expect(res.error?.details?.parameter).toBeDefined();
    }
    expect(fs.existsSync(shed.zonePath('storage', 'b.txt'))).toBe(false);
  });

  it('a valid surrogate pair (an emoji) is accepted', async () => {
    shed = makeShed();
    const res = await shed.call('shed_create_file', { zone: 'storage', path: 'smile\ud83d\ude00.txt', content: '\ud83d\ude00' });
    expect(res.success).toBe(true);
    expect(fs.readFileSync(shed.zonePath('storage', 'smile😀.txt'), 'utf8')).toBe('😀');
  });
});
