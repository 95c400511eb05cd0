/**
 * The public surface of the BUILT plugin (dist/fileshed.mjs) and of the CLI: what a chat platform
 * and an admin actually see. Built once before the tests so they judge the current sources.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../src/functions/index.js';
import type * as Source from '../src/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = (name: string) => path.join(root, 'dist', name);
const temps: string[] = [];
const tempDir = (prefix: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(dir);
  return dir;
};

let mod: typeof Source;
type Method = (args?: unknown) => Promise<string>;

beforeAll(async () => {
  execFileSync(process.execPath, ['build.mjs'], { cwd: root, stdio: 'pipe' });
  mod = (await import(`${pathToFileURL(dist('fileshed.mjs')).href}?surface=${Date.now()}`)) as typeof Source;
}, 120_000);

afterAll(() => {
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});

const names = () => mod.toolSpecs.map((s) => s.function.name);
const parse = (json: string) => JSON.parse(json) as { success: boolean; data?: Record<string, unknown>; message?: string; error?: { code: string; message: string; hint?: string } };

function toolsOn(base: string) {
  const tools = new mod.Tools();
  tools.valves = { ...tools.valves, storage_base_path: base };
  return tools;
}

const call = async (tools: object, fn: string, args: unknown) => parse(await ((tools as Record<string, Method>)[fn] as Method).call(tools, args));

describe('Tools instance and prototype expose only valves and shed_* methods', () => {
  it('an instance has exactly one own property: valves', () => {
    const tools = new mod.Tools();
    expect(Object.getOwnPropertyNames(tools)).toEqual(['valves']);
    expect(Object.getOwnPropertySymbols(tools)).toEqual([]);
    const seen: string[] = [];
    for (const key in tools) seen.push(key);
    expect(seen).toEqual(['valves']);
    expect(Object.keys(JSON.parse(JSON.stringify(tools)) as object)).toEqual(['valves']);
  });

  it('the prototype holds the constructor and shed_* methods only', () => {
    const own = Object.getOwnPropertyNames(mod.Tools.prototype);
    expect(own[0]).toBe('constructor');
    const rest = own.filter((n) => n !== 'constructor');
    expect(rest.length).toBeGreaterThan(0);
    for (const n of rest) expect(n).toMatch(/^shed_[a-z_]+$/);
    expect(Object.getOwnPropertySymbols(mod.Tools.prototype)).toEqual([]);
    expect(Object.getPrototypeOf(mod.Tools.prototype)).toBe(Object.prototype);
    // Every function is a method; the specs leave out the ones off by default (code execution).
    expect(rest.sort()).toEqual(FUNCTIONS.map((f) => f.name).sort());
  });

  it('every registry function is a method, and every method is in the registry', () => {
    const registry = FUNCTIONS.map((f) => f.name);
    expect(new Set(registry).size).toBe(registry.length);
    expect(names()).toEqual(FUNCTIONS.filter((f) => f.enabledBy === undefined).map((f) => f.name));
    for (const n of registry) expect(typeof (mod.Tools.prototype as unknown as Record<string, unknown>)[n], n).toBe('function');
  });
});

describe('tool specs', () => {
  it('one well-formed spec per method, no host (__) parameters', () => {
    const methods = Object.getOwnPropertyNames(mod.Tools.prototype).filter((n) => n !== 'constructor');
    expect(mod.toolSpecs).toHaveLength(methods.length - FUNCTIONS.filter((f) => f.enabledBy !== undefined).length);
    for (const spec of mod.toolSpecs) {
      const label = spec.function.name;
      expect(spec.type, label).toBe('function');
      expect(spec.function.description.length, label).toBeGreaterThan(20);
      const params = spec.function.parameters as { type?: string; properties?: Record<string, { description?: string }> };
      expect(params.type, label).toBe('object');
      for (const [key, schema] of Object.entries(params.properties ?? {})) {
        expect(key.startsWith('__'), `${label}.${key}`).toBe(false);
        // zone alone has none: its enum says it, and shed_help explains the zones once for all functions.
        if (key !== 'zone') expect(schema.description ?? '', `${label}.${key} has a description`).not.toBe('');
      }
    }
  });

  it('dist/tools.json is exactly toolSpecs', () => {
    expect(JSON.parse(fs.readFileSync(dist('tools.json'), 'utf8'))).toEqual(JSON.parse(JSON.stringify(mod.toolSpecs)));
  });
});

describe('the bundle is self-contained', () => {
  const text = () => fs.readFileSync(dist('fileshed.mjs'), 'utf8');

  it('imports only node: modules (and requires only built-ins)', () => {
    const src = text();
    const found = (kind: string, re: RegExp) => [...src.matchAll(re)].map((m) => [kind, m[1]!] as const);
    const specifiers = [
      ...found('import', /(?:^|;)\s*import\s*(?:[\w*{}\s,$]+\s*from\s*)?["']([^"']+)["']/gm),
      ...found('export', /(?:^|;)\s*export\s*[\w*{}\s,$]+\s*from\s*["']([^"']+)["']/gm),
      // Not inside JSDoc types such as {import('./get')} that bundled libraries keep in comments.
      ...found('import()', /(?<![{*]\s*)\bimport\(\s*["']([^"']+)["']\s*\)/g),
      ...found('require', /\brequire\(\s*["']([^"']+)["']\s*\)/g),
    ];
    expect(specifiers.length).toBeGreaterThan(0); // the regexes do see the node: imports
    const builtins = new Set(builtinModules);
    for (const [kind, spec] of specifiers) {
      if (kind === 'require') expect(spec.startsWith('node:') || builtins.has(spec), `${kind} ${spec}`).toBe(true);
      else expect(spec, `${kind} ${spec}`).toMatch(/^node:/);
    }
  });

  it('works from a folder with no node_modules, as a plain .mjs file', () => {
    const dir = tempDir('shed-bundle-');
    fs.copyFileSync(dist('fileshed.mjs'), path.join(dir, 'fileshed.mjs'));
    fs.writeFileSync(
      path.join(dir, 'run.mjs'),
      `import { Tools, toolSpecs } from './fileshed.mjs';
const tools = new Tools();
tools.valves = { ...tools.valves, storage_base_path: ${JSON.stringify(path.join(dir, 'data'))} };
const user = { __user__: { id: 'u1', name: 'U' } };
const help = JSON.parse(await tools.shed_help({}));
const made = JSON.parse(await tools.shed_create_file({ zone: 'storage', path: 'a.txt', content: 'hi', ...user }));
const read = JSON.parse(await tools.shed_read({ zone: 'storage', path: 'a.txt', ...user }));
// SQLite runs on pool workers started on this very file: they must work from a lone bundle too.
const sql = JSON.parse(await tools.shed_sqlite({ zone: 'storage', path: 'd.db', query: 'CREATE TABLE t AS SELECT 41 + 1 AS x', ...user }));
const q = JSON.parse(await tools.shed_sqlite({ zone: 'storage', path: 'd.db', query: 'SELECT x FROM t', ...user }));
tools.valves.sqlite_timeout_seconds = 1;
const runaway = JSON.parse(await tools.shed_sqlite({ zone: 'storage', path: 'd.db', query: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c', ...user }));
console.log(JSON.stringify({ help: help.success, specs: toolSpecs.length, made: made.success, content: read.data && read.data.content, sql: sql.success, rows: q.data && q.data.rows, runaway: runaway.error && runaway.error.code }));
`,
    );
    const out = execFileSync(process.execPath, ['run.mjs'], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } });
    expect(JSON.parse(out)).toEqual({ help: true, specs: FUNCTIONS.filter((f) => f.enabledBy === undefined).length, made: true, content: 'hi', sql: true, rows: [[42]], runaway: 'QUERY_TIMEOUT' });
    expect(fs.readFileSync(path.join(dir, 'data', 'users', 'u1', 'Storage', 'data', 'a.txt'), 'utf8')).toBe('hi');
    expect(fs.existsSync(path.join(dir, 'node_modules'))).toBe(false);
  });
});

describe('valves', () => {
  const schema = () => JSON.parse(fs.readFileSync(path.join(root, 'valves.schema.json'), 'utf8')) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON Schema walk

  it('valves.schema.json documents every valve with a title, description and default', () => {
    const s = schema();
    expect(s).toEqual(JSON.parse(JSON.stringify(mod.valvesSchema)));
    const defaults = new mod.Tools().valves;
    expect(Object.keys(s.properties).sort()).toEqual(Object.keys(defaults).sort());
    for (const [name, prop] of Object.entries<Record<string, unknown>>(s.properties)) {
      expect(typeof prop.title, `${name}.title`).toBe('string');
      expect(String(prop.description).length, `${name}.description`).toBeGreaterThan(10);
      expect(prop.default, `${name}.default`).toEqual(defaults[name]);
    }
  });

  it('choice valves list their choices (enum) and the default is one of them', () => {
    const props = schema().properties as Record<string, { enum?: unknown[]; default: unknown }>;
    for (const name of ['group_default_mode', 'network_mode', 'sqlite_journal_mode', 'sandbox']) {
      expect(Array.isArray(props[name]!.enum), name).toBe(true);
      expect(props[name]!.enum).toContain(props[name]!.default);
    }
    expect(props.network_mode!.enum).toEqual(['disabled', 'safe', 'all']);
  });

  it('user valves list no setting without an effect; a retired one from an older client is ignored', async () => {
    expect(Object.keys(schema().$defs.UserValves.properties ?? {})).toEqual([]);
    const tools = toolsOn(tempDir('shed-uservalves-'));
    const out = await call(tools, 'shed_stats', { __user__: { id: 'u1', valves: { encryption_key: 'old' } } });
    expect(out.success, JSON.stringify(out)).toBe(true);
  });

  it.each([
    ['quota_per_user_mb', -5],
    ['network_mode', 'open'],
    ['max_file_size_mb', 'big'],
    ['storage_base_path', ''],
    ['sqlite_readonly', 'sometimes'],
  ])('an invalid valve %s=%j gives INVALID_VALVES naming it', async (valve, value) => {
    const tools = toolsOn(tempDir('shed-valves-'));
    tools.valves = { ...tools.valves, [valve]: value };
    const r = await call(tools, 'shed_help', {});
    expect(r.success).toBe(false);
    expect(r.error!.code).toBe('INVALID_VALVES');
    expect(r.error!.message).toContain(valve);
  });

  it('valves given as form strings are accepted ("500", "true")', async () => {
    const base = tempDir('shed-valves-');
    const tools = toolsOn(base);
    tools.valves = { ...tools.valves, quota_per_user_mb: '500', sqlite_readonly: 'true' };
    const r = await call(tools, 'shed_create_file', { zone: 'storage', path: 'ok.txt', content: 'ok', __user__: { id: 'u1' } });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
  });
});

describe('user identity', () => {
  it.each([
    ['empty', ''],
    ['leading dash', '-x'],
    ['slash', 'a/b'],
    ['too long', 'x'.repeat(129)],
    ['dot-dot', '../u'],
    ['space', 'a b'],
    ['number', 123],
  ])('refuses a %s user id', async (_what, id) => {
    const base = tempDir('shed-user-');
    const r = await call(toolsOn(base), 'shed_create_file', { zone: 'storage', path: 'a.txt', content: 'x', __user__: { id } });
    expect(r.success).toBe(false);
    expect(r.error!.code).toBe('INVALID_USER');
    expect(fs.existsSync(path.join(base, 'users'))).toBe(false);
  });

  it('refuses a call without __user__ (or with a user that is not an object)', async () => {
    const tools = toolsOn(tempDir('shed-user-'));
    expect((await call(tools, 'shed_read', { zone: 'storage', path: 'a.txt' })).error!.code).toBe('INVALID_USER');
    expect((await call(tools, 'shed_read', { zone: 'storage', path: 'a.txt', __user__: 'alice' })).error!.code).toBe('INVALID_USER');
  });

  it('shed_help works without a user', async () => {
    const r = await call(toolsOn(tempDir('shed-user-')), 'shed_help', {});
    expect(r.success).toBe(true);
  });

  it.each(['Alice_01', 'not-a-uuid', '0', 'x'.repeat(128), '3f2b8c1e-9d4a-4e7b-8f6a-2c1d0e9b7a55'])('accepts user id %s and stores under it', async (id) => {
    const base = tempDir('shed-user-');
    const r = await call(toolsOn(base), 'shed_create_file', { zone: 'storage', path: 'a.txt', content: 'mine', __user__: { id } });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(fs.readFileSync(path.join(base, 'users', id, 'Storage', 'data', 'a.txt'), 'utf8')).toBe('mine');
  });
});

describe('methods never throw', () => {
  it('a method called unbound (or on a foreign object) returns an error JSON', async () => {
    const tools = new mod.Tools();
    const method = (tools as unknown as Record<string, Method>).shed_help!;
    for (const thisArg of [undefined, null, {}, { valves: {} }]) {
      const json = await method.call(thisArg, {});
      expect(typeof json).toBe('string');
      const r = parse(json);
      expect(r.success).toBe(false);
      expect(r.error!.message).toContain('shed_help');
      expect(r.error!.message).not.toMatch(/\bat .*:\d+:\d+/);
    }
  });

  it('a getter-throwing argument object becomes an error JSON, not a rejection', async () => {
    const tools = toolsOn(tempDir('shed-throw-'));
    const evil = { zone: 'storage', __user__: { id: 'u1' } };
    Object.defineProperty(evil, 'path', { enumerable: true, get: () => { throw new Error('boom'); } });
    const r = await call(tools, 'shed_read', evil);
    expect(r.success).toBe(false);
  });
});

describe('CLI (dist/cli.mjs)', () => {
  const cli = (args: string[], cwd = root) => spawnSync(process.execPath, [dist('cli.mjs'), ...args], { cwd, encoding: 'utf8' });

  it('call shed_help prints a success JSON', () => {
    const r = cli(['call', 'shed_help', '{}', '--base', tempDir('shed-cli-')]);
    expect(r.status, r.stderr).toBe(0);
    const out = parse(r.stdout);
    expect(out.success).toBe(true);
    expect(String(out.data!.help)).toContain('shed_read');
  });

  it('spec prints the tool specs', () => {
    const r = cli(['spec']);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(JSON.stringify(mod.toolSpecs)));
  });

  it('create then read back a file in --base, as --user', () => {
    const base = tempDir('shed-cli-');
    const made = cli(['call', 'shed_create_file', JSON.stringify({ zone: 'storage', path: 'notes/a.txt', content: 'from the CLI\n' }), '--base', base, '--user', 'bob']);
    expect(made.status, made.stdout + made.stderr).toBe(0);
    expect(fs.readFileSync(path.join(base, 'users', 'bob', 'Storage', 'data', 'notes', 'a.txt'), 'utf8')).toBe('from the CLI\n');
    const read = cli(['call', 'shed_read', '{"zone":"storage","path":"notes/a.txt"}', '--base', base, '--user', 'bob']);
    expect(read.status).toBe(0);
    expect(parse(read.stdout).data!.content).toBe('from the CLI\n');
  });

  it('a failed call exits 1 with an error JSON; bad usage exits 2', () => {
    const base = tempDir('shed-cli-');
    const missing = cli(['call', 'shed_read', '{"zone":"storage","path":"nope.txt"}', '--base', base]);
    expect(missing.status).toBe(1);
    expect(parse(missing.stdout).error!.code).toBe('FILE_NOT_FOUND');
    expect(missing.stdout).not.toContain(base);
    expect(cli(['call', 'shed_read', '{not json', '--base', base]).status).toBe(2);
    expect(cli(['call', 'shed_nope', '{}', '--base', base]).status).toBe(2);
    expect(cli(['frobnicate']).status).toBe(2);
  });
});
