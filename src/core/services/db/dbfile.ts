/**
 * Database files for the sql.js engine (Node 20; the file engine, node/, opens them in place):
 * reading one into memory, and the write cycle
 * (lock → load fresh bytes → change in memory → export → size and quota checks → atomic replace).
 *
 * Journal modes: sql.js works on an in-memory copy and the file is only ever replaced whole
 * (temp file + fsync + rename), so no -journal or -wal file is ever created beside a database and
 * the written file is always in rollback-journal format, readable by any sqlite3 (a database the
 * file engine left in WAL mode is read whole from its file and written back in rollback mode). The
 * sqlite_journal_mode valve therefore changes nothing here.
 * A database left with a -wal or hot -journal by ANOTHER program (e.g. the sqlite3 command) is
 * refused for writes: replacing the main file under such a journal would corrupt it.
 */
import fs from 'node:fs';
import { shedError } from '../../base/errors.js';
import { openAtomic } from '../../base/fs/atomic.js';
import { readBytes } from '../../base/fs/read.js';
import { ensureFileSize, ensureQuota, scopeTotal } from '../quota/quota.js';
import { errnoCode } from '../../base/paths/resolve.js';
import type { Zone } from '../../base/zones/zones.js';
import { dbLockPath, withDbLock } from './dblock.js';
import { looksLikeSqlite, notSqlite, type FileRef } from './dbheader.js';

const MIB = 1024 * 1024;

export interface DbTarget extends FileRef {
  zone: Zone;
}

/** The file's bytes after checking it is a SQLite database (an empty file is an empty database). */
export function readDbBytes(t: FileRef): Buffer {
  const bytes = readBytes(t.abs);
  if (!looksLikeSqlite(bytes)) throw notSqlite(t);
  return bytes;
}

/** Names the journal another program left beside the database, if any. */
export function foreignJournal(abs: string): string | undefined {
  for (const suffix of ['-wal', '-journal']) {
    try {
      if (fs.statSync(abs + suffix).size > 0) return suffix;
    } catch {
      // none
    }
  }
  return undefined;
}

export interface WriteLimits {
  maxFileSizeMb: number;
  /** Expected growth in bytes (a CSV import's size), to pre-size the in-memory database. */
  growthHint?: number;
}

export interface WriteOutcome<T> {
  result: T;
  /** True when the file was replaced. */
  written: boolean;
  sizeBefore: number;
  sizeAfter: number;
  created: boolean;
}

/** What the work on a database image returns: its result, and the new image when something changed. */
export interface ImageOutcome<T> {
  result: T;
  /** Size of the new database written to the staged file; undefined when nothing changed (the file is not rewritten). */
  size: number | undefined;
}

/**
 * What a database write job gets: the current file to read (none when it is created), the temp file
 * to write the new image to (an open descriptor: threads share the process's descriptors), and
 * limits. The job reads, writes and fsyncs off the main thread; the main thread only checks the
 * size and the quota and renames (a 50 MB image written on the main thread stalled every user).
 */
export interface ImageJob {
  source: Pick<DbTarget, 'abs' | 'rel' | 'shown'> | undefined;
  outFd: number;
  padTo: number;
  /** The most the database may grow to: max_file_size_mb, or its size plus the quota room. */
  roomBytes: number;
  /** The quota (not max_file_size_mb) sets roomBytes. */
  quotaBound: boolean;
}

/**
 * The write cycle under the database's lock. `work` gets the current bytes (undefined for a new
 * database), the size to pre-allocate, and the room the database may grow to; it runs the change
 * (on a worker thread, see core/base/work) and returns the new image. Size, quota and the atomic
 * replace happen here, so a stopped or failed `work` leaves the file untouched.
 */
export async function withDbWrite<T>(
  t: DbTarget,
  limits: WriteLimits,
  work: (image: ImageJob) => Promise<ImageOutcome<T>>,
): Promise<WriteOutcome<T>> {
  return withDbLock(dbLockPath(t.zone.workBase, t.abs), t.shown, async () => {
    let sizeBefore = 0;
    let created = true;
    try {
      const st = fs.lstatSync(t.abs);
      if (!st.isFile()) {
        throw shedError('NOT_A_FILE', `${t.shown} is not a regular file.`, { details: { parameter: 'path', path: t.rel } });
      }
      sizeBefore = st.size;
      created = false;
    } catch (err) {
      if (errnoCode(err) !== 'ENOENT') throw err;
    }
    const journal = created ? undefined : foreignJournal(t.abs);
    if (journal !== undefined) {
      throw shedError('FILE_LOCKED', `${t.shown} has an unfinished ${journal} file from another program (e.g. an open sqlite3 session); writing now could corrupt it.`, {
        details: { path: t.rel, journal: `${t.rel}${journal}` },
        hint: `Close the other program, or checkpoint it: shed_exec(zone="${t.zone.name}", cmd="sqlite3", args=["${t.rel}", "PRAGMA wal_checkpoint(TRUNCATE);"]).`,
      });
    }
    const maxBytes = limits.maxFileSizeMb * MIB;
    const room = Math.max(0, t.zone.scope.limitBytes - (await scopeTotal(t.zone.scope))) + sizeBefore;
    const limit = Math.min(maxBytes, room);
    const quotaBound = room < maxBytes;
    const padTo = limits.growthHint ? Math.min(limit, sizeBefore + limits.growthHint) : 0;
    const staged = openAtomic(t.abs);
    try {
      const source = created ? undefined : { abs: t.abs, rel: t.rel, shown: t.shown };
      const { result, size } = await work({ source, outFd: staged.fd, padTo, roomBytes: limit, quotaBound });
      if (size === undefined) {
        staged.abort();
        return { result, written: false, sizeBefore, sizeAfter: sizeBefore, created: false };
      }
      if (size > sizeBefore) ensureFileSize(size, limits.maxFileSizeMb, t.shown); // a write that does not grow it always fits
      await ensureQuota(t.zone.scope, size - sizeBefore);
      await staged.commit(); // the job fsynced the data: this fsync is cheap, then rename + folder fsync
      return { result, written: true, sizeBefore, sizeAfter: size, created };
    } catch (err) {
      staged.abort();
      throw err;
    }
  });
}
