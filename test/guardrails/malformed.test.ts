/**
 * Malformed calls as small models really write them. Every error must let the model fix its call
 * from the error alone: the exact code, the parameter named in the message, the received value shown,
 * and a copy-pasteable example call in the hint. A second table checks the coercions we promise.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeShed, type Result, type Shed } from '../helpers/shed.js';

let s: Shed;
const NOTES = 'one\ntwo\nthree\nfour\nfive\n';

beforeAll(() => {
  s = makeShed();
  fs.mkdirSync(s.zonePath('storage', 'dir'), { recursive: true });
  fs.writeFileSync(s.zonePath('storage', 'notes.txt'), NOTES);
  fs.writeFileSync(s.zonePath('storage', 'data.bin'), Buffer.from([0, 1, 2, 3, 4, 5, 6, 7]));
  fs.mkdirSync(s.zonePath('documents'), { recursive: true });
  fs.writeFileSync(s.zonePath('documents', 'x.md'), '# x\n');
  fs.mkdirSync(s.zonePath('uploads'), { recursive: true });
  fs.writeFileSync(s.zonePath('uploads', 'in.csv'), 'a,b\n1,2\n');
});

afterAll(() => s.cleanup());

interface Bad {
  fn: string;
  /** A parameter object, or anything else passed as the whole argument (not an object). */
  args: unknown;
  code: string;
  /** What the message must name (a parameter name, matched as a whole word). */
  names: string;
  /** Text the message must contain to show what was received. */
  shows?: string;
  /** Extra requirement on message + hint (e.g. the advice a specific mistake needs). */
  says?: RegExp;
}

const st = { zone: 'storage' };
const txt = { ...st, path: 'notes.txt' };
const patch = { ...txt, content: 'X' };

const BAD: Bad[] = [
  // --- shed_read
  { fn: 'shed_read', args: { ...st, path: 123 }, code: 'INVALID_PARAMETER', names: 'path', shows: '123' },
  { fn: 'shed_read', args: { ...st, path: '' }, code: 'MISSING_PARAMETER', names: 'path' },
  { fn: 'shed_read', args: { ...st }, code: 'MISSING_PARAMETER', names: 'path' },
  { fn: 'shed_read', args: { path: 'notes.txt' }, code: 'MISSING_PARAMETER', names: 'zone' },
  { fn: 'shed_read', args: { zone: 'home', path: 'notes.txt' }, code: 'INVALID_ZONE', names: 'zone', shows: "'home'" },
  { fn: 'shed_read', args: { zone: 'group', path: 'notes.txt' }, code: 'MISSING_PARAMETER', names: 'group' },
  { fn: 'shed_read', args: { ...st, path: 'Storage/notes.txt' }, code: 'PATH_STARTS_WITH_ZONE', names: 'path', shows: 'Storage/notes.txt', says: /path="notes\.txt"/ },
  { fn: 'shed_read', args: { ...txt, start_line: 0 }, code: 'INVALID_PARAMETER', names: 'start_line', shows: '0', says: /start at 1/ },
  { fn: 'shed_read', args: { ...txt, start_line: 'abc' }, code: 'INVALID_PARAMETER', names: 'start_line', shows: "'abc'" },
  { fn: 'shed_read', args: { ...txt, end_line: 2.5 }, code: 'INVALID_PARAMETER', names: 'end_line', shows: '2.5' },
  { fn: 'shed_read', args: { ...txt, start_line: 5, end_line: 3 }, code: 'INVALID_PARAMETER', names: 'end_line', shows: '3' },
  { fn: 'shed_read', args: { ...txt, max_output: -5 }, code: 'INVALID_PARAMETER', names: 'max_output', shows: '-5' },
  { fn: 'shed_read', args: { ...txt, allow_zone_in_path: 'maybe' }, code: 'INVALID_PARAMETER', names: 'allow_zone_in_path', shows: "'maybe'" },
  { fn: 'shed_read', args: { ...st, file_path: 'notes.txt' }, code: 'INVALID_PARAMETER', names: 'file_path', shows: "'notes.txt'", says: /Did you mean 'path'/ },
  { fn: 'shed_read', args: { Zone: 'storage', path: 'notes.txt' }, code: 'INVALID_PARAMETER', names: 'Zone', says: /Did you mean 'zone'/ },
  { fn: 'shed_read', args: { ...st, path: '../../etc/passwd' }, code: 'PATH_ESCAPE', names: 'path', shows: '../../etc/passwd' },
  { fn: 'shed_read', args: { ...st, path: 'a\u0000b' }, code: 'INVALID_PATH', names: 'path', says: /NUL/ },
  { fn: 'shed_read', args: 'notes.txt', code: 'INVALID_PARAMETER', names: 'object', shows: 'string' },
  { fn: 'shed_read', args: ['storage', 'notes.txt'], code: 'INVALID_PARAMETER', names: 'object', shows: 'array' },
  { fn: 'shed_read', args: 42, code: 'INVALID_PARAMETER', names: 'object', shows: 'number' },

  // --- shed_create_file
  { fn: 'shed_create_file', args: { ...txt }, code: 'MISSING_PARAMETER', names: 'content' },
  { fn: 'shed_create_file', args: { ...txt, content: null }, code: 'MISSING_PARAMETER', names: 'content' },
  { fn: 'shed_create_file', args: { ...txt, content: 42 }, code: 'INVALID_PARAMETER', names: 'content', shows: '42' },
  { fn: 'shed_create_file', args: { ...st, path: ['a.txt'], content: 'x' }, code: 'INVALID_PARAMETER', names: 'path', shows: '["a.txt"]' },
  { fn: 'shed_create_file', args: { zone: 'uploads', path: 'new.txt', content: 'x' }, code: 'ZONE_READONLY', names: 'zone', shows: 'uploads' },
  { fn: 'shed_create_file', args: { ...patch, file_type: 'image' }, code: 'INVALID_PARAMETER', names: 'file_type', shows: "'image'" },
  { fn: 'shed_create_file', args: { ...st, path: 'new.txt', text: 'x' }, code: 'INVALID_PARAMETER', names: 'text', says: /Did you mean 'content'/ },
  { fn: 'shed_create_file', args: { zone: 'documents', path: 'Documents/new.md', content: 'x' }, code: 'PATH_STARTS_WITH_ZONE', names: 'path', shows: 'Documents/new.md' },
  { fn: 'shed_create_file', args: { ...st, path: '../escape.txt', content: 'x' }, code: 'PATH_ESCAPE', names: 'path', shows: '../escape.txt' },

  // --- shed_patch_text
  { fn: 'shed_patch_text', args: { ...patch, position: 'overwrite' }, code: 'INVALID_PARAMETER', names: 'position', shows: "'overwrite'", says: /overwrite=true/ },
  { fn: 'shed_patch_text', args: { ...patch, position: 'at', line: 2 }, code: 'INVALID_PARAMETER', names: 'position', shows: "'at'", says: /shed_patch_bytes/ },
  { fn: 'shed_patch_text', args: { ...patch, position: 'after', line: 0 }, code: 'INVALID_PARAMETER', names: 'line', shows: '0', says: /start at 1/ },
  { fn: 'shed_patch_text', args: { ...patch, position: 'after', line: 'abc' }, code: 'INVALID_PARAMETER', names: 'line', shows: "'abc'" },
  { fn: 'shed_patch_text', args: { ...patch, position: 'after', line: -3 }, code: 'INVALID_PARAMETER', names: 'line', shows: '-3' },
  { fn: 'shed_patch_text', args: { ...patch, position: 'after', line: 1.5 }, code: 'INVALID_PARAMETER', names: 'line', shows: '1.5' },
  { fn: 'shed_patch_text', args: { ...patch, overwrite: 'maybe' }, code: 'INVALID_PARAMETER', names: 'overwrite', shows: "'maybe'" },
  { fn: 'shed_patch_text', args: { ...patch, match_all: 'sometimes', position: 'replace', pattern: 'o' }, code: 'INVALID_PARAMETER', names: 'match_all', shows: "'sometimes'" },
  { fn: 'shed_patch_text', args: { ...patch, position: 'replace', line: 5, end_line: 2 }, code: 'INVALID_PARAMETER', names: 'end_line', shows: '2' },
  { fn: 'shed_patch_text', args: { ...patch, position: 'after', pattern: '(unclosed' }, code: 'INVALID_PARAMETER', names: 'pattern', shows: "'(unclosed'" },
  { fn: 'shed_patch_text', args: { ...patch, position: 'replace', pattern: '' }, code: 'MISSING_PARAMETER', names: 'pattern' },
  { fn: 'shed_patch_text', args: { ...patch, position: 'before' }, code: 'MISSING_PARAMETER', names: 'line', says: /pattern/ },
  { fn: 'shed_patch_text', args: { ...patch, position: 'replace', pattern: 'o', regex_flags: 5 }, code: 'INVALID_PARAMETER', names: 'regex_flags', shows: '5' },
  { fn: 'shed_patch_text', args: { ...patch, position: 'replace', pattern: 'o', regex_flags: 'x' }, code: 'INVALID_PARAMETER', names: 'regex_flags', shows: "'x'" },
  { fn: 'shed_patch_text', args: { ...txt, content: 'x', zone: 'uploads' }, code: 'ZONE_READONLY', names: 'zone', shows: 'uploads' },
  { fn: 'shed_patch_text', args: { ...patch, zone: 'home' }, code: 'INVALID_ZONE', names: 'zone', shows: "'home'" },
  { fn: 'shed_patch_text', args: { ...patch, position: 'middle' }, code: 'INVALID_PARAMETER', names: 'position', shows: "'middle'" },

  // --- shed_patch_bytes
  { fn: 'shed_patch_bytes', args: { ...st, path: 'data.bin', content: 'ff', position: 'at', offset: -1 }, code: 'INVALID_PARAMETER', names: 'offset', shows: '-1' },
  { fn: 'shed_patch_bytes', args: { ...st, path: 'data.bin', content: 'ff', position: 'at' }, code: 'MISSING_PARAMETER', names: 'offset' },
  { fn: 'shed_patch_bytes', args: { ...st, path: 'data.bin', content: 'ff', content_format: 'binary' }, code: 'INVALID_PARAMETER', names: 'content_format', shows: "'binary'" },
  { fn: 'shed_patch_bytes', args: { ...st, path: 'data.bin', content: 'xyz' }, code: 'INVALID_PARAMETER', names: 'content', shows: "'xyz'" },
  { fn: 'shed_patch_bytes', args: { ...st, path: 'data.bin', content: 'ff', position: 'after' }, code: 'INVALID_PARAMETER', names: 'position', shows: "'after'" },
  { fn: 'shed_patch_bytes', args: { ...st, path: 'data.bin', content: 'ff', position: 'replace', offset: 'two', length: 1 }, code: 'INVALID_PARAMETER', names: 'offset', shows: "'two'" },

  // --- shed_tree
  { fn: 'shed_tree', args: { ...st, depth: 2.5 }, code: 'INVALID_PARAMETER', names: 'depth', shows: '2.5' },
  { fn: 'shed_tree', args: { ...st, depth: 'deep' }, code: 'INVALID_PARAMETER', names: 'depth', shows: "'deep'" },
  { fn: 'shed_tree', args: { ...st, depth: -1 }, code: 'INVALID_PARAMETER', names: 'depth', shows: '-1' },
  { fn: 'shed_tree', args: { zone: 'home' }, code: 'INVALID_ZONE', names: 'zone', shows: "'home'" },
  { fn: 'shed_tree', args: { zone: 7 }, code: 'INVALID_ZONE', names: 'zone', shows: '7' },

  // --- shed_delete
  { fn: 'shed_delete', args: { ...st }, code: 'MISSING_PARAMETER', names: 'path' },
  { fn: 'shed_delete', args: { ...st, path: '' }, code: 'MISSING_PARAMETER', names: 'path' },
  { fn: 'shed_delete', args: { ...st, path: 'Storage/notes.txt' }, code: 'PATH_STARTS_WITH_ZONE', names: 'path', shows: 'Storage/notes.txt' },
  { fn: 'shed_delete', args: { ...st, path: true }, code: 'INVALID_PARAMETER', names: 'path', shows: 'true' },

  // --- shed_rename
  { fn: 'shed_rename', args: { ...st, old_path: 'notes.txt' }, code: 'MISSING_PARAMETER', names: 'new_path' },
  { fn: 'shed_rename', args: { ...st, old_path: 123, new_path: 'b.txt' }, code: 'INVALID_PARAMETER', names: 'old_path', shows: '123' },
  { fn: 'shed_rename', args: { ...st, src: 'notes.txt', new_path: 'b.txt' }, code: 'INVALID_PARAMETER', names: 'src', says: /Did you mean 'old_path'/ },
  { fn: 'shed_rename', args: { zone: 'uploads', old_path: 'in.csv', new_path: 'b.csv' }, code: 'ZONE_READONLY', names: 'zone', shows: 'uploads' },

  // --- shed_hexdump / shed_read_bytes
  { fn: 'shed_hexdump', args: { ...st, path: 'data.bin', length: 'all' }, code: 'INVALID_PARAMETER', names: 'length', shows: "'all'" },
  { fn: 'shed_hexdump', args: { ...st, path: 'data.bin', offset: 1.5 }, code: 'INVALID_PARAMETER', names: 'offset', shows: '1.5' },
  { fn: 'shed_read_bytes', args: { ...st, path: 'data.bin', offset: -1 }, code: 'INVALID_PARAMETER', names: 'offset', shows: '-1' },
  { fn: 'shed_read_bytes', args: { ...st, path: 'data.bin', output_format: 'binary' }, code: 'INVALID_PARAMETER', names: 'output_format', shows: "'binary'" },
  { fn: 'shed_read_bytes', args: { ...st, path: 'data.bin', length: 'ten' }, code: 'INVALID_PARAMETER', names: 'length', shows: "'ten'" },

  // --- shed_convert_eol
  { fn: 'shed_convert_eol', args: { ...txt, to: ['unix'] }, code: 'INVALID_PARAMETER', names: 'to', shows: '["unix"]' },
  { fn: 'shed_convert_eol', args: { zone: 'uploads', path: 'in.csv', to: 'unix' }, code: 'ZONE_READONLY', names: 'zone', shows: 'uploads' },

  // --- shed_exec: a list given as one string with spaces is ambiguous (quoting), so it stays an error
  { fn: 'shed_exec', args: { ...st, cmd: 'ls', args: '-l notes.txt' }, code: 'INVALID_PARAMETER', names: 'args', shows: "'-l notes.txt'", says: /\["-la"\]/ },

  // --- shed_help
  { fn: 'shed_help', args: { howto: 'nope' }, code: 'INVALID_PARAMETER', names: 'howto', shows: "'nope'", says: /edit/ },
  { fn: 'shed_help', args: { howto: 5 }, code: 'INVALID_PARAMETER', names: 'howto', shows: '5' },
  { fn: 'shed_help', args: { topic: 'edit' }, code: 'INVALID_PARAMETER', names: 'topic', shows: "'edit'" },
];

/** Calls with a raw argument (not necessarily an object), as a host would. */
async function rawCall(fn: string, args: unknown): Promise<Result> {
  const method = (s.tools as unknown as Record<string, (a: unknown) => Promise<string>>)[fn]!;
  const withUser =
    args !== null && typeof args === 'object' && !Array.isArray(args)
      ? { ...args, __user__: { id: 'alice', name: 'Alice' }, __metadata__: { chat_id: 'c1' } }
      : args;
  return JSON.parse(await method.call(s.tools, withUser)) as Result;
}

const title = (b: Bad) => `${b.fn}(${typeof b.args === 'object' ? JSON.stringify(b.args) : `${typeof b.args} ${JSON.stringify(b.args)}`}) -> ${b.code}`;

describe('malformed calls give self-correcting errors', () => {
  it('the table is big enough to mean something', () => {
    expect(BAD.length).toBeGreaterThanOrEqual(40);
    expect(new Set(BAD.map((b) => b.fn)).size).toBeGreaterThanOrEqual(11);
  });

  it.each(BAD.map((b) => [title(b), b] as const))('%s', async (_title, bad) => {
    const r = await rawCall(bad.fn, bad.args);
    expect(r.success, JSON.stringify(r)).toBe(false);
    const err = r.error!;
    expect(err.code, err.message).toBe(bad.code);
    expect(err.message, 'the message names the parameter').toMatch(new RegExp(`\\b${bad.names}\\b`));
    if (bad.shows !== undefined) expect(err.message, 'the message shows the received value').toContain(bad.shows);
    expect(err.hint ?? '', 'the hint holds an example call').toMatch(/shed_\w+\(/);
    if (bad.says) expect(`${err.message} ${err.hint ?? ''}`).toMatch(bad.says);
    expect(JSON.stringify(r)).not.toContain(s.base);
  });

  it('none of the malformed calls changed anything on disk', () => {
    expect(fs.readFileSync(s.zonePath('storage', 'notes.txt'), 'utf8')).toBe(NOTES);
    expect([...fs.readFileSync(s.zonePath('storage', 'data.bin'))]).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(fs.readdirSync(s.zonePath('storage')).sort()).toEqual(['data.bin', 'dir', 'notes.txt']);
    expect(fs.readdirSync(s.zonePath('documents'))).toEqual(['x.md']);
    expect(fs.readdirSync(s.zonePath('uploads'))).toEqual(['in.csv']);
    expect(fs.existsSync(path.join(s.base, 'escape.txt'))).toBe(false);
    expect(fs.existsSync(path.join(path.dirname(s.zonePath('storage')), 'escape.txt'))).toBe(false);
  });
});

interface Good {
  what: string;
  fn: string;
  args: Record<string, unknown>;
  check(r: Result): void;
}

const disk = (rel: string) => fs.readFileSync(s.zonePath('storage', rel), 'utf8');

const GOOD: Good[] = [
  {
    what: 'numeric strings for integers',
    fn: 'shed_read',
    args: { ...txt, start_line: '2', end_line: ' 3 ' },
    check: (r) => expect(r.data!.content).toBe('two\nthree\n'),
  },
  { what: "'' for an optional integer means the default", fn: 'shed_read', args: { ...txt, max_output: '', start_line: '' }, check: (r) => expect(r.data!.content).toBe(NOTES) },
  { what: 'null for an optional parameter means the default', fn: 'shed_read', args: { ...txt, end_line: null, group: null }, check: (r) => expect(r.data!.content).toBe(NOTES) },
  { what: 'zone names are case-insensitive', fn: 'shed_read', args: { zone: 'STORAGE', path: 'notes.txt' }, check: (r) => expect(r.data!.content).toBe(NOTES) },
  { what: 'zone names are trimmed', fn: 'shed_read', args: { zone: ' Storage ', path: 'notes.txt' }, check: (r) => expect(r.data!.content).toBe(NOTES) },
  { what: 'a leading / on a path is stripped', fn: 'shed_read', args: { ...st, path: '/notes.txt' }, check: (r) => expect(r.data!.path).toBe('notes.txt') },
  { what: 'host arguments (__files__) are not parameters', fn: 'shed_read', args: { ...txt, __files__: [], __event_emitter__: null }, check: (r) => expect(r.data!.content).toBe(NOTES) },
  {
    what: 'overwrite=true ignores position="overwrite" and line=0',
    fn: 'shed_patch_text',
    args: { ...st, path: 'over.txt', content: 'exact', overwrite: true, position: 'overwrite', line: 0, pattern: '' },
    check: () => expect(disk('over.txt')).toBe('exact'),
  },
  {
    what: 'overwrite="true" (a string) counts as true',
    fn: 'shed_patch_text',
    args: { ...st, path: 'over2.txt', content: 'v2', overwrite: 'true', position: 'at' },
    check: () => expect(disk('over2.txt')).toBe('v2'),
  },
  {
    what: 'position is case-insensitive and a numeric line string works',
    fn: 'shed_patch_text',
    args: { ...st, path: 'ins.txt', content: 'B', position: 'AFTER', line: '1' },
    check: () => expect(disk('ins.txt')).toBe('A\nB\nC\n'),
  },
  { what: "'' for an optional message means the default", fn: 'shed_create_file', args: { ...st, path: 'm.txt', content: 'hi', message: '' }, check: () => expect(disk('m.txt')).toBe('hi') },
  { what: 'file_type is case-insensitive', fn: 'shed_create_file', args: { ...st, path: 'ft.txt', content: 'hi', file_type: 'TEXT' }, check: () => expect(disk('ft.txt')).toBe('hi') },
  { what: 'a list parameter given as one word is a one-item list', fn: 'shed_exec', args: { ...st, cmd: 'ls', args: '-a' }, check: (r) => expect(String(r.data!.stdout)).toMatch(/^\.\.?$/m) },
  { what: 'numeric depth string', fn: 'shed_tree', args: { ...st, depth: '2' }, check: (r) => expect(JSON.stringify(r.data)).toContain('notes.txt') },
  { what: "howto '' gives the quick reference", fn: 'shed_help', args: { howto: '' }, check: (r) => expect(r.data!.help).toContain('QUICK REFERENCE') },
  { what: 'howto null gives the quick reference', fn: 'shed_help', args: { howto: null }, check: (r) => expect(r.data!.topic).toBeUndefined() },
  { what: 'howto is trimmed and case-insensitive', fn: 'shed_help', args: { howto: ' EDIT ' }, check: (r) => expect(r.data!.topic).toBe('edit') },
];

describe('accepted coercions', () => {
  beforeAll(() => fs.writeFileSync(s.zonePath('storage', 'ins.txt'), 'A\nC\n'));

  it.each(GOOD.map((g) => [`${g.fn}: ${g.what}`, g] as const))('%s', async (_title, good) => {
    const r = await rawCall(good.fn, good.args);
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    good.check(r);
  });
});
