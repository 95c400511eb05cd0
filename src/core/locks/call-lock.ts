/**
 * The call lock: one modifying call at a time per quota scope (a user's home, a group space),
 * across calls of this process AND across processes sharing the storage base (two servers, a
 * server and the CLI). Held from before the handler's first check to after its commit, it makes
 * three things hold across processes:
 * - one commit per call: a commit records the current content of the paths a call touched, so
 *   another process's write landing between this call's write and its commit would be swept into
 *   this commit (seen as 445 commits for 454 appends);
 * - no lost update and no FILE_LOCKED between two processes writing one file: they take turns;
 * - exact quotas: the check and the write it allows cannot interleave with another process's write.
 *
 * It reuses the database lock (in-process queue + O_EXCL lock file + heartbeat + stale detection
 * by dead pid or stopped heartbeat), with a lock file in the scope's internal state folder (see
 * scopeStateDir), outside every zone. Several scopes are taken in sorted order, so two calls never
 * deadlock.
 */
import path from 'node:path';
import { withDbLock } from '../db/dblock.js';
import { CALL_LOCK_NAME, scopeStateDir } from './state-dir.js';

/** A call waiting longer than this for another one of the same scope gives FILE_LOCKED. */
const CALL_WAIT_MS = 120_000;


export async function withCallLock<T>(homes: readonly string[], fn: () => Promise<T>): Promise<T> {
  const ordered = [...new Set(homes.map((h) => path.resolve(h)))].sort();
  const step = (i: number): Promise<T> => {
    if (i >= ordered.length) return fn();
    return withDbLock(path.join(scopeStateDir(ordered[i]!), CALL_LOCK_NAME), ordered[i]!, () => step(i + 1), CALL_WAIT_MS, 'This space');
  };
  return step(0);
}
