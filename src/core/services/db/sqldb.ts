/**
 * What the SQL work (statements, CSV export, CSV import) needs of an open database, so one
 * implementation serves both engines: sql.js on an in-memory image (sqljs-db.ts) and node:sqlite on
 * the file itself (node/connection.ts).
 */

/** A value as SQLite returns it: integers as bigint (exact beyond 2^53), BLOBs as bytes. */
export type SqlValue = number | bigint | string | Uint8Array | null;

/** A value of the call's `params`. */
export type BindValue = string | number | boolean | null;

/** One prepared statement, bound, stepped row by row. */
export interface SqlStatement {
  columns(): string[];
  bind(values: readonly BindValue[]): void;
  /** The next row, or undefined once the statement is done. */
  step(): SqlValue[] | undefined;
  /** Ends the statement (resets it, releasing its locks) and frees it. */
  free(): void;
}

/** The first statement of a text, prepared: its own SQL and what follows it. */
export interface FirstStatement {
  stmt: SqlStatement;
  sql: string;
  rest: string;
}

/** A CSV value for the bulk inserter. */
export type BulkValue = string | number | null;

/** Inserts rows of a fixed width in multi-row statements (CSV import). */
export interface RowInserter {
  value(v: BulkValue): void;
  /** A text value given as UTF-8 bytes (already validated). */
  bytes(src: Buffer, a: number, b: number): void;
  endRow(): void;
  /** Inserts the rows of an unfinished batch. */
  finish(): void;
  free(): void;
}

export interface SqlDb {
  /** Prepares the first statement of `sql`; undefined when it holds none (only comments or ';'). */
  prepareFirst(sql: string): FirstStatement | undefined;
  /** Runs our own SQL (possibly several statements), no result. */
  exec(sql: string): void;
  /** All rows of our own query (integers as numbers where exact). */
  rows(sql: string): SqlValue[][];
  /** A bulk inserter: `sqlHead` is `INSERT INTO t (cols) VALUES `. */
  inserter(sqlHead: string, width: number, rowsPerStatement: number): RowInserter;
  close(): void;
}

/** First column of the first row of our own query (SELECT total_changes(), PRAGMA page_count ...). */
export function scalar(db: SqlDb, sql: string): SqlValue | undefined {
  return db.rows(sql)[0]?.[0];
}

/** SQLite's own message of an error thrown by either engine, without a JS prefix. */
export function sqliteMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/^Error:\s*/, '').trim() || 'unknown SQLite error';
}
