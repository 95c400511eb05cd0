/**
 * The call lock: one modifying call at a time per quota scope (a user's home, a group space),
 * across calls of this process AND across processes sharing the storage base (several servers on
 * one host or on several hosts, a server and the CLI). Held from before the handler's first check
 * to after its commit, it makes three things hold across processes:
 * - one commit per call: a commit records the current content of the paths a call touched, so
 *   another process's write landing between this call's write and its commit would be swept into
 *   this commit (seen as 445 commits for 454 appends);
 * - no lost update and no FILE_LOCKED between two processes writing one file: they take turns;
 * - exact quotas: the check and the write it allows cannot interleave with another process's write.
 *
 * It is a lease (lease.ts: a lock file in the scope's internal state folder, see scopeStateDir,
 * or the coordination service's lease). Several scopes are taken in sorted order, so two calls
 * never deadlock. When the previous holder died holding it (kill -9 mid-call on any host),
 * `onTakeover` runs first, under the lock: the dispatcher recovers the space there (commits what
 * the killed call wrote, removes its temp files), so the next write gets a commit of its own.
 */
import path from 'node:path';
import { shedError } from '../errors.js';
import { abandonedLockFile, withLease } from './lease.js';
import { callLockPath } from './state-dir.js';

/** A call waiting longer than this for another one of the same scope gives FILE_LOCKED. */
const CALL_WAIT_MS = 120_000;

/** Recovers a space whose previous call-lock holder died. */
export type TakeoverHandler = (home: string) => Promise<unknown>;

export async function withCallLock<T>(homes: readonly string[], fn: () => Promise<T>, onTakeover?: TakeoverHandler): Promise<T> {
  const ordered = [...new Set(homes.map((h) => path.resolve(h)))].sort();
  const step = (i: number): Promise<T> => {
    if (i >= ordered.length) return fn();
    const home = ordered[i]!;
    const busy = () =>
      shedError('FILE_LOCKED', `This space is being written by another call and stayed busy for ${Math.round(CALL_WAIT_MS / 1000)} s.`, {
        details: { path: home },
        hint: 'Try again in a moment; a large CSV import into the same database may still be running.',
      });
    return withLease(callLockPath(home), { waitMs: CALL_WAIT_MS, busy }, async (lease) => {
      if (lease.tookOver && onTakeover !== undefined) {
        try {
          await onTakeover(home);
        } catch {
          // recovery is best effort here; the next server start (or shed_maintenance) repeats it
        }
      }
      return step(i + 1);
    });
  };
  return step(0);
}

/** The call lock of `home` was left by a holder that died (a lock file; a coordination service's lease is not seen here). */
export function callLockAbandoned(home: string): boolean {
  return abandonedLockFile(callLockPath(path.resolve(home)));
}
