/**
 * The package as a user gets it: `npm pack` ships only what runs (the built bundles, the schemas,
 * the tool file), declares no dependency (the bundles hold them), and the tarball installs offline
 * into an empty prefix whose `fileshed` command serves calls.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, serve, type Served } from '../hosts/helpers.js';

const root = path.resolve('.');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-pack-'));
const npm = (args: string[], cwd = root) =>
  execFileSync('npm', [...args, '--offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    encoding: 'utf8',
    // The npm cache of this machine stays untouched: a private one in the temp folder.
    env: { ...process.env, npm_config_cache: path.join(tmp, 'cache'), PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` },
  });

let packed: { filename: string; entryCount: number; files: { path: string }[] };
let served: Served | undefined;

beforeAll(() => {
  packed = (JSON.parse(npm(['pack', '--json', '--pack-destination', tmp])) as (typeof packed)[])[0]!;
}, 120_000);

afterAll(async () => {
  await served?.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('npm pack', () => {
  it('ships the built files only: no sources, tests, benches or build leftovers', () => {
    const files = packed.files.map((f) => f.path).sort();
    expect(files).toEqual(expect.arrayContaining(['package.json', 'README.md', 'dist/cli.mjs', 'dist/fileshed.mjs', 'dist/server.mjs', 'dist/fileshed_openwebui.py', 'dist/tools.json', 'valves.schema.json', 'docs/security.md']));
    for (const f of files) expect(f, f).toMatch(/^(package\.json|README\.md|valves\.schema\.json|dist\/[^/]+\.(mjs|map|txt|json|py)|docs\/[^/]+\.md)$/);
    expect(packed.entryCount).toBeLessThanOrEqual(20);
  });

  it('declares no run-time dependency: the bundles carry them', () => {
    const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { dependencies?: object; bin: Record<string, string> };
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(pkg.bin.fileshed).toBe('dist/cli.mjs');
  });
});

describe('installed from the tarball (offline, empty prefix)', () => {
  it('puts a working `fileshed` command on the prefix PATH that serves calls', async () => {
    const prefix = path.join(tmp, 'prefix');
    npm(['install', '--global', '--prefix', prefix, path.join(tmp, packed.filename)], tmp);
    const installed = path.join(prefix, 'lib', 'node_modules', 'fileshed');
    expect(fs.existsSync(path.join(installed, 'node_modules'))).toBe(false); // nothing fetched
    const bin = path.join(prefix, 'bin', 'fileshed');
    const work = fs.mkdtempSync(path.join(tmp, 'work-'));
    expect(execFileSync(bin, ['list'], { cwd: work, encoding: 'utf8', env: { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}` } })).toContain('shed_read');

    served = await serve([], { bin, cwd: work, base: path.join(work, 'data') });
    const created = await json(await served.post('shed_create_file', { zone: 'storage', path: 'hello.txt', content: 'Hello from the package' }));
    expect(created.success, JSON.stringify(created)).toBe(true);
    const read = await json(await served.post('shed_read', { zone: 'storage', path: 'hello.txt' }));
    expect(read.data.content).toContain('Hello from the package');
    expect(fs.readFileSync(path.join(work, 'data', 'users', 'local', 'Storage', 'data', 'hello.txt'), 'utf8')).toBe('Hello from the package');
    expect(await served.stop()).toBe(0);
    served = undefined;
  }, 120_000);
});
