/**
 * Where a quota scope keeps its internal state (the call lock, the change stamp, the usage record): inside the
 * `locks/` folder of the storage layout (SPEC section 4) — `users/{id}/Storage/locks/` for a user,
 * `groups/{id}/locks/` for a group — so nothing new appears beside the zones. The names used there
 * never end in `.lock`, so the lock scans (maintenance, folder deletes) never take them for file locks.
 */
import path from 'node:path';

export function scopeStateDir(home: string): string {
  return path.basename(path.dirname(home)) === 'groups' ? path.join(home, 'locks') : path.join(home, 'Storage', 'locks');
}

/** The home of a quota scope ("user:/base/users/alice" → /base/users/alice). */
export function scopeHome(scope: { key: string }): string {
  return scope.key.slice(scope.key.indexOf(':') + 1);
}

/**
 * Where a command's call keeps what it puts aside for the command's duration (blocked entries, saved
 * names of group files): beside `locks/` (never inside it: the lock scans walk all of `locks/`), on
 * the same filesystem as the zones so a rename moves an entry there atomically, and outside every
 * zone's `data/`, so no command, path parameter or link can reach it.
 */
export function scopeStashDir(home: string): string {
  return path.join(path.dirname(scopeStateDir(home)), 'stash');
}

export const CALL_LOCK_NAME = '.shed-call.lck';

/** The call lock of a scope's home (call-lock.ts). */
export function callLockPath(home: string): string {
  return path.join(scopeStateDir(home), CALL_LOCK_NAME);
}
export const STAMP_NAME = '.shed-stamp';
export const USAGE_RECORD_NAME = '.shed-usage.json';
/** Says the space has this version's layout (its repository at git/ beside data/, vcs/migrate.ts). */
export const LAYOUT_MARKER_NAME = '.shed-layout';

/** Names of the scope state files, skipped by the lock scans. */
export const SCOPE_STATE_NAMES: ReadonlySet<string> = new Set([CALL_LOCK_NAME, STAMP_NAME, USAGE_RECORD_NAME, LAYOUT_MARKER_NAME]);
