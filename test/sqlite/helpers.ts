/**
 * Helpers for the SQLite tests: arranging real files in a zone, and reading a database file back
 * from disk with a fresh sql.js instance (what is on disk is what counts).
 */
import fs from 'node:fs';
import path from 'node:path';
import initSqlJs, { type SqlValue } from 'sql.js';
import type { Shed } from '../helpers/shed.js';

export type ZoneDir = 'storage' | 'documents' | 'uploads';

export function put(s: Shed, rel: string, content: string | Uint8Array, zone: ZoneDir = 'storage'): string {
  const abs = s.zonePath(zone, rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, content);
  return abs;
}

const engine = initSqlJs();

/** Rows of a query run on the database file as it is on disk. */
export async function onDisk(abs: string, sql: string): Promise<SqlValue[][]> {
  const SQL = await engine;
  const db = new SQL.Database(fs.readFileSync(abs));
  try {
    return db.exec(sql)[0]?.values ?? [];
  } finally {
    db.close();
  }
}

/** Declared column types of a table on disk: {name: type}. */
export async function columnTypes(abs: string, table: string): Promise<Record<string, string>> {
  const rows = await onDisk(abs, `SELECT name, type FROM pragma_table_info('${table}')`);
  return Object.fromEntries(rows.map((r) => [String(r[0]), String(r[1])]));
}

/** Builds a database file directly (not through shed_sqlite), for arranging tests. */
export async function makeDb(abs: string, sql: string): Promise<void> {
  const SQL = await engine;
  const db = new SQL.Database();
  db.run(sql);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, db.export());
  db.close();
}
