/**
 * Writers of one database file lose nothing: two real server processes, `shed_exec sqlite3` in the
 * test's process and, for the file engine, a sqlite3 process writing on its own (no Fileshed lock:
 * only SQLite's locking and busy timeouts). sql.js serialises its read-modify-replace writes with
 * the per-database lock file. The children run a bundle of the current sources (built here into a
 * temp folder, so dist/ is not touched).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ShedError } from '../../src/core/base/errors.js';
import { withDbLock } from '../../src/core/services/db/dblock.js';
import { makeShed, type Shed } from '../helpers/shed.js';
import { ENGINES, useEngine } from './engines.js';
import { onDisk } from './helpers.js';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-sqlite-conc-'));
const bundle = path.join(work, 'fileshed.mjs');
const child = path.join(work, 'child.mjs');

beforeAll(async () => {
  const { pluginBundleOptions } = createRequire(import.meta.url)('../../build/bundle-options.cjs') as { pluginBundleOptions(out: string): Parameters<typeof build>[0] };
  await build(pluginBundleOptions(bundle));
  fs.writeFileSync(
    child,
    `import { Tools } from './fileshed.mjs';
const [base, who, count] = process.argv.slice(2);
const tools = new Tools();
tools.valves = { ...tools.valves, storage_base_path: base };
for (let i = 0; i < Number(count); i++) {
  const r = JSON.parse(await tools.shed_sqlite({ zone: 'storage', path: 'shared.db', query: 'INSERT INTO log (who, n) VALUES (?, ?)', params: [who, i], __user__: { id: 'alice' }, __metadata__: { chat_id: who } }));
  if (!r.success) { console.error(JSON.stringify(r)); process.exit(1); }
}
`,
  );
}, 60_000);

afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

function run(base: string, who: string, count: number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [child, base, who, String(count)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => resolve({ code, stderr }));
  });
}

let s: Shed;
afterAll(() => s?.cleanup());

/** A sqlite3 process writing on its own: `count` inserts, each its own transaction, with a busy timeout. */
function externalWriter(dbPath: string, count: number): Promise<{ code: number | null; stderr: string }> {
  const script = ['.timeout 20000', ...Array.from({ length: count }, (_, i) => `INSERT INTO log (who, n) VALUES ('x', ${i});`)].join('\n');
  return new Promise((resolve) => {
    const p = spawn('sqlite3', [dbPath], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => resolve({ code, stderr }));
    p.stdin.end(`${script}\n`);
  });
}

describe.each(ENGINES)('%s engine: writers of one database', (engine) => {
  useEngine(engine);

  it('two server processes, shed_exec sqlite3 and (file engine) a sqlite3 of its own lose no insert, and leave no lock file inside the zone', async () => {
    s = makeShed({ sandbox: 'validated' });
    const create = await s.call('shed_sqlite', { zone: 'storage', path: 'shared.db', query: 'CREATE TABLE log (who TEXT, n INTEGER)' });
    expect(create.success).toBe(true);
    const db = s.zonePath('storage', 'shared.db');
    const N = 40;
    const execs = async () => {
      for (let i = 0; i < 10; i++) {
        const r = await s.call('shed_exec', { zone: 'storage', cmd: 'sqlite3', args: ['shared.db', `PRAGMA busy_timeout = 20000; INSERT INTO log (who, n) VALUES ('e', ${i});`] });
        expect(r.success, JSON.stringify(r.error ?? r.data)).toBe(true);
      }
    };
    const external = engine === 'node:sqlite' ? externalWriter(db, N) : Promise.resolve({ code: 0, stderr: '' });
    const [a, b, , x] = await Promise.all([run(s.base, 'a', N), run(s.base, 'b', N), execs(), external]);
    expect(a, a.stderr).toMatchObject({ code: 0 });
    expect(b, b.stderr).toMatchObject({ code: 0 });
    expect(x, x.stderr).toMatchObject({ code: 0 });
    const sum = (k: number) => (k * (k - 1)) / 2;
    expect(await onDisk(db, 'SELECT who, count(*), count(DISTINCT n), sum(n) FROM log GROUP BY who ORDER BY who')).toEqual([
      ['a', N, N, sum(N)],
      ['b', N, N, sum(N)],
      ['e', 10, 10, sum(10)],
      ...(engine === 'node:sqlite' ? [['x', N, N, sum(N)]] : []),
    ]);
    expect(await onDisk(db, 'PRAGMA integrity_check')).toEqual([['ok']]);
    expect(fs.readdirSync(s.zonePath('storage'))).toEqual(['shared.db']);
    const locks = path.join(s.base, 'users', 'alice', 'Storage', 'dblocks');
    expect(fs.existsSync(locks) ? fs.readdirSync(locks) : []).toEqual([]);
  }, 120_000);
});

describe('the database lock', () => {
  const lockDir = () => fs.mkdtempSync(path.join(work, 'lock-'));
  const body = (pid: number) => JSON.stringify({ pid, host: os.hostname(), nonce: 'other', at: new Date().toISOString() });

  it('breaks a lock whose holder process is gone', async () => {
    const lock = path.join(lockDir(), 'db.lock');
    const gone = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => gone.on('close', r));
    fs.writeFileSync(lock, body(gone.pid!));
    const t0 = Date.now();
    expect(await withDbLock(lock, 'Storage/x.db', async () => fs.readFileSync(lock, 'utf8'), 5000)).toContain(String(process.pid));
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(fs.existsSync(lock)).toBe(false);
  });

  it('waits for a live holder, then reports FILE_LOCKED naming the database', async () => {
    const lock = path.join(lockDir(), 'db.lock');
    fs.writeFileSync(lock, body(process.pid === 1 ? 2 : 1)); // pid 1 is always alive
    const err = await withDbLock(lock, 'Storage/x.db', async () => 'ran', 300).catch((e: unknown) => e);
    expect((err as ShedError).code).toBe('FILE_LOCKED');
    expect((err as ShedError).message).toContain('Storage/x.db');
    expect(fs.readFileSync(lock, 'utf8')).toContain('other');
  });

  it('a garbage lock file that stopped changing is broken', async () => {
    const lock = path.join(lockDir(), 'db.lock');
    fs.writeFileSync(lock, 'garbage');
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(lock, old, old);
    expect(await withDbLock(lock, 'x', async () => 'ran', 2000)).toBe('ran');
  });

  it('calls in one process take turns', async () => {
    const lock = path.join(lockDir(), 'db.lock');
    let inside = 0;
    let overlap = false;
    const work1 = async () => {
      inside++;
      if (inside > 1) overlap = true;
      await new Promise((r) => setTimeout(r, 20));
      inside--;
    };
    await Promise.all(Array.from({ length: 5 }, () => withDbLock(lock, 'x', work1)));
    expect(overlap).toBe(false);
  });
});
