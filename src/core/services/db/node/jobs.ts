/**
 * The file engine's work as jobs of a SQLite child process (child.ts): each opens the database file
 * in place with node:sqlite, runs one statement (or one CSV import) and closes it, so the cost is
 * the statement's, not the database's. SQLite itself keeps the file whole: a statement is atomic
 * (its own transaction; an import is one transaction), a killed process leaves a journal that the
 * next connection rolls back, and its locks serialise writers across processes.
 *
 * Limits are SQLite's too: `max_page_count` lets the database grow no further than its size plus the
 * room left in the quota (which counts the -wal and -journal files beside databases) and no further
 * than max_file_size_mb, so a statement past it fails and rolls back whole.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ShedError, shedError } from '../../../base/errors.js';
import type { JobContext, JobTable } from '../../../base/work/jobs.js';
import { importCsv, type ImportReport } from '../csv/import.js';
import { exportCsv } from '../csv-export.js';
import { requireSqliteFile, type FileRef } from '../dbheader.js';
import type { ExportInput, ImportInput, StatementInput } from '../jobs.js';
import { memoryGuard, prepareOne, runStatement, type RunResult } from '../query.js';
import { scalar, sqliteMessage } from '../sqldb.js';
import { NodeDb } from './connection.js';
import { formatSize } from '../../../base/text/size.js';

export type JournalMode = 'wal' | 'delete' | 'truncate' | 'memory';

/** What every file job gets besides its own input. */
export interface FileJob {
  file: FileRef;
  busyMs: number;
  /** SQLite's length limit: the largest string or BLOB a statement may build. */
  maxValueBytes: number;
}

/** What a job that may change the database gets. */
export interface WriteSetup extends FileJob {
  /** The file does not exist yet (a new database). */
  create: boolean;
  journalMode: JournalMode;
  maxFileBytes: number;
  /** Bytes the quota still allows (measured by the caller, under its call lock). */
  roomBytes: number;
}

export interface WriteJob extends WriteSetup {
  stmt: StatementInput;
  /** INSERT, UPDATE, DELETE or REPLACE: no row changed means nothing written. */
  dml: boolean;
  /** A plain VACUUM (the authorizer then lets it attach its temporary database). */
  vacuum: boolean;
}

export interface ImportJob extends WriteSetup {
  req: Omit<ImportInput, 'maxDbBytes' | 'quotaBound'>;
}

/** What a write job answers. */
export interface FileWriteOutcome<T> {
  result: T;
  /** False when nothing changed (a DML statement that touched no row). */
  written: boolean;
  sizeBefore: number;
  sizeAfter: number;
}

export const fileJobs: JobTable = {
  async 'db.read'(input) {
    const j = input as FileJob & { stmt: StatementInput };
    return { value: onReadStatement(j, j.stmt.query, j.stmt.params, (db, s) => runStatement(db, s, j.stmt.query, { ...j.stmt, write: false })) };
  },

  async 'db.export'(input) {
    const j = input as FileJob & { exp: ExportInput };
    const { exp } = j;
    return { value: onReadStatement(j, exp.query, exp.params, (db, s) => exportCsv(db, s, exp.query, exp.outAbs, { maxBytes: exp.maxBytes, roomBytes: exp.roomBytes, shown: exp.outShown })) };
  },

  async 'db.write'(input) {
    const j = input as WriteJob;
    return {
      value: await onWritable(j, (db) => {
        db.guard('write', j.vacuum);
        let res: RunResult;
        try {
          res = runStatement(db, prepareOne(db, j.stmt.query, j.stmt.params), j.stmt.query, { ...j.stmt, write: true });
        } finally {
          db.unguard();
        }
        return { result: res, written: !(j.dml && res.changes === 0 && !res.schemaChanged) };
      }),
    };
  },

  async 'db.import'(input, ctx: JobContext) {
    const j = input as ImportJob;
    return {
      value: await onWritable(j, async (db, limit): Promise<{ result: ImportReport; written: boolean }> => {
        const progress = async (done: number, total: number, rows: number) => ctx.progress(done, total, rows);
        const report = await importCsv({ ...j.req, db, maxDbBytes: limit.bytes, quotaBound: limit.quotaBound, progress });
        return { result: report, written: true };
      }, 'delete'),
    };
  },

  /**
   * After a write was killed (timeout): the next connection rolls back what it left (a hot journal,
   * uncommitted WAL frames) and, closing last, removes the -wal and -shm files.
   */
  async 'db.recover'(input) {
    const j = input as FileJob;
    if (!fs.existsSync(j.file.abs)) return { value: null };
    const db = NodeDb.open({ abs: j.file.abs, shown: j.file.shown, create: false, busyMs: j.busyMs, maxValueBytes: j.maxValueBytes });
    try {
      db.rows('SELECT count(*) FROM sqlite_schema');
    } finally {
      db.close();
    }
    return { value: null };
  },
};

/** A read: `query_only` and the read authorizer, so nothing the statement does can change the file. */
function onReadStatement<T>(j: FileJob, query: string, params: StatementInput['params'], fn: (db: NodeDb, s: ReturnType<typeof prepareOne>) => T): T {
  requireSqliteFile(j.file);
  const db = NodeDb.open({ abs: j.file.abs, shown: j.file.shown, create: false, busyMs: j.busyMs, maxValueBytes: j.maxValueBytes });
  try {
    db.exec('PRAGMA query_only = ON');
    db.guard('read', false);
    return fn(db, prepareOne(db, query, params));
  } catch (err) {
    return memoryGuard(lockError(err, j.file));
  } finally {
    db.close();
  }
}

interface SizeLimit {
  bytes: number;
  /** The quota, not max_file_size_mb, sets `bytes`. */
  quotaBound: boolean;
}

/**
 * Opens for writing: the size limit as SQLite's max_page_count, the journal mode, the work; closes
 * (the last connection checkpoints a WAL into the file and removes it).
 */
async function onWritable<T>(
  j: WriteSetup,
  work: (db: NodeDb, limit: SizeLimit) => { result: T; written: boolean } | Promise<{ result: T; written: boolean }>,
  newFileMode?: JournalMode,
): Promise<FileWriteOutcome<T>> {
  if (!j.create) requireSqliteFile(j.file);
  const db = NodeDb.open({ abs: j.file.abs, shown: j.file.shown, create: j.create, busyMs: j.busyMs, maxValueBytes: j.maxValueBytes });
  let limit: SizeLimit | undefined;
  try {
    // WAL is the database's own setting (written in its header): an existing database is switched
    // once the call has written, so a call that changes nothing (or fails) leaves the file as it
    // was. The rollback modes are this connection's way to write and apply at once. A database an
    // import creates is written with a rollback journal first (no reader can be waiting for a file
    // that did not exist, and every page is written once instead of to the WAL and again into the
    // file), then switched.
    if (j.create && newFileMode !== undefined) setJournalMode(db, newFileMode, j.busyMs);
    else if (j.journalMode !== 'wal' || j.create) setJournalMode(db, j.journalMode, j.busyMs);
    const pageSize = Number(scalar(db, 'PRAGMA page_size'));
    const sizeBefore = pageBytes(db);
    const byQuota = sizeBefore + j.roomBytes;
    limit = { bytes: Math.min(j.maxFileBytes, byQuota), quotaBound: byQuota < j.maxFileBytes };
    db.exec(`PRAGMA max_page_count = ${Math.max(1, Math.floor(limit.bytes / pageSize))}`);
    const { result, written } = await work(db, limit);
    if (written) setJournalMode(db, j.journalMode, j.busyMs);
    return { result, written, sizeBefore, sizeAfter: pageBytes(db) };
  } catch (err) {
    return memoryGuard(lockError(fullError(err, limit, j.file), j.file));
  } finally {
    db.close();
  }
}

function pageBytes(db: NodeDb): number {
  return Number(scalar(db, 'PRAGMA page_count')) * Number(scalar(db, 'PRAGMA page_size'));
}

/**
 * The valve's journal mode (WAL by default). Switching needs the database to itself for a moment:
 * if another connection holds it, this call keeps the current mode and a later one switches.
 */
function setJournalMode(db: NodeDb, mode: JournalMode, busyMs: number): void {
  if (String(scalar(db, 'PRAGMA journal_mode')).toLowerCase() === mode) return;
  try {
    db.exec('PRAGMA busy_timeout = 100');
    db.exec(`PRAGMA journal_mode = ${mode}`);
  } catch {
    // busy: stay in the current mode
  } finally {
    db.exec(`PRAGMA busy_timeout = ${busyMs}`);
  }
}

/** SQLite's "database or disk is full" is the page limit, unless the disk really is full. */
function fullError(err: unknown, limit: SizeLimit | undefined, file: FileRef): unknown {
  if (limit === undefined) return err;
  const full = err instanceof ShedError ? ['QUOTA_EXCEEDED', 'FILE_TOO_LARGE'].includes(err.code) || /database or disk is full/i.test(String(err.details?.sqlite_message)) : /database or disk is full/i.test(sqliteMessage(err));
  if (!full) return err;
  if (diskFull(file.abs)) return Object.assign(new Error('The storage is full.'), { code: 'ENOSPC' });
  if (err instanceof ShedError && err.code !== 'SQL_ERROR') return err; // the import's own message
  return shedError(limit.quotaBound ? 'QUOTA_EXCEEDED' : 'FILE_TOO_LARGE', `The statement would grow ${file.shown} past ${formatSize(limit.bytes)} (${limit.quotaBound ? 'its size plus the room left in the quota' : 'max_file_size_mb'}); it was stopped and nothing was changed.`, {
    details: { path: file.rel, limit_bytes: limit.bytes },
    hint: 'Free space first (shed_stats shows usage per zone; shed_delete removes files), or change fewer rows per call.',
  });
}

function diskFull(abs: string): boolean {
  try {
    const st = fs.statfsSync(path.dirname(abs));
    return st.bavail * st.bsize < 1024 * 1024;
  } catch {
    return false;
  }
}

/** SQLite's busy error after the busy timeout: another program holds the database. */
function lockError(err: unknown, file: FileRef): unknown {
  const text = err instanceof ShedError ? String(err.details?.sqlite_message ?? '') : sqliteMessage(err);
  if (!/database is locked|database table is locked/i.test(text)) return err;
  return shedError('FILE_LOCKED', `${file.shown} is locked by another program (for example an open sqlite3 session in the middle of a write).`, {
    details: { path: file.rel, sqlite_message: text },
    hint: 'Try again in a moment; a long import into the same database may still be running.',
  });
}
