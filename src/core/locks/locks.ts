/**
 * File locks (SPEC section 10): one lock file per locked path under `{workBase}/locks/`, created
 * with O_EXCL so exactly one caller wins, owned by the (user, conversation) pair. A lock older than
 * `lock_max_age_hours` counts as expired and is taken over. The locked-edit functions build on this.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../errors.js';
import type { Zone } from '../zones/zones.js';

export interface LockOwner {
  user_id: string;
  conv_id: string;
}

export interface LockInfo extends LockOwner {
  locked_at: string;
  path: string;
}

export function lockFile(zone: Zone, rel: string): string | undefined {
  return zone.workBase === undefined ? undefined : path.join(zone.workBase, 'locks', `${rel}.lock`);
}

/** The current lock, or undefined when there is none or it is unreadable (a corrupt lock never blocks). */
export function readLock(file: string): LockInfo | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<LockInfo>;
    if (typeof parsed.user_id !== 'string' || typeof parsed.conv_id !== 'string' || typeof parsed.locked_at !== 'string') return undefined;
    return parsed as LockInfo;
  } catch {
    return undefined;
  }
}

export function isExpired(lock: LockInfo, maxAgeHours: number, now = Date.now()): boolean {
  const at = Date.parse(lock.locked_at);
  return Number.isNaN(at) || now - at > maxAgeHours * 3600_000;
}

function sameOwner(a: LockOwner, b: LockOwner): boolean {
  return a.user_id === b.user_id && a.conv_id === b.conv_id;
}

/**
 * Runs `fn` while holding the lock of `rel`. Refuses if a live lock exists, even one of the same
 * conversation: that is an open locked-edit session, which a direct patch must not disturb.
 */
export async function withFileLock<T>(zone: Zone, rel: string, owner: LockOwner, maxAgeHours: number, fn: () => Promise<T> | T): Promise<T> {
  const file = lockFile(zone, rel);
  if (file === undefined) return fn();
  const existing = readLock(file);
  if (existing !== undefined && !isExpired(existing, maxAgeHours)) throw lockedError(rel, existing, owner);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (existing !== undefined || fs.existsSync(file)) fs.rmSync(file, { force: true }); // expired or corrupt
  const mine: LockInfo = { ...owner, locked_at: new Date().toISOString(), path: rel };
  try {
    fs.writeFileSync(file, JSON.stringify(mine, null, 2), { flag: 'wx' });
  } catch {
    const winner = readLock(file);
    throw lockedError(rel, winner ?? mine, owner);
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** Throws FILE_LOCKED when someone else (another conversation) holds a live lock on `rel`. */
export function ensureNotLockedByOther(zone: Zone, rel: string, owner: LockOwner, maxAgeHours: number): void {
  const file = lockFile(zone, rel);
  if (file === undefined) return;
  const lock = readLock(file);
  if (lock !== undefined && !isExpired(lock, maxAgeHours) && !sameOwner(lock, owner)) throw lockedError(rel, lock, owner);
}

function lockedError(rel: string, lock: LockInfo, owner: LockOwner): Error {
  const mineOpen = sameOwner(lock, owner);
  return shedError(
    'FILE_LOCKED',
    mineOpen
      ? `'${rel}' is open in a locked edit in this conversation; a direct write would discard it.`
      : `'${rel}' is locked by another conversation since ${lock.locked_at}.`,
    {
      details: { path: rel, locked_at: lock.locked_at },
      hint: mineOpen
        ? 'Finish the edit first: shed_lockedit_save(...) or shed_lockedit_cancel(...), or pass safe=false to write anyway.'
        : 'Wait for the other conversation to save, or use shed_force_unlock(zone=..., path=...) if that edit was abandoned.',
    },
  );
}
