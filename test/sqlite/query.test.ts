/**
 * shed_sqlite query mode on real database files: writes persisted (and only when something
 * changed), reads never written back, limits, BLOBs and big integers, output_csv bytes, the
 * read-only valve, Uploads, forbidden statements, one statement per call, errors quoting SQLite.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { nodeSqlite } from '../../src/core/services/db/node/sqlite.js';
import { ENGINES, useEngine } from './engines.js';
import { makeDb, onDisk, put } from './helpers.js';
import { git } from '../vcs/helpers.js';

let s: Shed;
afterEach(() => s?.cleanup());

const sql = (query: string, extra: Record<string, unknown> = {}) => s.call('shed_sqlite', { zone: 'storage', path: 'app.db', query, ...extra });
const db = () => s.zonePath('storage', 'app.db');

async function seed(n = 25): Promise<void> {
  const values = Array.from({ length: n }, (_, i) => `(${i + 1}, 'name ${i + 1}', ${(i + 1) * 1.5})`).join(',');
  await makeDb(db(), `CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v REAL); INSERT INTO t VALUES ${values};`);
}

describe.each(ENGINES)('%s engine', (engine) => {
  useEngine(engine);

  describe('writes', () => {
    it('a new database in a folder that does not exist: made with its folder; a failing statement leaves no database', async () => {
      s = makeShed();
      const bad = await s.call('shed_sqlite', { zone: 'storage', path: 'dir/new.db', query: 'a.txt' });
      expect(bad.error?.code).toBe('SQL_ERROR');
      expect(fs.existsSync(s.zonePath('storage', 'dir/new.db'))).toBe(false);
      const ok = await s.call('shed_sqlite', { zone: 'storage', path: 'dir/new.db', query: 'CREATE TABLE t(a)' });
      expect(ok.success, JSON.stringify(ok.error)).toBe(true);
      expect(fs.statSync(s.zonePath('storage', 'dir/new.db')).isFile()).toBe(true);
    });

    it('CREATE on a new path creates the database; INSERT with params persists; rows_affected and last_row_id', async () => {
      s = makeShed();
      const c = await sql('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)');
      expect(c.success, JSON.stringify(c.error)).toBe(true);
      expect(c.data).toMatchObject({ created: true, rows_affected: 0 });
      expect(c.message).toContain('created Storage/app.db');
      const i = await sql('INSERT INTO notes (body) VALUES (?), (?)', { params: ["it's", null] });
      expect(i.data).toMatchObject({ rows_affected: 2, last_row_id: 2 });
      expect(i.message).toContain('INSERT changed 2 rows');
      expect(await onDisk(db(), 'SELECT id, body FROM notes')).toEqual([
        [1, "it's"],
        [2, null],
      ]);
      // no -journal / -wal / -shm beside it once the call is done, no temp left; sql.js writes a
      // rollback-journal file, the file engine a WAL database (the sqlite_journal_mode valve)
      expect(fs.readdirSync(path.dirname(db())).sort()).toEqual(['app.db']);
      expect(fs.readFileSync(db()).subarray(18, 20)).toEqual(Buffer.from(engine === 'sql.js' ? [1, 1] : [2, 2]));
    });

    it('a DML statement that changes nothing leaves the file untouched', async () => {
      s = makeShed();
      await seed(3);
      const before = fs.statSync(db()).mtimeMs;
      const bytes = fs.readFileSync(db());
      await new Promise((r) => setTimeout(r, 20));
      const r = await sql('UPDATE t SET name = ? WHERE id = ?', { params: ['x', 999] });
      expect(r.data!.rows_affected).toBe(0);
      expect(r.message).toContain('nothing changed');
      expect(fs.statSync(db()).mtimeMs).toBe(before);
      expect(fs.readFileSync(db()).equals(bytes)).toBe(true);
    });

    it('a failing statement writes nothing and quotes SQLite', async () => {
      s = makeShed();
      await makeDb(db(), 'CREATE TABLE u(a INTEGER UNIQUE); INSERT INTO u VALUES (1), (2);');
      const bytes = fs.readFileSync(db());
      const r = await sql('UPDATE u SET a = 5');
      expect(r.error?.code).toBe('SQL_ERROR');
      expect(r.error?.message).toContain('UNIQUE constraint failed: u.a');
      expect(r.error?.details?.sqlite_message).toContain('UNIQUE');
      expect(fs.readFileSync(db()).equals(bytes)).toBe(true);
    });

    it('RETURNING rows come back with the write', async () => {
      s = makeShed();
      await seed(2);
      const r = await sql("INSERT INTO t (name, v) VALUES ('z', 9) RETURNING id, name");
      expect(r.data).toMatchObject({ rows_affected: 1, columns: ['id', 'name'], rows: [[3, 'z']] });
    });

    it('Documents: a write is committed once (data.commit), a read is not', async () => {
      s = makeShed();
      const w = await s.call('shed_sqlite', { zone: 'documents', path: 'd.db', query: 'CREATE TABLE a (x)' });
      expect(w.success).toBe(true);
      expect(w.data!.commit).toMatch(/^[0-9a-f]{7}$/);
      const log = git(s.zonePath('documents'), 'log', '--format=%s', '--name-only');
      expect(log).toContain('d.db');
      const r = await s.call('shed_sqlite', { zone: 'documents', path: 'd.db', query: 'SELECT * FROM a' });
      expect(r.data!.commit).toBeUndefined();
    });
  });

  describe('reads', () => {
    it('returns columns and rows as arrays, 10 rows by default, with the total and how to get more', async () => {
      s = makeShed();
      await seed(25);
      const bytes = fs.readFileSync(db());
      const r = await sql('SELECT id, name FROM t ORDER BY id');
      expect(r.data).toMatchObject({ columns: ['id', 'name'], row_count: 10, truncated: true, total_rows: 25, truncated_by: 'row limit' });
      expect(r.data!.rows[0]).toEqual([1, 'name 1']);
      expect(r.message).toContain('Showing 10 of 25 rows');
      expect(r.message).toContain('output_csv');
      expect(fs.readFileSync(db()).equals(bytes)).toBe(true);
    });

    it('limit=N, limit=0 (up to the ceiling), a limit above the ceiling, and the SQL\'s own LIMIT', async () => {
      s = makeShed({ sqlite_max_rows: 20 });
      await seed(25);
      expect((await sql('SELECT * FROM t', { limit: 3 })).data!.row_count).toBe(3);
      const zero = await sql('SELECT * FROM t', { limit: 0 });
      expect(zero.data).toMatchObject({ row_count: 20, truncated: true, total_rows: 25 });
      const above = await sql('SELECT * FROM t', { limit: 500 });
      expect(above.data).toMatchObject({ row_count: 20, limit_capped_at: 20 });
      const own = await sql('SELECT * FROM t LIMIT 15');
      expect(own.data).toMatchObject({ row_count: 15 });
      expect(own.data!.truncated).toBeUndefined();
      const neg = await sql('SELECT 1', { limit: -1 });
      expect(neg.error?.code).toBe('INVALID_PARAMETER');
      expect(neg.error?.message).toContain("'limit'");
    });

    it('the default limit follows the sqlite_default_limit valve', async () => {
      s = makeShed({ sqlite_default_limit: 4 });
      await seed(9);
      expect((await sql('SELECT * FROM t')).data!.row_count).toBe(4);
    });

    it('BLOBs are shown as size and hex; big integers as exact strings; the call never crashes', async () => {
      s = makeShed();
      await makeDb(db(), `CREATE TABLE b(x); INSERT INTO b VALUES (x'89504e470d0a'), (randomblob(100)), (9007199254740993), (1.5), ('é');`);
      const r = await sql('SELECT x FROM b');
      expect(r.success).toBe(true);
      const rows = r.data!.rows as unknown[][];
      expect(rows[0]).toEqual([{ blob: 6, hex: '89504e470d0a' }]);
      expect((rows[1]![0] as { blob: number; hex: string }).blob).toBe(100);
      expect((rows[1]![0] as { hex: string }).hex).toMatch(/^[0-9a-f]{64}\.\.\.$/);
      expect(rows.slice(2)).toEqual([['9007199254740993'], [1.5], ['é']]);
    });

    it('stops at the output size budget and cuts a huge cell', async () => {
      s = makeShed({ max_output_default: 2000 });
      await makeDb(db(), `CREATE TABLE big(t); INSERT INTO big SELECT printf('%.500c', 'x') FROM (WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n < 50) SELECT n FROM c); INSERT INTO big VALUES (printf('%.50000c', 'y'));`);
      const r = await sql('SELECT t FROM big', { limit: 100 });
      expect(r.data!.truncated_by).toBe('output size');
      expect(JSON.stringify(r.data!.rows).length).toBeLessThan(4000);
      const cell = await sql('SELECT t FROM big WHERE length(t) > 1000');
      expect(String((cell.data!.rows as string[][])[0]![0])).toContain('[cut: 50000 characters');
    });

    it('WITH ... SELECT, EXPLAIN and PRAGMA reads work under the read-only valve; writes are refused', async () => {
      s = makeShed({ sqlite_readonly: true });
      await seed(3);
      const bytes = fs.readFileSync(db());
      expect((await sql('WITH x AS (SELECT id FROM t) SELECT count(*) FROM x')).data!.rows).toEqual([[3]]);
      expect((await sql('EXPLAIN QUERY PLAN SELECT * FROM t')).success).toBe(true);
      expect((await sql('PRAGMA table_info(t)')).data!.row_count).toBe(3);
      for (const q of ['DELETE FROM t', 'WITH x AS (SELECT 1) DELETE FROM t', 'PRAGMA user_version = 3', 'CREATE TABLE z(a)']) {
        const r = await sql(q);
        expect(r.error?.code, q).toBe('COMMAND_FORBIDDEN');
        expect(r.error?.message).toContain('read-only');
      }
      expect(fs.readFileSync(db()).equals(bytes)).toBe(true);
    });

    it('a read query never writes the file back, even if it changes the in-memory copy', async () => {
      s = makeShed();
      await seed(3);
      const bytes = fs.readFileSync(db());
      // PRAGMA without '=' is a read; this one reports and changes nothing persistent anyway
      expect((await sql('PRAGMA user_version')).data!.rows).toEqual([[0]]);
      expect(fs.readFileSync(db()).equals(bytes)).toBe(true);
    });

    it('reading a missing database is FILE_NOT_FOUND and creates nothing', async () => {
      s = makeShed();
      const r = await sql('SELECT 1', { path: 'sub/none.db' });
      expect(r.error?.code).toBe('FILE_NOT_FOUND');
      expect(fs.existsSync(s.zonePath('storage', 'sub'))).toBe(false);
    });

    it('a file that is not a SQLite database is INVALID_FORMAT, for reads and writes', async () => {
      s = makeShed();
      put(s, 'app.db', 'hello, I am text and not a database at all............................................................');
      expect((await sql('SELECT 1')).error?.code).toBe('INVALID_FORMAT');
      const w = await sql('CREATE TABLE a(x)');
      expect(w.error?.code).toBe('INVALID_FORMAT');
      expect(fs.readFileSync(db(), 'utf8')).toContain('hello');
    });

    it('a -wal beside the database (another program has it open): sql.js refuses writes and warns; the file engine works through it', async () => {
      s = makeShed();
      await seed(1);
      if (engine === 'sql.js') {
        put(s, 'app.db-wal', 'x'.repeat(100));
        const w = await sql("INSERT INTO t (name) VALUES ('a')");
        expect(w.error?.code).toBe('FILE_LOCKED');
        expect(w.error?.message).toContain('-wal');
        const r = await sql('SELECT count(*) FROM t');
        expect(r.data!.warning).toContain('-wal');
        return;
      }
      // Another program keeps a connection open with a committed row still in its -wal.
      const other = new (nodeSqlite()!.DatabaseSync)(db());
      try {
        other.exec("PRAGMA journal_mode = WAL; INSERT INTO t (name) VALUES ('from another program')");
        expect(fs.statSync(`${db()}-wal`).size).toBeGreaterThan(0);
        const r = await sql("SELECT name FROM t WHERE name LIKE 'from%'");
        expect(r.data).toMatchObject({ rows: [['from another program']] });
        expect(r.data!.warning).toBeUndefined();
        expect((await sql("INSERT INTO t (name) VALUES ('a')")).success).toBe(true);
        expect(other.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 3 });
      } finally {
        other.close();
      }
    });
  });

  describe('statements refused', () => {
    it.each([
      "ATTACH DATABASE '/etc/passwd' AS p",
      "attach '../other.db' as o",
      "/**/aTtAcH/**/'x.db'/**/AS/**/x",
      'DETACH DATABASE main',
      "SELECT load_extension('/tmp/evil.so')",
    ])('%s → COMMAND_FORBIDDEN', async (q) => {
      s = makeShed();
      await seed(1);
      const r = await sql(q);
      expect(r.error?.code).toBe('COMMAND_FORBIDDEN');
      expect(r.error?.details?.parameter).toBe('query');
    });

    it('a column named attachment, and ATTACH inside a string or comment, work', async () => {
      s = makeShed();
      const c = await sql('CREATE TABLE mail (attachment TEXT, detached INTEGER)');
      expect(c.success, JSON.stringify(c.error)).toBe(true);
      expect((await sql("INSERT INTO mail VALUES ('ATTACH DATABASE x', 1) -- ATTACH"))).toMatchObject({ success: true });
      expect((await sql('SELECT attachment, detached FROM mail /* DETACH */')).data!.rows).toEqual([['ATTACH DATABASE x', 1]]);
    });

    it('more than one statement is refused before anything runs', async () => {
      s = makeShed();
      await seed(2);
      const bytes = fs.readFileSync(db());
      const r = await sql('DELETE FROM t; DROP TABLE t');
      expect(r.error?.code).toBe('INVALID_PARAMETER');
      expect(r.error?.message).toContain('more than one SQL statement');
      expect(fs.readFileSync(db()).equals(bytes)).toBe(true);
      // a trailing semicolon and comments are fine; a trigger body with inner ';' is one statement
      expect((await sql('SELECT 1; -- done')).success).toBe(true);
      const trig = await sql('CREATE TRIGGER tr AFTER INSERT ON t BEGIN UPDATE t SET v = 0 WHERE id = new.id; SELECT 1; END');
      expect(trig.success, JSON.stringify(trig.error)).toBe(true);
    });

    it('BEGIN/COMMIT are refused with an explanation', async () => {
      s = makeShed();
      const r = await sql('BEGIN TRANSACTION');
      expect(r.error?.code).toBe('INVALID_PARAMETER');
      expect(r.error?.message).toContain('transaction');
    });

    it('a placeholder count that does not match params is explained', async () => {
      s = makeShed();
      await seed(2);
      const r = await sql('SELECT * FROM t WHERE id = ? AND name = ?', { params: [1] });
      expect(r.error?.code).toBe('INVALID_PARAMETER');
      expect(r.error?.message).toContain('2 ? placeholders');
      expect(r.error?.message).toContain('1 value');
    });

    it('SQL errors quote SQLite and list the tables for a missing table', async () => {
      s = makeShed();
      await seed(1);
      const missing = await sql('SELECT * FROM sales');
      expect(missing.error?.code).toBe('SQL_ERROR');
      expect(missing.error?.message).toContain('no such table: sales');
      expect(missing.error?.hint).toContain('t(id, name, v)');
      const syntax = await sql('SELEC * FORM t');
      expect(syntax.error?.message).toContain('syntax error');
    });
  });

  describe('the same answers on both engines', () => {
    it('parameters bind by number whatever their form; JSON integers bind as integers', async () => {
      s = makeShed();
      await seed(1);
      const r = await sql('SELECT :a, ?2, @c, typeof(:a), typeof(?2), typeof(@c)', { params: [1, 2.5, 'x'] });
      expect(r.data!.rows).toEqual([[1, 2.5, 'x', 'integer', 'real', 'text']]);
      expect((await sql('SELECT ?, ?, typeof(?)', { params: [true, null, 7] })).data!.rows).toEqual([[1, null, 'integer']]);
      const extra = await sql('SELECT :a', { params: [1, 2] });
      expect(extra.error?.code).toBe('SQL_ERROR');
      expect(extra.error?.message).toContain('column index out of range');
    });

    it("SQLite's defaults: foreign keys and recursive triggers off, double-quoted strings accepted", async () => {
      s = makeShed();
      await seed(1);
      expect((await sql('PRAGMA foreign_keys')).data!.rows).toEqual([[0]]);
      expect((await sql('PRAGMA recursive_triggers')).data!.rows).toEqual([[0]]);
      expect((await sql('SELECT "not a column" FROM t')).data!.rows).toEqual([['not a column']]);
    });

    it('PRAGMAs that report and database settings run; the engine\'s limits, journal and paths are refused', async () => {
      s = makeShed();
      await seed(2);
      expect((await sql('PRAGMA user_version = 3')).success).toBe(true);
      expect((await sql('PRAGMA user_version')).data!.rows).toEqual([[3]]);
      expect((await sql('PRAGMA table_info(t)')).data!.row_count).toBe(3);
      expect((await sql('PRAGMA integrity_check')).data!.rows).toEqual([['ok']]);
      const bytes = fs.readFileSync(db());
      for (const q of ['PRAGMA max_page_count = 10', 'PRAGMA journal_mode = OFF', 'PRAGMA main.synchronous = 0', 'PRAGMA cache_size(1000000)', 'PRAGMA trusted_schema = ON', 'PRAGMA database_list', 'SELECT * FROM pragma_database_list', 'SELECT * FROM "pragma_database_list"']) {
        const r = await sql(q);
        expect(r.error?.code, q).toBe('COMMAND_FORBIDDEN');
        expect(r.error?.details?.forbidden, q).toBeDefined();
      }
      expect(fs.readFileSync(db()).equals(bytes)).toBe(true);
    });
  });

  describe('Uploads', () => {
    it('reads work; writes are ZONE_FORBIDDEN; output_csv is ZONE_READONLY', async () => {
      s = makeShed();
      await makeDb(s.zonePath('uploads', 'u.db'), "CREATE TABLE a(x); INSERT INTO a VALUES ('up');");
      const bytes = fs.readFileSync(s.zonePath('uploads', 'u.db'));
      const r = await s.call('shed_sqlite', { zone: 'uploads', path: 'u.db', query: 'SELECT x FROM a' });
      expect(r.data!.rows).toEqual([['up']]);
      const w = await s.call('shed_sqlite', { zone: 'uploads', path: 'u.db', query: 'DELETE FROM a' });
      expect(w.error?.code).toBe('ZONE_FORBIDDEN');
      expect(w.error?.hint).toContain('shed_move_uploads_to_storage');
      const o = await s.call('shed_sqlite', { zone: 'uploads', path: 'u.db', query: 'SELECT x FROM a', output_csv: 'o.csv' });
      expect(o.error?.code).toBe('ZONE_READONLY');
      expect(fs.readFileSync(s.zonePath('uploads', 'u.db')).equals(bytes)).toBe(true);
      expect(fs.existsSync(s.zonePath('uploads', 'o.csv'))).toBe(false);
    });
  });

  describe('output_csv', () => {
    it('writes every row, RFC 4180 quoting, LF line ends, NULL empty, BLOB hex, exact integers', async () => {
      s = makeShed();
      await makeDb(db(), `CREATE TABLE e(a, b); INSERT INTO e VALUES (1, 'plain'), (2, 'has,comma'), (3, 'has "quote"'), (4, 'two
lines'), (NULL, x'00ff'), (9007199254740993, 'é');`);
      const r = await sql('SELECT a, b FROM e', { output_csv: 'out/e.csv' });
      expect(r.success, JSON.stringify(r.error)).toBe(true);
      expect(r.data).toMatchObject({ rows_exported: 6, columns: ['a', 'b'], output_csv: 'out/e.csv' });
      expect(r.data!.format).toContain('LF');
      expect(fs.readFileSync(s.zonePath('storage', 'out/e.csv'), 'utf8')).toBe(
        'a,b\n1,plain\n2,"has,comma"\n3,"has ""quote"""\n4,"two\nlines"\n,00ff\n9007199254740993,é\n',
      );
    });

    it('exports more rows than the display limit; refuses the database itself and non-read statements', async () => {
      s = makeShed();
      await seed(25);
      const r = await sql('SELECT id FROM t', { output_csv: 'ids.csv' });
      expect(r.data!.rows_exported).toBe(25);
      expect(fs.readFileSync(s.zonePath('storage', 'ids.csv'), 'utf8').split('\n')).toHaveLength(27);
      const self = await sql('SELECT 1', { output_csv: 'app.db' });
      expect(self.error?.code).toBe('INVALID_PARAMETER');
      expect(self.error?.hint).toContain('output_csv="app.csv"');
      const write = await sql('DELETE FROM t', { output_csv: 'x.csv' });
      expect(write.error?.code).toBe('INVALID_PARAMETER');
      expect(await onDisk(db(), 'SELECT count(*) FROM t')).toEqual([[25]]);
    });

    it('an export over max_file_size_mb is refused and leaves no file or temp file', async () => {
      s = makeShed({ max_file_size_mb: 1 });
      await makeDb(db(), `CREATE TABLE big(t); INSERT INTO big SELECT printf('%.1000c', 'x') FROM (WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n < 3000) SELECT n FROM c);`);
      const r = await sql('SELECT t FROM big', { output_csv: 'big.csv' });
      expect(r.error?.code).toBe('FILE_TOO_LARGE');
      expect(fs.readdirSync(s.zonePath('storage')).sort()).toEqual(['app.db']);
    });
  });
});
