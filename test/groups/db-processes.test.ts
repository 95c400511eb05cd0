/**
 * Two real processes write the access database at the same time: hundreds of interleaved
 * read-modify-write cycles, and not one update may be lost (the cross-process lock + atomic replace).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mod } from '../helpers/shed.js';

const N = 150;
let base: string;
let worker: string;

beforeAll(async () => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-db2-'));
  // The worker runs the real source, bundled (sql.js stays external and finds its own .wasm).
  const cache = path.resolve('node_modules/.cache/fileshed-test');
  fs.mkdirSync(cache, { recursive: true });
  worker = path.join(cache, `db-worker-${process.pid}.mjs`);
  await build({
    stdin: {
      contents: `import { groupAdmin } from ${JSON.stringify(path.resolve('src/core/services/groups/directory.ts'))};
        const [, , base, tag, n] = process.argv;
        for (let i = 0; i < Number(n); i++) await groupAdmin.addMember(base, 'race', tag + i);`,
      resolveDir: process.cwd(),
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    external: ['sql.js'],
    outfile: worker,
    logLevel: 'silent',
  });
});

afterAll(() => {
  fs.rmSync(base, { recursive: true, force: true });
  fs.rmSync(worker, { force: true });
});

function runWorker(tag: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [worker, base, tag, String(N)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(code) : reject(new Error(`worker ${tag} exited ${code}: ${err}`))));
  });
}

describe('access database across processes', () => {
  it(`two processes × ${N} writes plus this process: zero lost updates`, async () => {
    await mod.admin.groups.add(base, 'race', 'Race');
    const local = (async () => {
      for (let i = 0; i < 50; i++) await mod.admin.groups.addMember(base, 'race', `m${i}`);
    })();
    await Promise.all([runWorker('a'), runWorker('b'), local]);
    const members = await mod.admin.groups.members(base, 'race');
    expect(members.length).toBe(2 * N + 50);
    for (const tag of ['a', 'b']) for (let i = 0; i < N; i++) expect(members).toContain(`${tag}${i}`);
    // The file is a normal SQLite database with the migrations recorded, and no journal beside it.
    const bytes = fs.readFileSync(path.join(base, 'access_auth.sqlite'));
    expect(bytes.subarray(0, 15).toString('latin1')).toBe('SQLite format 3');
    expect(fs.existsSync(path.join(base, 'access_auth.sqlite-journal'))).toBe(false);
  }, 120_000);
});
