/**
 * The file engine (node:sqlite on the database file, Node 24 and 26) on its own terms:
 * - its walls hold without the tokenizer: jobs posted straight to a SQLite child with what the
 *   tokenizer refuses (ATTACH, VACUUM INTO, file: URIs, extension loading, unsafe PRAGMAs,
 *   transaction control, writes on a read) are refused by SQLite's authorizer and defensive mode;
 * - SQLite opens only the file the resolver approved (a link swapped in is refused);
 * - the quota and max_file_size_mb hold through max_page_count, with a -wal beside the database
 *   counted, and a refused statement leaves the file unchanged;
 * - SQLite's own locking: a reader never waits for an uncommitted writer (WAL), a writer waits for
 *   another's lock (busy timeout) and reports FILE_LOCKED when it stays held;
 * - shed_parameters names the engine.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ShedError } from '../../src/core/base/errors.js';
import { NodeDb } from '../../src/core/services/db/node/connection.js';
import { runFileJob } from '../../src/core/services/db/node/children.js';
import { nodeSqlite, type DatabaseSync } from '../../src/core/services/db/node/sqlite.js';
import { shutdownPool } from '../../src/core/base/work/pool.js';
import { makeShed, type Shed } from '../helpers/shed.js';
import { onDisk } from './helpers.js';

const sqlite = nodeSqlite();
let s: Shed | undefined;
let other: DatabaseSync | undefined;
const dirs: string[] = [];
afterEach(() => {
  other?.close();
  other = undefined;
  s?.cleanup();
  s = undefined;
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});
afterAll(() => shutdownPool());

const JOB = { timeoutMs: 20_000, onTimeout: () => new Error('timeout') };

/** A database file in a fresh folder, built directly with node:sqlite. */
function tempDb(sql: string): { dir: string; abs: string } {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-file-engine-')));
  dirs.push(dir);
  const abs = path.join(dir, 'app.db');
  const db = new sqlite!.DatabaseSync(abs);
  db.exec(sql);
  db.close();
  return { dir, abs };
}

/** This process's SQLite children (node reading its code from stdin) with their nice value. */
function sqliteChildren(): { pid: number; nice: number }[] {
  const out: { pid: number; nice: number }[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) !== process.pid || fields[0] === 'Z') continue;
      if (!fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('--input-type=module')) continue;
      out.push({ pid: Number(name), nice: Number(fields[16]) });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

function fileJob(abs: string) {
  return { file: { abs, rel: 'app.db', shown: 'Storage/app.db' }, busyMs: 2000, maxValueBytes: 64 * 1024 * 1024 };
}

/** A statement posted straight to a SQLite child: no tokenizer, only the engine's own walls. */
function engineWrite(abs: string, query: string, vacuum = false): Promise<unknown> {
  const stmt = { query, params: undefined, limit: 10, budget: 10_000 };
  return runFileJob('db.write', { ...fileJob(abs), create: false, journalMode: 'wal', maxFileBytes: 1e9, roomBytes: 1e9, stmt, dml: false, vacuum }, JOB);
}

function engineRead(abs: string, query: string): Promise<unknown> {
  return runFileJob('db.read', { ...fileJob(abs), stmt: { query, params: undefined, limit: 10, budget: 10_000 } }, JOB);
}

describe.skipIf(sqlite === undefined)('file engine', () => {
  describe('walls without the tokenizer', () => {
    it.each([
      ["ATTACH DATABASE 'other.db' AS o", false],
      ["ATTACH 'file:other.db?mode=rwc' AS o", false],
      ["ATTACH '' AS scratch", false],
      ['VACUUM', false], // VACUUM attaches a temporary database: only when the tokenizer saw a plain VACUUM
      ["VACUUM INTO 'copy.db'", true],
      ["SELECT load_extension('/nonexistent/evil.so')", false],
      ['PRAGMA max_page_count = 4294967294', false],
      ['PRAGMA journal_mode = OFF', false],
      ['PRAGMA synchronous = OFF', false],
      ['PRAGMA writable_schema = ON', false],
      ['PRAGMA trusted_schema = ON', false],
      ["PRAGMA temp_store_directory = '/tmp'", false],
      ['PRAGMA cache_size = -8000000', false],
      ['PRAGMA mmap_size = 1000000000', false],
      ['PRAGMA database_list', false],
      ['SELECT file FROM pragma_database_list', false],
      ['BEGIN', false],
      ['COMMIT', false],
      ['SAVEPOINT a', false],
      ["UPDATE sqlite_schema SET sql = 'CREATE TABLE t(x, y)' WHERE name = 't'", false],
    ] as const)('write job: %s is refused by SQLite, the folder and the file unchanged', async (query, vacuum) => {
      const { dir, abs } = tempDb("CREATE TABLE t(x); INSERT INTO t VALUES ('kept');");
      const before = fs.readFileSync(abs);
      const err = (await engineWrite(abs, query, vacuum).catch((e: unknown) => e)) as ShedError;
      expect(err.code, query).toBe('SQL_ERROR');
      expect(String(err.details?.sqlite_message)).toMatch(/not authorized|authorization denied|may not be modified/);
      expect(fs.readdirSync(dir)).toEqual(['app.db']);
      expect(fs.readFileSync(abs).equals(before)).toBe(true);
    });

    it('a plain VACUUM that the tokenizer saw runs; a trigger cannot call load_extension', async () => {
      const { abs } = tempDb("CREATE TABLE t(x); INSERT INTO t VALUES ('kept');");
      await expect(engineWrite(abs, 'VACUUM', true)).resolves.toMatchObject({ written: true });
      await engineWrite(abs, "CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT load_extension('/nonexistent/evil.so'); END").catch(() => undefined);
      const err = (await engineWrite(abs, "INSERT INTO t VALUES ('x')").catch((e: unknown) => e)) as ShedError;
      expect(err.code).toBe('SQL_ERROR');
      expect(await onDisk(abs, 'SELECT x FROM t')).toEqual([['kept']]);
    });

    it.each(["INSERT INTO t VALUES ('no')", 'CREATE TABLE u(x)', 'DROP TABLE t', 'PRAGMA user_version = 7', 'DELETE FROM t RETURNING x'])(
      'read job: %s changes nothing',
      async (query) => {
        const { abs } = tempDb("CREATE TABLE t(x); INSERT INTO t VALUES ('kept');");
        const before = fs.readFileSync(abs);
        const err = (await engineRead(abs, query).catch((e: unknown) => e)) as ShedError;
        expect(err.code, query).toBe('SQL_ERROR');
        expect(fs.readFileSync(abs).equals(before)).toBe(true);
      },
    );

    it('SQLite opens only the file the resolver approved: a link put in its place is refused', () => {
      const { dir, abs } = tempDb('CREATE TABLE secret(x)');
      const link = path.join(dir, 'link.db');
      fs.symlinkSync(abs, link);
      expect(() => NodeDb.open({ abs: link, shown: 'Storage/link.db', create: false, busyMs: 100, maxValueBytes: 1e6 })).toThrow(/replaced by a link/);
    });
  });

  it('a statement allocating past its process\'s memory cap (ulimit -d) is RESOURCE_LIMIT, and the next call is served', async () => {
    s = makeShed();
    expect((await s.call('shed_sqlite', { zone: 'storage', path: 'm.db', query: 'CREATE TABLE t(x)' })).success).toBe(true);
    // Each value is within SQLite's length limit (512 MB); together they pass the cap of the process.
    const hog = await s.call('shed_sqlite', { zone: 'storage', path: 'm.db', query: `SELECT ${Array.from({ length: 8 }, () => "zeroblob(400000000) || x'00'").join(', ')}` });
    expect(hog.error?.code, JSON.stringify(hog).slice(0, 300)).toBe('RESOURCE_LIMIT');
    expect((await s.call('shed_sqlite', { zone: 'storage', path: 'm.db', query: 'SELECT count(*) FROM t' })).data!.rows).toEqual([[0]]);
  });

  it('a statement drops to nice 19 after 100 ms; that process then serves imports (at once at nice 19), statements get one at normal priority', async () => {
    // A fresh pool: an earlier test's statement that ran past 100 ms (the memory hog above, on a
    // loaded machine) leaves a process at nice 19, which is the pool's design, not this test's start.
    // The first statement must itself finish within those 100 ms to leave its process at normal
    // priority; on a loaded machine (CI) it may not, so the start is tried again on a fresh pool.
    for (let attempt = 1; ; attempt++) {
      await shutdownPool();
      s?.cleanup();
      s = makeShed();
      const started = Date.now();
      expect((await s.call('shed_sqlite', { zone: 'storage', path: 'p.db', query: 'CREATE TABLE t(x)' })).success).toBe(true);
      if (Date.now() - started < 100 || attempt === 5) break;
    }
    const own = os.getPriority(); // the server's priority (this test process)
    expect(sqliteChildren().every((c) => c.nice === own)).toBe(true);
    const long = s.call('shed_sqlite', { zone: 'storage', path: 'p.db', query: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000) SELECT count(*) FROM c' });
    let demoted: number | undefined;
    const until = Date.now() + 20_000;
    while (demoted === undefined && Date.now() < until) {
      demoted = sqliteChildren().find((c) => c.nice === 19)?.pid;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(demoted).toBeDefined();
    expect((await long).data!.rows).toEqual([[2000000]]);
    // Statements meanwhile and afterwards run at normal priority; an import takes the demoted process.
    expect((await s.call('shed_sqlite', { zone: 'storage', path: 'p.db', query: 'SELECT count(*) FROM t' })).data!.rows).toEqual([[0]]);
    fs.writeFileSync(s.zonePath('storage', 'p.csv'), 'a,b\n1,2\n');
    expect((await s.call('shed_sqlite', { zone: 'storage', path: 'p.db', import_csv: 'p.csv', table: 'u' })).success).toBe(true);
    const after = sqliteChildren();
    expect(after.filter((c) => c.nice === 19).map((c) => c.pid)).toEqual([demoted]);
    expect(after.some((c) => c.nice === own)).toBe(true);
  }, 60_000);

  it('an import into a new database writes it with a rollback journal, then leaves it in WAL mode and alone in its folder', async () => {
    s = makeShed();
    const dir = s.zonePath('storage');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'a.csv'), `id,name\n${Array.from({ length: 5000 }, (_, i) => `${i},name ${i} é`).join('\n')}\n`);
    const r = await s.call('shed_sqlite', { zone: 'storage', path: 'new.db', import_csv: 'a.csv', table: 't' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'new.db')).subarray(18, 20)).toEqual(Buffer.from([2, 2]));
    expect(fs.readdirSync(dir).sort()).toEqual(['a.csv', 'new.db']);
    expect(await onDisk(path.join(dir, 'new.db'), "SELECT count(*), max(name) FROM t WHERE name LIKE '% é'")).toEqual([[5000, 'name 999 é']]);
  });

  describe('quota and size through max_page_count', () => {
    const sql = (query: string, params?: unknown[]) => s!.call('shed_sqlite', { zone: 'storage', path: 'q.db', query, ...(params ? { params } : {}) });

    it('a statement past the quota is QUOTA_EXCEEDED and leaves the database unchanged; one within it passes', async () => {
      s = makeShed({ quota_per_user_mb: 1 });
      expect((await sql('CREATE TABLE b(x)')).success).toBe(true);
      expect((await sql('INSERT INTO b VALUES (randomblob(300000))')).success).toBe(true);
      const before = fs.readFileSync(s.zonePath('storage', 'q.db'));
      const r = await sql('INSERT INTO b SELECT randomblob(300000) FROM (VALUES (1), (2), (3))');
      expect(r.error?.code, JSON.stringify(r)).toBe('QUOTA_EXCEEDED');
      expect(r.error?.hint).toMatch(/shed_delete/);
      expect(fs.readFileSync(s.zonePath('storage', 'q.db')).equals(before)).toBe(true);
      expect(await onDisk(s.zonePath('storage', 'q.db'), 'SELECT count(*) FROM b')).toEqual([[1]]);
      expect((await sql('INSERT INTO b VALUES (randomblob(200000))')).success).toBe(true);
    });

    it('a -wal file beside the database counts: the room is what the quota leaves after it', async () => {
      s = makeShed({ quota_per_user_mb: 2 });
      expect((await sql('CREATE TABLE b(x)')).success).toBe(true);
      expect((await sql('INSERT INTO b VALUES (randomblob(600000))')).success).toBe(true);
      const abs = s.zonePath('storage', 'q.db');
      // Another program holds the database open; two rewrites of the row wait in its -wal (1.2 MB).
      other = new sqlite!.DatabaseSync(abs);
      other.exec('PRAGMA wal_autocheckpoint = 0; UPDATE b SET x = randomblob(600000); UPDATE b SET x = randomblob(600000);');
      expect(fs.statSync(`${abs}-wal`).size).toBeGreaterThan(1_200_000);
      // 0.6 MB database + 1.2 MB -wal: 0.2 MB left, so 0.3 MB more is refused (without the -wal, 1.4 MB were left).
      const r = await sql('INSERT INTO b VALUES (randomblob(300000))');
      expect(r.error?.code, JSON.stringify(r)).toBe('QUOTA_EXCEEDED');
      expect(Number((other.prepare('SELECT count(*) AS n FROM b').get() as { n: number }).n)).toBe(1);
      expect((await sql('INSERT INTO b VALUES (randomblob(50000))')).success).toBe(true);
    });

    it('max_file_size_mb: FILE_TOO_LARGE, the database unchanged', async () => {
      s = makeShed({ max_file_size_mb: 1 });
      expect((await sql('CREATE TABLE b(x)')).success).toBe(true);
      const before = fs.readFileSync(s.zonePath('storage', 'q.db'));
      const r = await sql('INSERT INTO b VALUES (randomblob(2000000))');
      expect(r.error?.code).toBe('FILE_TOO_LARGE');
      expect(fs.readFileSync(s.zonePath('storage', 'q.db')).equals(before)).toBe(true);
    });
  });

  describe("SQLite's own locking", () => {
    const sql = (query: string) => s!.call('shed_sqlite', { zone: 'storage', path: 'l.db', query });

    it('a reader never waits for an uncommitted writer (WAL); a writer waits for the lock, then writes', async () => {
      s = makeShed();
      expect((await sql('CREATE TABLE t(x)')).success).toBe(true);
      expect((await sql("INSERT INTO t VALUES ('committed')")).success).toBe(true);
      other = new sqlite!.DatabaseSync(s.zonePath('storage', 'l.db'));
      other.exec("BEGIN IMMEDIATE; INSERT INTO t VALUES ('pending')");
      const t0 = performance.now();
      const read = await sql('SELECT x FROM t');
      expect(read.data!.rows).toEqual([['committed']]);
      expect(performance.now() - t0).toBeLessThan(1000);
      const writer = sql("INSERT INTO t VALUES ('ours')");
      await new Promise((r) => setTimeout(r, 300));
      other.exec('COMMIT');
      expect((await writer).success).toBe(true);
      expect((await sql('SELECT x FROM t ORDER BY rowid')).data!.rows).toEqual([['committed'], ['pending'], ['ours']]);
    });

    it('a lock held past the busy timeout is FILE_LOCKED, and nothing is written', async () => {
      // The busy wait is 3/4 of the statement's timeout: 3 s here, a second before the deadline.
      s = makeShed({ sqlite_timeout_seconds: 4 });
      expect((await sql('CREATE TABLE t(x)')).success).toBe(true);
      other = new sqlite!.DatabaseSync(s.zonePath('storage', 'l.db'));
      other.exec("BEGIN IMMEDIATE; INSERT INTO t VALUES ('pending')");
      const r = await sql("INSERT INTO t VALUES ('ours')");
      expect(r.error?.code, JSON.stringify(r)).toBe('FILE_LOCKED');
      other.exec('ROLLBACK');
      expect((await sql('SELECT count(*) FROM t')).data!.rows).toEqual([[0]]);
    });
  });

  it('shed_parameters names the engine; FILESHED_SQLITE_ENGINE=sql.js switches to sql.js', async () => {
    s = makeShed();
    expect((await s.call('shed_parameters')).data!.sqlite_engine).toMatchObject({ engine: 'node:sqlite', mode: expect.stringContaining('file-backed') });
    process.env.FILESHED_SQLITE_ENGINE = 'sql.js';
    try {
      expect((await s.call('shed_parameters')).data!.sqlite_engine).toMatchObject({ engine: 'sql.js' });
    } finally {
      delete process.env.FILESHED_SQLITE_ENGINE;
    }
  });
});
