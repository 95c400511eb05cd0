/**
 * SQLite work as pool jobs (see core/work): each runs on a worker thread, opens its own sql.js
 * database from the file's bytes and returns plain data (results, or the new database image), so a
 * runaway statement can be stopped by terminating its worker without touching the file.
 *
 * `sqlJobs` are the worker-side implementations; the `run*` functions are what handlers call on the
 * main thread (they add the timeout, the status relay and the error for a stopped statement).
 */
import fs from 'node:fs';
import type { Database, Statement } from 'sql.js';
import { shedError } from '../errors.js';
import { runJob } from '../work/pool.js';
import type { JobContext, JobTable } from '../work/jobs.js';
import { importCsv, type ImportReport, type ImportRequest } from './csv/import.js';
import { exportCsv } from './csv-export.js';
import { readDbBytes, type DbTarget, type ImageJob, type ImageOutcome } from './dbfile.js';
import { openDatabase, sqliteMessage } from './engine.js';
import { bindParams, prepareOne, runStatement, type BindValue, type RunResult } from './query.js';

/** SQLite's own allocations per database (page cache, sorts, strings); beyond it a statement fails with "out of memory". */
export const SQLITE_HEAP_MB = 512;

type FileRef = Pick<DbTarget, 'abs' | 'rel' | 'shown'>;

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
async function open(bytes: Uint8Array | undefined, padTo = 0): Promise<Database> {
  const db = await openDatabase(bytes, padTo);
  try {
    db.run(`PRAGMA hard_heap_limit=${SQLITE_HEAP_MB * 1024 * 1024}`);
  } catch {
    // older SQLite without the pragma: the worker's own memory cap still applies
  }
  return db;
}

function memoryGuard(err: unknown): never {
  if (/out of memory|SQLITE_NOMEM/i.test(sqliteMessage(err)) || (err instanceof Error && /out of memory/i.test(err.message))) {
    throw shedError('RESOURCE_LIMIT', `The statement needed more than ${SQLITE_HEAP_MB} MB of memory and was stopped; nothing was changed.`, {
      details: { memory_limit_mb: SQLITE_HEAP_MB },
      hint: 'Return less per row or fewer rows: aggregate in SQL, add WHERE or LIMIT, or export with output_csv.',
    });
  }
  throw err;
}

/** Worker side. */
export const sqlJobs: JobTable = {
  async 'sql.read'(input) {
    const { file, stmt } = input as { file: FileRef; stmt: StatementInput };
    return onStatement(file, stmt.query, stmt.params, (db, s) => runStatement(db, s, stmt.query, { limit: stmt.limit, budget: stmt.budget }));
  },

  async 'sql.export'(input) {
    const { file, exp } = input as { file: FileRef; exp: ExportInput };
    return onStatement(file, exp.query, exp.params, (db, s) => exportCsv(db, s, exp.query, exp.outAbs, { maxBytes: exp.maxBytes, roomBytes: exp.roomBytes, shown: exp.outShown }));
  },

  async 'sql.write'(input) {
    const { image, stmt, dml } = input as { image: ImageInput; stmt: StatementInput; dml: boolean };
    const db = await openImage(image);
    try {
      const s = prepareOne(db, stmt.query);
      bindParams(db, s, stmt.params, stmt.query);
      const res = runStatement(db, s, stmt.query, { limit: stmt.limit, budget: stmt.budget });
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
async function onStatement<T>(file: FileRef, query: string, params: BindValue[] | undefined, fn: (db: Database, s: Statement) => T): Promise<{ value: T }> {
  const db = await open(readDbBytes(file as DbTarget));
  try {
    const s = prepareOne(db, query);
    bindParams(db, s, params, query);
    return { value: fn(db, s) };
  } catch (err) {
    return memoryGuard(err);
  } finally {
    db.close();
  }
}

function openImage(image: ImageInput): Promise<Database> {
  return open(image.source === undefined ? undefined : readDbBytes(image.source as DbTarget), image.padTo);
}

/** Writes the new image to the staged file and syncs it, here in the worker; the main thread renames it. */
function imageReply<T>(db: Database, result: T, changed: boolean, outFd: number): { value: ImageOutcome<T> } {
  if (!changed) return { value: { result, size: undefined } };
  const bytes = db.export();
  let done = 0;
  while (done < bytes.length) done += fs.writeSync(outFd, bytes, done, bytes.length - done);
  fs.fsyncSync(outFd);
  return { value: { result, size: bytes.length } };
}

// ---------------------------------------------------------------------------------------------
// Main-thread side

export interface SqlRunOptions {
  timeoutSeconds: number;
  /** Import progress: bytes done, total, rows so far. */
  onProgress?: (done: number, total: number, rows: number) => void;
}

function timeoutError(seconds: number, query: string | undefined): () => Error {
  return () =>
    shedError('QUERY_TIMEOUT', `${query === undefined ? 'The CSV import' : 'The SQL statement'} ran longer than ${seconds} s (sqlite_timeout_seconds) and was stopped; the database was not changed.`, {
      details: { timeout_seconds: seconds, ...(query === undefined ? {} : { query: query.length > 300 ? `${query.slice(0, 297)}...` : query }) },
      hint:
        query === undefined
          ? 'Import a smaller file (split it), or ask the admin to raise sqlite_timeout_seconds.'
          : 'Make the statement do less: add LIMIT or a WHERE clause, and give a recursive CTE a stop condition (WHERE x < 1000) or a LIMIT.',
    });
}

function options(o: SqlRunOptions, query: string | undefined) {
  return {
    timeoutMs: o.timeoutSeconds * 1000,
    onTimeout: timeoutError(o.timeoutSeconds, query),
    onStatus: o.onProgress === undefined ? undefined : (line: string) => relayProgress(line, o.onProgress!),
  };
}

function relayProgress(line: string, to: (done: number, total: number, rows: number) => void): void {
  const [done, total, rows] = line.split(' ').map(Number);
  to(done ?? 0, total ?? 0, rows ?? 0);
}

function fileRef(t: DbTarget): FileRef {
  return { abs: t.abs, rel: t.rel, shown: t.shown };
}

export function runReadStatement(t: DbTarget, stmt: StatementInput, o: SqlRunOptions): Promise<RunResult> {
  return runJob('sql.read', { file: fileRef(t), stmt }, options(o, stmt.query));
}

export function runExport(t: DbTarget, exp: ExportInput, o: SqlRunOptions): Promise<{ rows: number; bytes: number; columns: string[] }> {
  return runJob('sql.export', { file: fileRef(t), exp }, options(o, exp.query));
}

export function runWriteStatement(image: ImageInput, stmt: StatementInput, dml: boolean, o: SqlRunOptions): Promise<ImageOutcome<RunResult>> {
  return runJob('sql.write', { image, stmt, dml }, options(o, stmt.query));
}

export function runImport(image: ImageInput, req: ImportInput, o: SqlRunOptions): Promise<ImageOutcome<ImportReport>> {
  return runJob('sql.import', { image, req }, options(o, undefined));
}


