/**
 * Property-based fuzzing of every function in toolSpecs (SPEC section 15): random objects over each
 * function's own parameter names, values of every type (hostile strings, odd numbers, nulls, arrays,
 * nested objects) and unknown extra keys. Whatever arrives, the call resolves to a JSON envelope with
 * a boolean success, leaks no disk path or stack frame, and never fails with INTERNAL_ERROR (a bug).
 */
import fs from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeShed, mod, type Shed } from './helpers/shed.js';

const RUNS = 150;

let s: Shed;
beforeAll(() => {
  // Code execution on too (off by default): its two functions are fuzzed with the rest.
  s = makeShed({ max_file_size_mb: 1, quota_per_user_mb: 5, allow_python: true, allow_shell: true });
  fs.mkdirSync(s.zonePath('storage', 'dir/sub'), { recursive: true });
  fs.writeFileSync(s.zonePath('storage', 'a.txt'), 'alpha\nbeta\ngamma\n');
  fs.writeFileSync(s.zonePath('storage', 'dir/b.bin'), Buffer.from([0, 255, 10, 13, 0]));
  fs.mkdirSync(s.zonePath('documents'), { recursive: true });
  fs.writeFileSync(s.zonePath('documents', 'doc.md'), '# doc\n');
  fs.mkdirSync(s.zonePath('uploads'), { recursive: true });
  fs.writeFileSync(s.zonePath('uploads', 'up.csv'), 'a;b\r\n1;2\r\n');
});
afterAll(() => s.cleanup());

const hostileStrings = fc.constantFrom(
  '',
  ' ',
  '.',
  '..',
  '../',
  '../../etc/passwd',
  '/',
  '/etc/passwd',
  'a.txt',
  'dir',
  'dir/b.bin',
  'doc.md',
  'up.csv',
  'Storage/a.txt',
  'documents/doc.md',
  '.git',
  '.git/config',
  'a\u0000b',
  '\u0000',
  'x\ny',
  '\u202eevil',
  'caf\u0065\u0301',
  '~/x',
  'C:\\Windows',
  '%2e%2e/',
  'a'.repeat(300),
  'b'.repeat(5000),
  '*',
  '(',
  '[a-',
  '$1',
  'true',
  '10',
  '-1',
  '[]',
  '["a"]',
  '{}',
  'null',
  '__proto__',
  'constructor',
);

const numbers = fc.constantFrom(-1, 0, 1, 2, 3, 0.5, -0, NaN, Infinity, -Infinity, 1e308, -1e308, 2 ** 31, 2 ** 53, Number.MAX_SAFE_INTEGER + 2);

const leaf = fc.oneof(
  hostileStrings,
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  numbers,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
);

const anyValue = fc.oneof(
  { weight: 6, arbitrary: leaf },
  { weight: 1, arbitrary: fc.array(leaf, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), leaf, { maxKeys: 3 }) },
  { weight: 1, arbitrary: fc.anything({ maxDepth: 2 }) },
);

interface PropSchema {
  type?: string;
  enum?: unknown[];
  default?: unknown;
}

const plausibleString = fc.oneof(
  { weight: 2, arbitrary: hostileStrings },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 4, arbitrary: fc.constantFrom('a.txt', 'dir/b.bin', 'doc.md', 'up.csv', 'dir', 'new.txt', 'dir/new.md', 'hello\n', '^a', 'beta', '0a0b') },
);
const plausibleInteger = fc.oneof(fc.integer({ min: -2, max: 8 }), numbers, fc.constantFrom('3', '', ' 2 '));
const plausibleBoolean = fc.constantFrom(true, false, 'true', 'no', 1, 0);

/**
 * Values for one parameter. Mostly a value of the right kind (its enum choices, a path-like or
 * hostile string, an edge-case integer) so calls get past validation into the handlers; often
 * enough a value of any type at all.
 */
function valueFor(name: string, schema: PropSchema): fc.Arbitrary<unknown> {
  const choices: unknown[] = [...(schema.enum ?? [])];
  if (name === 'zone') choices.push('storage', 'documents', 'uploads', 'STORAGE');
  let plausible: fc.Arbitrary<unknown>;
  if (choices.length > 0) plausible = fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...choices) }, { weight: 1, arbitrary: plausibleString });
  else if (schema.type === 'integer' || schema.type === 'number') plausible = plausibleInteger;
  else if (schema.type === 'boolean') plausible = plausibleBoolean;
  else if (schema.type === 'array') plausible = fc.oneof(fc.array(plausibleString, { maxLength: 3 }), fc.constantFrom('["a.txt"]', '', 0));
  else plausible = plausibleString;
  return fc.oneof({ weight: 9, arbitrary: plausible }, { weight: 1, arbitrary: anyValue });
}

function argsFor(properties: Record<string, PropSchema>, required: readonly string[]): fc.Arbitrary<Record<string, unknown>> {
  // Required parameters are usually present, optional ones half of the time.
  const entries = Object.entries(properties).map(([k, v]) => {
    const keep = required.includes(k) ? fc.oneof({ weight: 6, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }) : fc.boolean();
    return fc.tuple(fc.constant(k), keep, valueFor(k, v));
  });
  const extra = fc.oneof({ weight: 5, arbitrary: fc.constant({}) }, { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 12 }), anyValue, { maxKeys: 2 }) });
  return fc.tuple(fc.tuple(...entries), extra).map(([picked, more]) => {
    const args: Record<string, unknown> = { ...more };
    for (const [k, keep, v] of picked) if (keep) args[k] = v;
    return args;
  });
}

// A stack frame pointing into code: "at fn (/x/y.ts:1:2)", "at file:///x.mjs:3:4", "node:internal".
const STACK = /\bat\s.*\.(?:[cm]?[jt]s):\d+:\d+|node:internal/;

function checkEnvelope(fn: string, json: unknown, args: unknown): void {
  const shown = () => `${fn}(${safeShow(args)}) -> ${String(json).slice(0, 600)}`;
  if (typeof json !== 'string') throw new Error(`did not resolve to a string: ${shown()}`);
  let parsed: { success?: unknown; error?: { code?: string } };
  try {
    parsed = JSON.parse(json) as typeof parsed;
  } catch {
    throw new Error(`not JSON: ${shown()}`);
  }
  if (typeof parsed.success !== 'boolean') throw new Error(`no boolean success: ${shown()}`);
  if (json.includes(s.base) || json.includes(fs.realpathSync(s.base))) throw new Error(`leaks the storage path: ${shown()}`);
  if (STACK.test(json)) throw new Error(`leaks a stack frame: ${shown()}`);
  if (parsed.success === false && parsed.error?.code === 'INTERNAL_ERROR') throw new Error(`INTERNAL_ERROR (a bug): ${shown()}`);
}

function safeShow(v: unknown): string {
  try {
    return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'number' && !Number.isFinite(x) ? String(x) : x))?.slice(0, 300) ?? String(v);
  } catch {
    return String(v);
  }
}

async function callRaw(fn: string, args: unknown): Promise<unknown> {
  const method = (s.tools as unknown as Record<string, (a: unknown) => Promise<string>>)[fn]!;
  const full = args !== null && typeof args === 'object' && !Array.isArray(args) ? { ...args, __user__: { id: 'alice', name: 'Alice' }, __metadata__: { chat_id: 'c1' } } : args;
  return method.call(s.tools, full);
}

describe('fuzzing every function', () => {
  const specs = mod.specsFor({ allow_python: true, allow_shell: true });

  it('covers every method', () => {
    const methods = Object.getOwnPropertyNames(mod.Tools.prototype).filter((n) => n !== 'constructor');
    expect(specs.map((x) => x.function.name).sort()).toEqual(methods.sort());
  });

  it.each(specs.map((spec) => [spec.function.name, spec] as const))(
    '%s: random arguments always give a clean JSON envelope',
    async (name, spec) => {
      const params = spec.function.parameters as { properties?: Record<string, PropSchema>; required?: string[] };
      await fc.assert(
        fc.asyncProperty(argsFor(params.properties ?? {}, params.required ?? []), async (args) => {
          let json: unknown;
          try {
            json = await callRaw(name, args);
          } catch (err) {
            throw new Error(`${name} rejected: ${(err as Error).message} with ${safeShow(args)}`);
          }
          checkEnvelope(name, json, args);
        }),
        { numRuns: RUNS },
      );
    },
    60_000,
  );

  it('anything at all as the whole argument gives a clean JSON envelope', async () => {
    const names = specs.map((x) => x.function.name);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...names), fc.anything({ maxDepth: 2 }), async (name, args) => {
        checkEnvelope(name, await callRaw(name, args), args);
      }),
      { numRuns: RUNS },
    );
  });

  it("nothing was written outside the caller's folder", () => {
    // Fuzzed writes may create or delete files, but only inside alice's zones (plus the access
    // database and its lock folder, which shed_link_create writes).
    expect(fs.readdirSync(s.base).filter((n) => n !== 'access_auth.sqlite' && n !== 'dblocks')).toEqual(['users']);
    expect(fs.readdirSync(`${s.base}/users`)).toEqual(['alice']);
  });
});
