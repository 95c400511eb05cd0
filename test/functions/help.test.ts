import { afterAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/base/errors.js';
import { FUNCTIONS } from '../../src/functions/index.js';
import { makeShed, type Result } from '../helpers/shed.js';

const TOPICS = ['download', 'csv_to_sqlite', 'upload', 'share', 'edit', 'commands', 'network', 'paths', 'large_files', 'errors', 'full'];

const s = makeShed();
// Code execution on too (off by default, and then absent: test/code), so every function is listed.
const everything = makeShed({ allow_python: true, allow_shell: true });
afterAll(() => {
  s.cleanup();
  everything.cleanup();
});

/** shed_help as a host without a user would call it. */
async function help(args: unknown = {}, shed = s): Promise<Result> {
  const method = (shed.tools as unknown as Record<string, (a: unknown) => Promise<string>>).shed_help!;
  return JSON.parse(await method.call(shed.tools, args)) as Result;
}

const registered = new Map<string, Set<string>>(FUNCTIONS.map((f) => [f.name, new Set(Object.keys(f.params))]));

/** Every `shed_x(k=..., ...)` call written in a text whose function exists, with its parameter names. */
function calls(text: string): { fn: string; keys: string[] }[] {
  return [...text.matchAll(/\b(shed_\w+)\(([^)]*)\)/g)].map((m) => ({ fn: m[1]!, keys: [...m[2]!.matchAll(/(?:^|[\s,(])(\w+)=/g)].map((k) => k[1]!) }));
}

describe('shed_help quick reference', () => {
  it('works without a user and lists every registered function with its summary, by category', async () => {
    const r = await help({}, everything);
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    const text = String(r.data!.help);
    for (const f of FUNCTIONS) expect(text, f.name).toContain(`${f.name}`);
    for (const f of FUNCTIONS) expect(text, f.name).toContain(f.summary);
    expect(text).toMatch(/^ Write:$/m);
    expect(text).toMatch(/^ Read:$/m);
    expect(r.data!.topic).toBeUndefined();
    expect(r.message).toContain(String(FUNCTIONS.length));
  });

  it('stays small enough for small models', async () => {
    const text = String((await help()).data!.help);
    // 6000 with 37 functions; the three link functions add ~150 characters at their shortest; shed_undo and its two lines ~250.
    expect(text.length).toBeLessThan(6500);
  });

  it('has the zones, paths rules, mistakes and the howto list', async () => {
    const text = String((await help()).data!.help);
    for (const zone of ['uploads', 'storage', 'documents', 'group']) expect(text).toMatch(new RegExp(`^\\s+${zone}\\s`, 'm'));
    expect(text).toMatch(/uploads.*read-only/);
    expect(text).toMatch(/documents.*git/);
    expect(text).toContain('PATH_STARTS_WITH_ZONE');
    expect(text).toMatch(/leading "\/" is removed/);
    expect(text).toMatch(/Case-sensitive/);
    expect(text).toContain('Lines start at 1');
    for (const t of TOPICS) expect(text).toMatch(new RegExp(`^\\s+${t}\\s`, 'm'));
  });

  it('names only functions that exist, with parameters they really have', async () => {
    const text = String((await help()).data!.help);
    for (const { fn, keys } of calls(text)) {
      expect(registered.has(fn), `${fn} is mentioned but not registered`).toBe(true);
      for (const k of keys) expect(registered.get(fn)!.has(k), `${fn}(${k}=...)`).toBe(true);
    }
    for (const name of text.match(/\bshed_\w+/g) ?? []) expect(registered.has(name), name).toBe(true);
  });

  it('data.howtos maps every topic to one line', async () => {
    const howtos = (await help()).data!.howtos as Record<string, string>;
    expect(Object.keys(howtos)).toEqual(TOPICS);
    for (const line of Object.values(howtos)) expect(line).toMatch(/^[^\n]{10,100}$/);
  });
});

describe('shed_help howtos', () => {
  it.each(TOPICS)('%s gives its text, topic and the howto list', async (topic) => {
    const r = await help({ howto: topic });
    expect(r.success).toBe(true);
    expect(r.data!.topic).toBe(topic);
    expect(String(r.data!.help).length).toBeGreaterThan(200);
    expect(Object.keys(r.data!.howtos as object)).toEqual(TOPICS);
  });

  it('example calls of registered functions use their real parameter names', async () => {
    const text = String((await help({ howto: 'full' })).data!.help);
    let checked = 0;
    for (const { fn, keys } of calls(text)) {
      if (!registered.has(fn)) continue; // documents a function that has not landed yet
      for (const k of keys) expect(registered.get(fn)!.has(k), `${fn}(${k}=...)`).toBe(true);
      checked++;
    }
    expect(checked).toBeGreaterThan(10);
  });

  it('topic is trimmed and case-insensitive; "" and null give the quick reference', async () => {
    expect((await help({ howto: '  PATHS ' })).data!.topic).toBe('paths');
    expect(String((await help({ howto: '' })).data!.help)).toContain('QUICK REFERENCE');
    expect(String((await help({ howto: null })).data!.help)).toContain('QUICK REFERENCE');
  });

  it('edit documents the newline rule and the positioning rules', async () => {
    const text = String((await help({ howto: 'edit' })).data!.help);
    expect(text).toMatch(/start, end, before, after, and replace by line: content is whole lines; a missing final newline is added/);
    expect(text).toMatch(/replace with pattern: exactly the matched text is replaced by content, no newline added/);
    expect(text).toMatch(/\$1 or \\1 are NOT group references/);
    expect(text).toMatch(/overwrite=true: content is written exactly as given/);
    expect(text).toContain('Lines start at 1');
    expect(text).toMatch(/position="at".*only in shed_patch_bytes/);
    expect(text).toMatch(/overwrite=true .*ignored/);
  });

  it('errors lists every error code with its meaning', async () => {
    const text = String((await help({ howto: 'errors' })).data!.help);
    for (const [code, meaning] of Object.entries(ERROR_CODES)) expect(text).toContain(`${code} - ${meaning}`);
  });

  it('full holds the quick reference and every other topic', async () => {
    const full = String((await help({ howto: 'full' })).data!.help);
    expect(full).toContain(String((await help()).data!.help));
    for (const t of TOPICS.filter((x) => x !== 'full')) expect(full).toContain(String((await help({ howto: t })).data!.help));
  });

  it('an unknown topic is INVALID_PARAMETER naming howto, listing the topics, with an example call', async () => {
    const r = await help({ howto: 'editing' });
    expect(r.success).toBe(false);
    expect(r.error!.code).toBe('INVALID_PARAMETER');
    expect(r.error!.message).toContain("'howto'");
    expect(r.error!.message).toContain("'editing'");
    for (const t of TOPICS) expect(JSON.stringify(r.error!.details)).toContain(t);
    for (const t of TOPICS) expect(r.error!.hint).toContain(t);
    expect(r.error!.hint).toContain('shed_help(howto="edit")');
  });
});
