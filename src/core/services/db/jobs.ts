/**
 * The sql.js engine's work as pool jobs (see core/base/work): each runs on a worker thread, opens its own
 * sql.js database from the file's bytes and returns plain data (results, or the new database image),
 * so a runaway statement can be stopped by terminating its worker without touching the file.
 * run.ts posts them (and the file engine's, node/jobs.ts) from the main thread.
 */
import fs from 'node:fs';
import type { JobContext, JobTable } from '../../base/work/jobs.js';
import { importCsv, type ImportRequest } from './csv/import.js';
import { exportCsv } from './csv-export.js';
import type { FileRef } from './dbheader.js';
import { readDbBytes, type ImageJob, type ImageOutcome } from './dbfile.js';
import { openDatabase, sqlEngine } from './engine.js';
import { memoryGuard, prepareOne, runStatement, SQLITE_HEAP_MB, type BindValue } from './query.js';
import type { SqlStatement } from './sqldb.js';
import { SqlJsDb } from './sqljs-db.js';

export interface StatementInput {
  query: string;
  params: BindValue[] | undefined;
  limit: number;
  budget: number;
}

export interface ExportInput {
  query: string;
  params: BindValue[] | undefined;
  outAbs: string;
  maxBytes: number;
  roomBytes: number;
  outShown: string;
}

export type ImportInput = Omit<ImportRequest, 'db' | 'progress'>;

/** The database file to read (none: a new database), the staged descriptor to write, and the size hint. */
type ImageInput = Pick<ImageJob, 'source' | 'outFd' | 'padTo'>;

/** Caps SQLite's heap, and turns its "out of memory" into RESOURCE_LIMIT. */
async function open(bytes: Uint8Array | undefined, padTo = 0): Promise<SqlJsDb> {
  const db = await openDatabase(bytes, padTo);
  try {
    db.run(`PRAGMA hard_heap_limit=${SQLITE_HEAP_MB * 1024 * 1024}`);
  } catch {
    // older SQLite without the pragma: the worker's own memory cap still applies
  }
  return new SqlJsDb(db, await sqlEngine());
}

/** Worker side. */
export const sqlJobs: JobTable = {
  async 'sql.read'(input) {
    const { file, stmt } = input as { file: FileRef; stmt: StatementInput };
    return onStatement(file, stmt.query, stmt.params, (db, s) => runStatement(db, s, stmt.query, { limit: stmt.limit, budget: stmt.budget, write: false }));
  },

  async 'sql.export'(input) {
    const { file, exp } = input as { file: FileRef; exp: ExportInput };
    return onStatement(file, exp.query, exp.params, (db, s) => exportCsv(db, s, exp.query, exp.outAbs, { maxBytes: exp.maxBytes, roomBytes: exp.roomBytes, shown: exp.outShown }));
  },

  async 'sql.write'(input) {
    const { image, stmt, dml } = input as { image: ImageInput; stmt: StatementInput; dml: boolean };
    const db = await openImage(image);
    try {
      const s = prepareOne(db, stmt.query, stmt.params);
      const res = runStatement(db, s, stmt.query, { limit: stmt.limit, budget: stmt.budget, write: true });
      // A DML statement that touched no row changed nothing: the file is left alone (and no commit).
      const changed = !(dml && res.changes === 0 && !res.schemaChanged);
      return imageReply(db, res, changed, image.outFd);
    } catch (err) {
      return memoryGuard(err);
    } finally {
      db.close();
    }
  },

  async 'sql.import'(input, ctx: JobContext) {
    const { image, req } = input as { image: ImageInput; req: ImportInput };
    const db = await openImage(image);
    try {
      const report = await importCsv({ ...req, db, progress: async (done, total, rows) => ctx.progress(done, total, rows) });
      return imageReply(db, report, true, image.outFd);
    } catch (err) {
      return memoryGuard(err);
    } finally {
      db.close();
    }
  },
};

/** Opens the database file read-only (its bytes), prepares and binds one statement, runs `fn`, closes. */
async function onStatement<T>(file: FileRef, query: string, params: BindValue[] | undefined, fn: (db: SqlJsDb, s: SqlStatement) => T): Promise<{ value: T }> {
  const db = await open(readDbBytes(file));
  try {
    const s = prepareOne(db, query, params);
    return { value: fn(db, s) };
  } catch (err) {
    return memoryGuard(err);
  } finally {
    db.close();
  }
}

function openImage(image: ImageInput): Promise<SqlJsDb> {
  return open(image.source === undefined ? undefined : readDbBytes(image.source), image.padTo);
}

/** Writes the new image to the staged file and syncs it, here in the worker; the main thread renames it. */
function imageReply<T>(db: SqlJsDb, result: T, changed: boolean, outFd: number): { value: ImageOutcome<T> } {
  if (!changed) return { value: { result, size: undefined } };
  const bytes = db.db.export();
  let done = 0;
  while (done < bytes.length) done += fs.writeSync(outFd, bytes, done, bytes.length - done);
  fs.fsyncSync(outFd);
  return { value: { result, size: bytes.length } };
}
