/**
 * The SQL tokeniser's decisions: read or write, forbidden keywords by token (never by substring),
 * the statement's own LIMIT, placeholders.
 */
import { describe, expect, it } from 'vitest';
import { analyzeSql, isTrivia, quoteIdent, tokenize } from '../../src/core/formats/sql/tokens.js';

describe('tokenize', () => {
  it('skips comments and keeps strings, quoted names, blobs and parameters whole', () => {
    const t = tokenize(`SELECT /* c; */ 'it''s', "a""b", [x y], \`q\`, x'00ff', ?1, :name, 1.5e-3 -- end ;\nFROM t`);
    expect(t.map((x) => [x.kind, x.value])).toEqual([
      ['word', 'SELECT'],
      ['string', "'it''s'"],
      ['punct', ','],
      ['quoted', 'a"b'],
      ['punct', ','],
      ['quoted', 'x y'],
      ['punct', ','],
      ['quoted', 'q'],
      ['punct', ','],
      ['blob', "x'00ff'"],
      ['punct', ','],
      ['param', '?1'],
      ['punct', ','],
      ['param', ':name'],
      ['punct', ','],
      ['number', '1.5e-3'],
      ['word', 'FROM'],
      ['word', 'T'],
    ]);
  });

  it('isTrivia: only whitespace, comments and semicolons', () => {
    expect(isTrivia(' ; -- x\n /* y */ ;')).toBe(true);
    expect(isTrivia('; SELECT 1')).toBe(false);
  });

  it('quoteIdent doubles quotes', () => {
    expect(quoteIdent('a"b')).toBe('"a""b"');
  });
});

describe('analyzeSql: reads and writes', () => {
  it.each([
    ['SELECT * FROM t', true, 'SELECT'],
    ['  select 1', true, 'SELECT'],
    ['VALUES (1), (2)', true, 'VALUES'],
    ['WITH x AS (SELECT 1) SELECT * FROM x', true, 'SELECT'],
    ['WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n < 5), d AS MATERIALIZED (SELECT 2) SELECT * FROM c', true, 'SELECT'],
    ['WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x', false, 'INSERT'],
    ['WITH x AS (SELECT 1) DELETE FROM t WHERE a IN x', false, 'DELETE'],
    ['EXPLAIN QUERY PLAN SELECT * FROM t', true, 'EXPLAIN'],
    ['PRAGMA table_info(t)', true, 'PRAGMA'],
    ['PRAGMA main.table_info("t")', true, 'PRAGMA'],
    ['PRAGMA user_version', true, 'PRAGMA'],
    ['PRAGMA integrity_check', true, 'PRAGMA'],
    ['PRAGMA user_version = 5', false, 'PRAGMA'],
    ['PRAGMA journal_mode(WAL)', false, 'PRAGMA'],
    ['PRAGMA optimize', false, 'PRAGMA'],
    ['INSERT INTO t VALUES (1)', false, 'INSERT'],
    ['/* SELECT */ UPDATE t SET a = 1', false, 'UPDATE'],
    ['-- SELECT\nDELETE FROM t', false, 'DELETE'],
    ['CREATE TABLE t (a)', false, 'CREATE'],
    ['DROP TABLE t', false, 'DROP'],
    ['REPLACE INTO t VALUES (1)', false, 'REPLACE'],
    ['VACUUM', false, 'VACUUM'],
  ])('%s → read=%s', (sql, read, verb) => {
    const a = analyzeSql(sql);
    expect(a.read).toBe(read);
    expect(a.verb).toBe(verb);
  });

  it('transaction statements are recognised', () => {
    for (const sql of ['BEGIN', 'begin transaction', 'COMMIT', 'END', 'ROLLBACK', 'SAVEPOINT a', 'RELEASE a']) expect(analyzeSql(sql).transaction, sql).toBe(true);
    expect(analyzeSql('SELECT 1').transaction).toBe(false);
  });
});

describe('analyzeSql: PRAGMAs per sql-policy', () => {
  it.each(['PRAGMA max_page_count = 1', 'PRAGMA journal_mode=off', 'PRAGMA main.journal_mode(WAL)', 'PRAGMA "synchronous" = 0', 'PRAGMA mmap_size = 1e9', 'PRAGMA hard_heap_limit = 0', "PRAGMA temp_store_directory = '/tmp'", 'PRAGMA writable_schema = 1', 'PRAGMA database_list', 'SELECT * FROM pragma_database_list'])(
    '%s is forbidden',
    (sql) => {
      expect(analyzeSql(sql).forbidden).toMatch(/^pragma/i);
    },
  );

  it.each(['PRAGMA user_version = 5', 'PRAGMA foreign_keys = ON', 'PRAGMA table_info(t)', 'PRAGMA main.index_list("t")', 'PRAGMA journal_mode', 'PRAGMA max_page_count', 'PRAGMA integrity_check(10)', 'SELECT * FROM pragma_table_info(\'t\')'])('%s is allowed', (sql) => {
    expect(analyzeSql(sql).forbidden).toBeUndefined();
  });
});

describe('analyzeSql: forbidden by token, not by substring', () => {
  it.each([
    "ATTACH DATABASE 'x.db' AS x",
    "attach 'x.db' as x",
    "Attach Database 'x.db' As x",
    "/**/ATTACH/**/'x.db'/**/AS/**/x",
    "-- hello\nATTACH 'x' AS y",
    'DETACH x',
    'detach database x',
    "SELECT load_extension('evil')",
    "SELECT LOAD_EXTENSION('evil')",
    "SELECT \"load_extension\"('evil')",
    "SELECT 1; ATTACH 'x' AS y",
  ])('%s is forbidden', (sql) => {
    expect(analyzeSql(sql).forbidden).toBeDefined();
  });

  it.each([
    'SELECT attachment FROM t',
    'SELECT detached_at, attach_id FROM t',
    "SELECT 'ATTACH DATABASE x' AS s",
    'SELECT "attach" FROM t',
    'SELECT 1 -- ATTACH x',
    'SELECT 1 /* DETACH x */',
    "SELECT * FROM t WHERE note = 'load_extension'",
  ])('%s is fine', (sql) => {
    expect(analyzeSql(sql).forbidden).toBeUndefined();
  });
});

describe('analyzeSql: LIMIT and placeholders', () => {
  it('sees only a top-level LIMIT', () => {
    expect(analyzeSql('SELECT * FROM t LIMIT 5').hasLimit).toBe(true);
    expect(analyzeSql('SELECT * FROM (SELECT * FROM t LIMIT 5)').hasLimit).toBe(false);
    expect(analyzeSql("SELECT 'LIMIT 5'").hasLimit).toBe(false);
  });

  it('counts plain ? placeholders, not ? inside strings', () => {
    expect(analyzeSql("SELECT * FROM t WHERE a = ? AND b = '?' AND c = ?").placeholders).toEqual({ plain: 2, other: false });
    expect(analyzeSql('SELECT :a, ?2').placeholders).toEqual({ plain: 0, other: true });
  });
});
