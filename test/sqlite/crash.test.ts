/**
 * The file engine under kill -9 (Node 24 and 26): a server process killed with its SQLite child in
 * the middle of a large write leaves a database that passes `PRAGMA integrity_check`, with the
 * statement wholly applied or not at all (WAL and rollback journal); and a SQLite child whose server
 * dies while it runs a runaway statement does not live on (its watchdog kills it). The servers run a
 * bundle of the current sources, built here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { nodeSqlite } from '../../src/core/services/db/node/sqlite.js';
import { makeShed, type Shed } from '../helpers/shed.js';

const sqlite = nodeSqlite();
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-sqlite-crash-'));
const bundle = path.join(work, 'fileshed.mjs');
const server = path.join(work, 'server.mjs');

beforeAll(async () => {
  if (sqlite === undefined) return;
  const { pluginBundleOptions } = createRequire(import.meta.url)('../../build/bundle-options.cjs') as { pluginBundleOptions(out: string): Parameters<typeof build>[0] };
  await build(pluginBundleOptions(bundle));
  fs.writeFileSync(
    server,
    `import { Tools } from './fileshed.mjs';
const [base, journal, timeout, query] = process.argv.slice(2);
const tools = new Tools();
tools.valves = { ...tools.valves, storage_base_path: base, sqlite_journal_mode: journal, sqlite_timeout_seconds: Number(timeout) };
process.stdout.write('calling\\n');
process.stdout.write(await tools.shed_sqlite({ zone: 'storage', path: 'c.db', query, __user__: { id: 'alice' } }) + '\\n');
`,
  );
}, 60_000);
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

let s: Shed | undefined;
let proc: ChildProcess | undefined;
afterEach(() => {
  if (proc?.exitCode === null) process.kill(-proc.pid!, 'SIGKILL');
  proc = undefined;
  s?.cleanup();
  s = undefined;
});

/** A server in its own process group (so the group kill takes its SQLite child too). */
function startServer(base: string, journal: string, timeout: number, query: string): Promise<ChildProcess> {
  const p = spawn(process.execPath, [server, base, journal, String(timeout), query], { detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
  proc = p;
  return new Promise((resolve) => p.stdout!.once('data', () => resolve(p)));
}

async function waitFor(test: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (test()) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return test();
}

function size(file: string): number {
  return fs.statSync(file, { throwIfNoEntry: false })?.size ?? 0;
}

/** Live processes (from /proc, zombies left out) whose parent (field 1) or process group (field 2) is `id`. */
function processes(field: 1 | 2, id: number): number[] {
  const out: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[field]) === id && fields[0] !== 'Z') out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

const BIG_INSERT = 'INSERT INTO t SELECT x, randomblob(300) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 400000) SELECT x FROM c)';

describe.skipIf(sqlite === undefined)('file engine under kill -9', () => {
  it.each(['wal', 'delete'])('journal %s: a server killed in the middle of a large write leaves an intact database, the statement all or nothing', async (journal) => {
    s = makeShed({ sqlite_journal_mode: journal });
    expect((await s.call('shed_sqlite', { zone: 'storage', path: 'c.db', query: 'CREATE TABLE t(n INTEGER, pad BLOB)' })).success).toBe(true);
    expect((await s.call('shed_sqlite', { zone: 'storage', path: 'c.db', query: 'INSERT INTO t VALUES (0, NULL)' })).success).toBe(true);
    const abs = s.zonePath('storage', 'c.db');
    const sizeBefore = size(abs);
    const p = await startServer(s.base, journal, 120, BIG_INSERT);
    // The write is under way once pages reach the disk: frames in the -wal, or the journal beside a grown file.
    const writing = journal === 'wal' ? () => size(`${abs}-wal`) > 8_000_000 : () => fs.existsSync(`${abs}-journal`) && size(abs) > sizeBefore + 8_000_000;
    expect(await waitFor(writing, 60_000)).toBe(true);
    process.kill(-p.pid!, 'SIGKILL');
    expect(await waitFor(() => processes(2, p.pid!).length === 0, 10_000)).toBe(true); // the server and its SQLite child
    // The first connection rolls back what the killed one left; it waits for a lock a moment (this
    // process's own SQLite child from the calls above may hold one briefly on a loaded machine).
    const db = new sqlite!.DatabaseSync(abs, { timeout: 10_000 });
    try {
      expect(db.prepare('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);
      const { n } = db.prepare('SELECT count(*) AS n FROM t').get() as { n: number };
      expect([1, 400_001]).toContain(Number(n));
    } finally {
      db.close();
    }
    const r = await s.call('shed_sqlite', { zone: 'storage', path: 'c.db', query: 'INSERT INTO t VALUES (-1, NULL)' });
    expect(r.success).toBe(true);
    // No rollback journal or temp file is left; a WAL database may keep its -wal and -shm beside it
    // (SQLite removes them only when the last connection of any process closes).
    const left = fs.readdirSync(path.dirname(abs)).filter((name) => !(journal === 'wal' && /^c\.db-(wal|shm)$/.test(name)));
    expect(left).toEqual(['c.db']);
  }, 120_000);

  it('a SQLite child whose server dies during a runaway statement is killed by its watchdog', async () => {
    s = makeShed();
    expect((await s.call('shed_sqlite', { zone: 'storage', path: 'c.db', query: 'CREATE TABLE t(x)' })).success).toBe(true);
    const p = await startServer(s.base, 'wal', 600, 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c');
    // The server's SQLite child (sh execs node: the child is node itself) is running the statement.
    let kids: number[] = [];
    expect(await waitFor(() => (kids = processes(1, p.pid!)).length > 0, 30_000)).toBe(true);
    await new Promise((r) => setTimeout(r, 300));
    // Alive up to the server's death (checked before it: the watchdog may take the child within 250 ms
    // of it, sooner than a loaded machine delivers the server's exit to this process).
    expect(kids.some(alive)).toBe(true);
    process.kill(p.pid!, 'SIGKILL'); // the server only: its child is orphaned in the middle of the statement
    await new Promise((r) => p.once('exit', r));
    // Nothing else ends it: the statement never returns to JavaScript, so only the watchdog thread can.
    expect(await waitFor(() => !kids.some(alive), 5_000)).toBe(true);
  }, 60_000);
});
