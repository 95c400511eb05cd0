/**
 * Is this file a SQLite database? Checked before either engine opens it, so a text file named
 * x.db gets the same teaching error on both (sql.js would fail on the bytes, node:sqlite only at the
 * first statement, with "file is not a database").
 */
import fs from 'node:fs';
import { shedError } from '../../base/errors.js';

const MAGIC = Buffer.from('SQLite format 3\u0000', 'latin1');

/** A database file as the engines and the messages see it. */
export interface FileRef {
  /** Real absolute path (resolved by the zone's resolver). */
  abs: string;
  rel: string;
  /** What users see: "Storage/sales.db". */
  shown: string;
}

export function notSqlite(t: FileRef): Error {
  return shedError('INVALID_FORMAT', `${t.shown} is not a SQLite database (its first bytes are not "SQLite format 3").`, {
    details: { path: t.rel },
    hint: 'Check the file with shed_file_type. To build a database from a CSV use import_csv=... with table=...; a new path creates a new database.',
  });
}

/** True when `bytes` (the start of a file, or all of it) can be a database: empty, or the magic. */
export function looksLikeSqlite(bytes: Uint8Array): boolean {
  return bytes.length === 0 || (bytes.length >= 100 && Buffer.from(bytes.buffer, bytes.byteOffset, 16).equals(MAGIC));
}

/** Throws INVALID_FORMAT unless the file at `t.abs` is empty or starts like a database. */
export function requireSqliteFile(t: FileRef): void {
  const fd = fs.openSync(t.abs, 'r');
  try {
    const head = Buffer.alloc(100);
    const n = fs.readSync(fd, head, 0, 100, 0);
    if (!looksLikeSqlite(head.subarray(0, n))) throw notSqlite(t);
  } finally {
    fs.closeSync(fd);
  }
}
