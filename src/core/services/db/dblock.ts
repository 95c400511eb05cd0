/**
 * Serialises writers of one database file, across calls of this process AND across processes (two
 * servers, or a server and the CLI, sharing a storage folder). Every write is read-modify-replace
 * of the whole file, so two unserialised writers would silently lose one update.
 *
 * The lock is a lease (locks/lease.ts): a lock file per database (named by a hash of the
 * database's real path) under the zone's internal folder, or a lease of the coordination service
 * when the server runs with one. Within a process a queue per lock avoids polling.
 */
import crypto from 'node:crypto';
import path from 'node:path';
import { shedError } from '../../base/errors.js';
import { withLease } from '../../base/locks/lease.js';

/** How long a writer waits for another writer of the same database. */
const WAIT_MS = 120_000;

/** Lock file of a database: `{internal}/dblocks/{hash}.lock`, never visible inside the zone. */
export function dbLockPath(internalBase: string | undefined, dbAbs: string): string {
  const hash = crypto.createHash('sha256').update(dbAbs).digest('hex').slice(0, 32);
  if (internalBase === undefined) return path.join(path.dirname(dbAbs), `.${path.basename(dbAbs)}.shedlock`);
  return path.join(internalBase, 'dblocks', `${hash}.lock`);
}

/**
 * `what` names the locked thing in the busy error ("The database Storage/x.db" by default).
 */
export async function withDbLock<T>(lockPath: string, shown: string, fn: () => Promise<T>, waitMs = WAIT_MS, what = `The database ${shown}`): Promise<T> {
  const busy = () =>
    shedError('FILE_LOCKED', `${what} is being written by another call and stayed busy for ${Math.round(waitMs / 1000)} s.`, {
      details: { path: shown },
      hint: 'Try again in a moment; a large CSV import into the same database may still be running.',
    });
  return withLease(lockPath, { waitMs, busy }, () => fn());
}
