/**
 * shed_sqlite's engines, main-thread side: which engine serves (`activeEngine`), and the four
 * operations handlers call (read, export, write, import), each posted as a job with the statement
 * timeout:
 * - the file engine (node:sqlite, Node 24 and 26): jobs in child processes open the database in
 *   place (node/jobs.ts); cost follows the statement, not the database;
 * - sql.js (Node 20): jobs on worker threads load the file's bytes and write back a whole new
 *   image (jobs.ts, dbfile.ts).
 * Both give the same results, errors and limits (one test suite runs against both).
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../../base/errors.js';
import { removeEmptyFolders } from '../../base/fs/dircursor.js';
import { storageKind } from '../../base/fs/kind.js';
import { scopeTotal } from '../quota/quota.js';
import type { Zone } from '../../base/zones/zones.js';
import { runJob, type JobOptions } from '../../base/work/pool.js';
import type { ImportReport } from './csv/import.js';
import { withDbWrite, type DbTarget, type ImageOutcome, type WriteLimits as ImageWriteLimits, type WriteOutcome } from './dbfile.js';
import type { ExportInput, ImportInput, StatementInput } from './jobs.js';
import { runFileJob, childSource } from './node/children.js';
import type { FileJob, FileWriteOutcome, JournalMode, WriteSetup } from './node/jobs.js';
import { nodeSqlite } from './node/sqlite.js';
import { SQLITE_HEAP_MB, type RunResult } from './query.js';
import { adoptFile } from '../../base/fs/owner.js';

const MIB = 1024 * 1024;

export type EngineName = 'node:sqlite' | 'sql.js';

/**
 * The engine of this process: node:sqlite where the runtime has it (with the authorizer), else
 * sql.js. FILESHED_SQLITE_ENGINE=sql.js forces sql.js (the tests run their suite on both engines).
 */
export function activeEngine(): EngineName {
  if (process.env.FILESHED_SQLITE_ENGINE === 'sql.js') return 'sql.js';
  return nodeSqlite() !== undefined && childSource() !== undefined ? 'node:sqlite' : 'sql.js';
}

/** What shed_parameters shows about the engine. */
export function engineReport(): { engine: EngineName; mode: string } {
  const engine = activeEngine();
  return { engine, mode: engine === 'node:sqlite' ? 'file-backed: statements run on the database file in place' : 'in memory: each call loads the database and writes a whole new file' };
}

export interface SqlRunOptions {
  timeoutSeconds: number;
  /** Import progress: bytes done, total, rows so far. */
  onProgress?: (done: number, total: number, rows: number) => void;
}

export interface WriteLimits extends ImageWriteLimits {
  /** The sqlite_journal_mode valve (the file engine's). */
  journalMode: JournalMode;
}

/** The statement's kind, as the tokenizer saw it. */
export interface WriteKind {
  /** INSERT, UPDATE, DELETE or REPLACE: no row changed means nothing written. */
  dml: boolean;
  /** A plain VACUUM. */
  vacuum: boolean;
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

function options(o: SqlRunOptions, query: string | undefined): JobOptions {
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

function fileRef(t: DbTarget) {
  return { abs: t.abs, rel: t.rel, shown: t.shown };
}

/** A file job's common input: the file, how long to wait for another writer's lock, the value size cap. */
function fileJob(t: DbTarget, o: SqlRunOptions): FileJob {
  // The busy wait ends before the statement's own deadline, so a lock held elsewhere is reported as such.
  return { file: fileRef(t), busyMs: Math.floor(o.timeoutSeconds * 750), maxValueBytes: SQLITE_HEAP_MB * MIB };
}

export function readStatement(t: DbTarget, stmt: StatementInput, o: SqlRunOptions): Promise<RunResult> {
  if (activeEngine() === 'sql.js') return runJob('sql.read', { file: fileRef(t), stmt }, options(o, stmt.query));
  return runFileJob('db.read', { ...fileJob(t, o), stmt }, options(o, stmt.query));
}

export function exportRows(t: DbTarget, exp: ExportInput, o: SqlRunOptions): Promise<{ rows: number; bytes: number; columns: string[] }> {
  if (activeEngine() === 'sql.js') return runJob('sql.export', { file: fileRef(t), exp }, options(o, exp.query));
  return runFileJob('db.export', { ...fileJob(t, o), exp }, options(o, exp.query));
}

export function writeStatement(t: DbTarget, stmt: StatementInput, kind: WriteKind, limits: WriteLimits, o: SqlRunOptions): Promise<WriteOutcome<RunResult>> {
  if (activeEngine() === 'sql.js') {
    return withDbWrite(t, limits, (image) => runJob<ImageOutcome<RunResult>>('sql.write', { image, stmt, dml: kind.dml }, options(o, stmt.query)));
  }
  return adoptingDbFiles(t, fileWrite(t, limits, o, (setup) => runFileJob('db.write', { ...setup, stmt, ...kind }, options(o, stmt.query))));
}

export function importCsvFile(t: DbTarget, req: Omit<ImportInput, 'maxDbBytes' | 'quotaBound'>, limits: WriteLimits, o: SqlRunOptions): Promise<WriteOutcome<ImportReport>> {
  if (activeEngine() === 'sql.js') {
    return withDbWrite(t, limits, (image) =>
      runJob<ImageOutcome<ImportReport>>('sql.import', { image, req: { ...req, maxDbBytes: image.roomBytes, quotaBound: image.quotaBound } }, options(o, undefined)),
    );
  }
  return adoptingDbFiles(t, fileWrite(t, limits, o, (setup) => runFileJob('db.import', { ...setup, req }, { ...options(o, undefined), background: true })));
}

/** The file engine's child creates the database (and its -wal, -shm, -journal) itself: under identity separation they become the user's, as any file the server writes. */
async function adoptingDbFiles<T>(t: DbTarget, done: Promise<T>): Promise<T> {
  try {
    return await done;
  } finally {
    for (const suffix of ['', '-wal', '-shm', '-journal']) {
      try {
        adoptFile(`${t.abs}${suffix}`);
      } catch {
        // gone meanwhile, or not ours to give
      }
    }
  }
}

/**
 * The file engine's write: the quota room measured now (the caller holds the call lock of the
 * scope), the job in a child. When it fails, a database this call created is removed, and one the
 * child may have been killed in the middle of writing is recovered (rolled back) before answering.
 */
async function fileWrite<T>(t: DbTarget, limits: WriteLimits, o: SqlRunOptions, run: (setup: WriteSetup) => Promise<FileWriteOutcome<T>>): Promise<WriteOutcome<T>> {
  const existing = fs.lstatSync(t.abs, { throwIfNoEntry: false });
  if (existing !== undefined && !existing.isFile()) {
    throw shedError('NOT_A_FILE', `${t.shown} is not a regular file.`, { details: { parameter: 'path', path: t.rel } });
  }
  const created = existing === undefined;
  // A new database in a folder that does not exist yet: the folder is made (as a write of any file
  // makes it), and removed again if the statement fails.
  const parent = path.dirname(t.abs);
  const madeFolder = created && !fs.existsSync(parent);
  if (madeFolder) fs.mkdirSync(parent, { recursive: true });
  const room = Math.max(0, t.zone.scope.limitBytes - (await scopeTotal(t.zone.scope)));
  const setup: WriteSetup = { ...fileJob(t, o), create: created, journalMode: journalModeFor(t.zone, limits.journalMode), maxFileBytes: limits.maxFileSizeMb * MIB, roomBytes: room };
  try {
    const out = await run(setup);
    return { ...out, created };
  } catch (err) {
    if (created) removeDatabase(t.abs);
    else if (killedMidWrite(err)) await recover(setup);
    if (madeFolder) removeEmptyFolders(parent, t.zone.root);
    throw err;
  }
}

/**
 * Where WAL cannot hold, databases keep a rollback journal instead:
 * - Documents is a git repository and each write is committed as the database file: the file must
 *   hold every committed write when the commit reads it (in WAL mode the last writes could still sit
 *   in the -wal file while another connection is open);
 * - on a network or FUSE filesystem (NFS, CephFS, GlusterFS: the storage of several instances) WAL's
 *   shared-memory index (the -shm file, mapped by every connection) is not shared between hosts,
 *   so two hosts writing one database would corrupt it (SQLite's documentation: WAL does not work
 *   over a network filesystem). The rollback journal uses the file locks such filesystems forward.
 */
function journalModeFor(zone: Zone, valve: JournalMode): JournalMode {
  if (valve !== 'wal') return valve;
  return zone.versioned || storageKind(zone.root).shared ? 'delete' : 'wal';
}

function killedMidWrite(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 'QUERY_TIMEOUT' || code === 'RESOURCE_LIMIT' || code === 'INTERNAL_ERROR';
}

async function recover(setup: FileJob): Promise<void> {
  const seconds = 10;
  await runFileJob('db.recover', { ...setup, busyMs: 2000 }, { timeoutMs: seconds * 1000, onTimeout: timeoutError(seconds, 'recovery') }).catch(() => undefined);
}

function removeDatabase(abs: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) fs.rmSync(abs + suffix, { force: true });
}
