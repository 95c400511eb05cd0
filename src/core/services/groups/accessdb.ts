/**
 * The access database `{storage_base_path}/access_auth.sqlite` (sql.js): per-file ownership in group
 * spaces, the standalone group directory (groups, group_members), download links and signing keys. Every write is one cycle
 * under the cross-process lock: load fresh bytes, migrate, change, export, atomic replace — so two
 * processes writing at once never lose an update. Reads load the current file without the lock
 * (files are only ever replaced whole, so a reader sees one complete version).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Database, SqlValue } from 'sql.js';
import { atomicWrite } from '../../base/fs/atomic.js';
import { TimeSlice } from '../../base/fs/slice.js';
import { readBytes } from '../../base/fs/read.js';
import { errnoCode } from '../../base/paths/resolve.js';
import { dbLockPath, withDbLock } from '../db/dblock.js';
import { openDatabase, scalar } from '../db/engine.js';

export const ACCESS_DB = 'access_auth.sqlite';
export const OWNERSHIP_MODES = ['owner', 'group', 'owner_ro'] as const;
export type OwnershipMode = (typeof OWNERSHIP_MODES)[number];

/** Schema steps; user_version = number of steps applied. Append only. */
const MIGRATIONS: string[] = [
  `CREATE TABLE IF NOT EXISTS file_ownership (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     group_id TEXT NOT NULL,
     file_path TEXT NOT NULL,
     owner_id TEXT NOT NULL,
     write_access TEXT NOT NULL CHECK (write_access IN ('owner','group','owner_ro')),
     created_at TEXT DEFAULT CURRENT_TIMESTAMP,
     updated_at TEXT DEFAULT CURRENT_TIMESTAMP,
     UNIQUE (group_id, file_path));
   CREATE INDEX IF NOT EXISTS idx_ownership_group ON file_ownership(group_id);
   CREATE INDEX IF NOT EXISTS idx_ownership_owner ON file_ownership(owner_id);
   CREATE INDEX IF NOT EXISTS idx_ownership_group_path ON file_ownership(group_id, file_path);
   CREATE TABLE IF NOT EXISTS groups (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL UNIQUE,
     description TEXT NOT NULL DEFAULT '',
     created_at TEXT DEFAULT CURRENT_TIMESTAMP);
   CREATE TABLE IF NOT EXISTS group_members (
     group_id TEXT NOT NULL REFERENCES groups(id) ON DELETE CASCADE,
     user_id TEXT NOT NULL,
     PRIMARY KEY (group_id, user_id));`,
  // Download links (src/core/services/links): one row per link, never the token itself (it is recomputed
  // from the id with the signing secret), and the signing secrets (current + previous).
  `CREATE TABLE IF NOT EXISTS links (
     id TEXT PRIMARY KEY,
     user_id TEXT NOT NULL,
     zone TEXT NOT NULL CHECK (zone IN ('uploads','storage','documents','group')),
     group_id TEXT,
     conv_id TEXT NOT NULL DEFAULT '',
     path TEXT NOT NULL,
     kind TEXT NOT NULL CHECK (kind IN ('file','folder')),
     created_at TEXT NOT NULL,
     expires_at TEXT NOT NULL,
     revoked_at TEXT);
   CREATE INDEX IF NOT EXISTS idx_links_user ON links(user_id);
   CREATE TABLE IF NOT EXISTS keys (
     name TEXT PRIMARY KEY,
     secret TEXT NOT NULL,
     created_at TEXT NOT NULL);`,
  // Kernel identities (src/core/services/ids): a uid per user (its personal gid is the same number) and a gid
  // per group, allocated once from one number space, the same for every instance sharing the base.
  `CREATE TABLE IF NOT EXISTS kernel_ids (
     kind TEXT NOT NULL CHECK (kind IN ('user','group')),
     name TEXT NOT NULL,
     id INTEGER NOT NULL UNIQUE CHECK (id > 0 AND id < 4294967295),
     created_at TEXT DEFAULT CURRENT_TIMESTAMP,
     PRIMARY KEY (kind, name));`,
];

export function accessDbPath(base: string): string {
  return path.join(path.resolve(base), ACCESS_DB);
}

function migrate(db: Database): boolean {
  const version = Number(scalar(db, 'PRAGMA user_version') ?? 0);
  if (version >= MIGRATIONS.length) return false;
  for (let v = version; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v]!);
  db.exec(`PRAGMA user_version = ${MIGRATIONS.length}`);
  return true;
}

function readDatabase(abs: string): Buffer | undefined {
  try {
    return readBytes(abs);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Runs `fn` on the current database; nothing is written back. `fn` may be async (a query over a
 * group's records yields in slices, rowsSliced): the database is this call's own copy meanwhile.
 */
export async function readAccess<T>(base: string, fn: (db: Database) => T | Promise<T>): Promise<T> {
  return queryBytes(readDatabase(accessDbPath(base)), fn);
}

/** `fn` on a database opened from these bytes (none: an empty one), brought to this version's schema. */
async function queryBytes<T>(bytes: Buffer | undefined, fn: (db: Database) => T | Promise<T>): Promise<T> {
  const db = await openDatabase(bytes);
  try {
    migrate(db);
    db.exec('PRAGMA foreign_keys = ON');
    return await fn(db);
  } finally {
    db.close();
  }
}

/**
 * Answers of readAccessMemo by question, with the digest of the database bytes they were read from.
 * A group's records are asked for before and after every command in it (the guard, the identity
 * sync, the folders taken over): stepping through 1,000 rows in sql.js took ~30 ms each time.
 */
const answers = new Map<string, { digest: string; value: readonly unknown[] }>();
/** Rows kept together (~150 bytes each), least recently asked first out. */
const MAX_ROWS = 200_000;
let rowsKept = 0;

/**
 * readAccess for a question asked again and again: the database file is read each time (every
 * instance writes it whole), and the answer is reused while its bytes are exactly those it was
 * read from (a digest of them, never a time or an inode number that a later write may repeat).
 * `copy` gives each caller its own answer to change.
 */
export async function readAccessMemo<T extends readonly unknown[]>(base: string, question: string, fn: (db: Database) => Promise<T>, copy: (value: T) => T): Promise<T> {
  const abs = accessDbPath(base);
  const bytes = readDatabase(abs);
  const digest = bytes === undefined ? '' : crypto.createHash('sha256').update(bytes).digest('hex');
  const key = `${abs}\0${question}`;
  const hit = answers.get(key);
  if (hit !== undefined && hit.digest === digest) {
    answers.delete(key); // the most recent last
    answers.set(key, hit);
    return copy(hit.value as T);
  }
  const value = await queryBytes(bytes, fn);
  rowsKept -= answers.get(key)?.value.length ?? 0;
  answers.delete(key);
  if (value.length <= MAX_ROWS) {
    answers.set(key, { digest, value: copy(value) });
    rowsKept += value.length;
  }
  for (const [k, a] of answers) {
    if (rowsKept <= MAX_ROWS) break;
    answers.delete(k);
    rowsKept -= a.value.length;
  }
  return value;
}

/**
 * One write cycle under the cross-process lock; the file is replaced only when something changed.
 * A call that makes or moves many records does it all in ONE cycle (`fn` may be async and yield
 * between rows): one load, one export, one fsync, whatever the number of files.
 */
export async function writeAccess<T>(base: string, fn: (db: Database) => T | Promise<T>): Promise<T> {
  const abs = accessDbPath(base);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  return withDbLock(dbLockPath(path.dirname(abs), abs), ACCESS_DB, async () => {
    const db = await openDatabase(readDatabase(abs));
    try {
      const migrated = migrate(db);
      db.exec('PRAGMA foreign_keys = ON');
      const before = Number(scalar(db, 'SELECT total_changes()'));
      const result = await fn(db);
      // The new database replaces the file atomically, written and flushed on the thread pool (a large
      // one does not hold the event loop); 0600: the link-signing secret and link ids are the server's only.
      if (migrated || Number(scalar(db, 'SELECT total_changes()')) !== before) await atomicWrite(abs, db.export(), 0o600);
      return result;
    } finally {
      db.close();
    }
  });
}

/** Rows of a query as plain objects. */
export function rows(db: Database, sql: string, params: SqlValue[] = []): Record<string, SqlValue>[] {
  const stmt = db.prepare(sql);
  try {
    stmt.bind(params);
    const out: Record<string, SqlValue>[] = [];
    while (stmt.step()) out.push(stmt.getAsObject());
    return out;
  } finally {
    stmt.free();
  }
}

/**
 * rows() for queries whose result a user sizes (a group's records: as many as its members make):
 * the statement is stepped within time slices, yielding to the event loop between them.
 */
export async function rowsSliced(db: Database, sql: string, params: SqlValue[] = [], slice = new TimeSlice()): Promise<Record<string, SqlValue>[]> {
  const stmt = db.prepare(sql);
  try {
    stmt.bind(params);
    const out: Record<string, SqlValue>[] = [];
    while (stmt.step()) {
      out.push(stmt.getAsObject());
      if ((out.length & 63) === 0) await slice.tick();
    }
    return out;
  } finally {
    stmt.free();
  }
}
