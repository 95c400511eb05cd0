/**
 * Where a quota scope keeps its internal state (the call lock, the change stamp): inside the
 * `locks/` folder of the storage layout (SPEC section 4) — `users/{id}/Storage/locks/` for a user,
 * `groups/{id}/locks/` for a group — so nothing new appears beside the zones. The names used there
 * never end in `.lock`, so the lock scans (maintenance, folder deletes) never take them for file locks.
 */
import path from 'node:path';

export function scopeStateDir(home: string): string {
  return path.basename(path.dirname(home)) === 'groups' ? path.join(home, 'locks') : path.join(home, 'Storage', 'locks');
}

export const CALL_LOCK_NAME = '.shed-call.lck';
export const STAMP_NAME = '.shed-stamp';

/** Names of the scope state files, skipped by the lock scans. */
export const SCOPE_STATE_NAMES: ReadonlySet<string> = new Set([CALL_LOCK_NAME, STAMP_NAME]);
