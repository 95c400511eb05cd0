/**
 * File locks (SPEC section 10): one lock file per locked path under `{workBase}/locks/{rel}.lock`,
 * owned by the (user, conversation) pair. The one lock implementation: locked-edit sessions
 * (kind "edit", they outlive a call) and the short locks of safe-mode writes (kind "write").
 *
 * Creation is atomic and never shows a half-written lock: the JSON is written to a private temp
 * file which is then hard-linked to the lock name (link(2) fails with EEXIST like O_EXCL, so
 * exactly one caller wins). A lock older than `lock_max_age_hours`, a corrupt one, or a write lock
 * whose process died counts as stale and is taken over when someone else asks. A takeover is
 * guarded by a second exclusive file (`.lock.takeover`): its holder checks that the lock is still
 * the very file it judged stale (same inode) and renames its own lock over it, so the lock name
 * is never empty during a takeover, exactly one taker wins, and the winner knows it took over.
 * The guard names its taker: one killed inside a takeover leaves a guard that is cleared at once
 * on its host (its process is gone), after GUARD_STALE_MS from another host.
 * Residual window (documented): the expired holder releasing in the microseconds between that
 * check and the rename, while a third caller creates a fresh lock.
 */
import { makeFolders, removeEmptyFolders } from '../fs/dircursor.js';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ShedError, shedError } from '../errors.js';
import { fsyncOffLoop, syncDirOffLoop, writeAllOffLoop } from '../fs/atomic.js';
import { readAllFd } from '../fs/read.js';
import { leaseHeld } from './lease.js';
import { callLockPath, scopeHome } from './state-dir.js';
import { errnoCode } from '../paths/resolve.js';
import type { Zone } from '../zones/zones.js';

export interface LockOwner {
  user_id: string;
  conv_id: string;
}

export type LockKind = 'edit' | 'write';

export interface LockInfo extends LockOwner {
  locked_at: string;
  path: string;
  /** "edit": a locked-edit session; "write": held during one write call. Locks without it count as edit sessions. */
  kind?: LockKind;
  /** One acquisition: a release or refresh never touches a lock someone else has since taken. */
  token?: string;
  /** Write locks only: the holding process, so the lock of a crashed process is stale at once. */
  pid?: number;
  host?: string;
  /** Write locks only: which process had that pid (a restarted container's server often gets its predecessor's). */
  proc?: string;
}

export type LockState =
  | { state: 'none' }
  /** Something that is not a lock sits at the lock's name (the locks folder of a folder named "x.lock"). */
  | { state: 'blocked' }
  | { state: 'corrupt'; ino: number }
  | { state: 'held'; lock: LockInfo; ino: number };

export type StaleReason = 'expired' | 'corrupt' | 'abandoned';

export interface Acquired {
  file: string;
  lock: LockInfo;
  /** The same owner already held this edit lock (re-entry). */
  reentered: boolean;
  /** Set when a stale lock of someone else (or a corrupt one) was replaced. */
  tookOver?: { previous: LockInfo | undefined; why: StaleReason };
}

const MAX_LOCK_BYTES = 64 * 1024;
const HOST = os.hostname();
/** This process among all that had its pid on this host: a restarted container's server often reuses the pid. */
const PROCESS_TOKEN = crypto.randomBytes(8).toString('hex');

export function lockFile(zone: Pick<Zone, 'workBase'>, rel: string): string | undefined {
  return zone.workBase === undefined ? undefined : path.join(zone.workBase, 'locks', `${rel}.lock`);
}

/** What is at a lock's name, read without following links. */
export function inspectLock(file: string): LockState {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { state: 'none' };
    if (code === 'ELOOP') return { state: 'corrupt', ino: fs.lstatSync(file).ino }; // a planted link is not a lock
    throw err;
  }
  try {
    const st = fs.fstatSync(fd);
    if (st.isDirectory()) return { state: 'blocked' };
    if (!st.isFile() || st.size > MAX_LOCK_BYTES) return { state: 'corrupt', ino: st.ino };
    const lock = parseLock(readAllFd(fd, st.size).toString('utf8'));
    return lock === undefined ? { state: 'corrupt', ino: st.ino } : { state: 'held', lock, ino: st.ino };
  } finally {
    fs.closeSync(fd);
  }
}

function parseLock(text: string): LockInfo | undefined {
  try {
    const parsed = JSON.parse(text) as Partial<LockInfo> | null;
    if (parsed === null || typeof parsed !== 'object') return undefined;
    if (typeof parsed.user_id !== 'string' || typeof parsed.conv_id !== 'string' || typeof parsed.locked_at !== 'string') return undefined;
    if (parsed.kind !== undefined && parsed.kind !== 'edit' && parsed.kind !== 'write') return undefined;
    return parsed as LockInfo;
  } catch {
    return undefined;
  }
}

/** The current lock, or undefined when there is none or it is unreadable (a corrupt lock never blocks). */
export function readLock(file: string): LockInfo | undefined {
  try {
    const st = inspectLock(file);
    return st.state === 'held' ? st.lock : undefined;
  } catch {
    return undefined;
  }
}

export function isExpired(lock: LockInfo, maxAgeHours: number, now = Date.now()): boolean {
  const at = Date.parse(lock.locked_at);
  return Number.isNaN(at) || now - at > maxAgeHours * 3600_000;
}

/** Why a held lock no longer protects anything, or undefined when it is live. */
export function staleReason(lock: LockInfo, maxAgeHours: number, now = Date.now()): StaleReason | undefined {
  if (isExpired(lock, maxAgeHours, now)) return 'expired';
  if (lock.kind === 'write' && holderGone(lock)) return 'abandoned';
  return undefined;
}

/**
 * True when the process that wrote `holder` (a write lock, a takeover guard) is known to be gone:
 * it ran on this host and its pid is free, or the pid is ours but the writer was an earlier process.
 */
function holderGone(holder: { host?: unknown; pid?: unknown; proc?: unknown }): boolean {
  if (holder.host !== HOST || typeof holder.pid !== 'number') return false;
  if (holder.pid === process.pid) return holder.proc !== PROCESS_TOKEN;
  return !processAlive(holder.pid);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoCode(err) === 'EPERM'; // exists, owned by someone else
  }
}

export function sameOwner(a: LockOwner, b: LockOwner): boolean {
  return a.user_id === b.user_id && a.conv_id === b.conv_id;
}

export function isEditLock(lock: LockInfo): boolean {
  return (lock.kind ?? 'edit') === 'edit';
}

/**
 * Takes the lock of `rel`. An edit lock already held by the same owner is re-entered (and its age
 * refreshed); any other live lock gives FILE_LOCKED; a stale or corrupt one is taken over.
 */
export async function acquireLock(zone: Pick<Zone, 'workBase'>, rel: string, owner: LockOwner, maxAgeHours: number, kind: LockKind, writeLocksAbandoned = false): Promise<Acquired> {
  const file = lockFile(zone, rel);
  if (file === undefined) throw lockError(rel, 'this zone has no locks');
  const dir = path.dirname(file);
  const mine: LockInfo = {
    ...owner,
    locked_at: new Date().toISOString(),
    path: rel,
    kind,
    token: crypto.randomBytes(12).toString('hex'),
    ...(kind === 'write' ? { pid: process.pid, host: HOST, proc: PROCESS_TOKEN } : {}),
  };
  const tmp = path.join(dir, `.${path.basename(file).slice(0, 180)}.${mine.token}.tmp`);
  // A release elsewhere may prune the empty folder between mkdir and the write: retry then.
  for (let attempt = 0; ; attempt++) {
    try {
      makeFolders(locksRoot(zone), path.relative(locksRoot(zone), dir));
      await writePrivate(tmp, mine);
      break;
    } catch (err) {
      if (errnoCode(err) === 'ENOENT' && attempt < 5) continue;
      throw lockError(rel, `its lock file cannot be written (${errnoCode(err) ?? 'error'})`);
    }
  }
  try {
    let tookOver: Acquired['tookOver'];
    for (let attempt = 0; attempt < 200; attempt++) {
      try {
        fs.linkSync(tmp, file);
        await syncDirOffLoop(dir);
        return { file, lock: mine, reentered: false };
      } catch (err) {
        if (errnoCode(err) !== 'EEXIST') throw lockError(rel, `the lock file cannot be created (${errnoCode(err) ?? 'error'})`);
      }
      const state = inspectLock(file);
      if (state.state === 'none') continue; // released meanwhile: try again
      if (state.state === 'blocked') throw lockError(rel, `the name '${rel}.lock' is taken by the locks of a folder with that name`);
      if (state.state === 'held') {
        const { lock } = state;
        if (kind === 'edit' && isEditLock(lock) && sameOwner(lock, owner)) {
          const refreshed = (await refreshLock(file, lock)) ?? lock;
          return { file, lock: refreshed, reentered: true };
        }
        // Under the space's call lock, another host's write lock is a leftover of a call that died
        // there (its pid cannot be checked from here); on this host, its process decides.
        const why = writeLocksAbandoned && !isEditLock(lock) && lock.host !== HOST ? 'abandoned' : staleReason(lock, maxAgeHours);
        if (why === undefined) throw lockedError(rel, lock, owner);
        tookOver = { previous: lock, why };
      } else {
        tookOver = { previous: undefined, why: 'corrupt' };
      }
      if (replaceStale(file, state.ino, tmp)) {
        await syncDirOffLoop(dir);
        return { file, lock: mine, reentered: false, tookOver };
      }
      await new Promise((resolve) => setTimeout(resolve, 2)); // another caller is taking it over: look again in a moment
    }
    throw lockError(rel, 'it changed hands too often while acquiring; try again');
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}

/** Writes a new private file (never through a link) and syncs it, on the thread pool. */
async function writePrivate(file: string, lock: LockInfo): Promise<void> {
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o644);
  try {
    await writeAllOffLoop(fd, Buffer.from(JSON.stringify(lock, null, 2)));
    await fsyncOffLoop(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Puts `mine` in place of the stale lock (inode `ino`) under the takeover guard. False when the
 * guard is held by another taker or the lock is no longer the one judged stale.
 */
function replaceStale(file: string, ino: number, mine: string): boolean {
  const guard = `${file}.takeover`;
  const fd = takeGuard(guard);
  if (fd === undefined) return false;
  try {
    if (fs.lstatSync(file, { throwIfNoEntry: false })?.ino !== ino) return false;
    fs.renameSync(mine, file);
    return true;
  } finally {
    fs.closeSync(fd);
    fs.rmSync(guard, { force: true });
  }
}

const GUARD_STALE_MS = 10_000;

/**
 * Creates the takeover guard, naming its taker; undefined while another live taker holds it. A
 * guard its taker left behind (killed inside a takeover) is cleared: at once when that taker ran
 * on this host and is gone, after GUARD_STALE_MS otherwise.
 */
function takeGuard(guard: string): number | undefined {
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number;
    try {
      fd = fs.openSync(guard, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o644);
    } catch (err) {
      if (errnoCode(err) !== 'EEXIST' || !clearDeadGuard(guard)) return undefined;
      continue;
    }
    try {
      fs.writeSync(fd, JSON.stringify({ host: HOST, pid: process.pid, proc: PROCESS_TOKEN }));
    } catch {
      // an unnamed guard guards as well; left behind, it ages out like another host's
    }
    return fd;
  }
  return undefined;
}

function parseHolder(text: string): { host?: unknown; pid?: unknown; proc?: unknown } {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null ? parsed : {};
  } catch {
    return {};
  }
}

/** Removes a guard whose taker is gone (true: try again); a live one stays (false). */
function clearDeadGuard(guard: string): boolean {
  try {
    const fd = fs.openSync(guard, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
    let st: fs.Stats;
    let text = '';
    try {
      st = fs.fstatSync(fd);
      if (st.isFile() && st.size <= 1024) text = readAllFd(fd, st.size).toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
    // Empty or unreadable: its taker died before naming itself (or is about to): the age decides.
    const holder = parseHolder(text);
    if (!holderGone(holder) && Date.now() - st.mtimeMs <= GUARD_STALE_MS) return false;
    if (fs.lstatSync(guard, { throwIfNoEntry: false })?.ino !== st.ino) return false; // replaced meanwhile
    fs.rmSync(guard, { force: true });
    return true;
  } catch (err) {
    return errnoCode(err) === 'ENOENT'; // released meanwhile: try again
  }
}

/** Renews `locked_at` of a lock still holding `lock.token`; returns the renewed lock. */
export async function refreshLock(file: string, lock: LockInfo): Promise<LockInfo | undefined> {
  const current = inspectLock(file);
  if (current.state !== 'held' || current.lock.token !== lock.token || !sameOwner(current.lock, lock)) return undefined;
  const renewed: LockInfo = { ...current.lock, locked_at: new Date().toISOString() };
  const tmp = path.join(path.dirname(file), `.${path.basename(file).slice(0, 180)}.${crypto.randomBytes(6).toString('hex')}.tmp`);
  try {
    await writePrivate(tmp, renewed);
    fs.renameSync(tmp, file);
  } catch {
    fs.rmSync(tmp, { force: true });
    return undefined;
  }
  return renewed;
}

/** Removes the lock of `rel` if it is still the acquisition `token`; false when it is gone or someone else's. */
export function releaseLock(zone: Pick<Zone, 'workBase'>, rel: string, token: string | undefined): boolean {
  const file = lockFile(zone, rel);
  if (file === undefined) return false;
  const state = inspectLock(file);
  if (state.state !== 'held' || state.lock.token !== token) return false;
  fs.rmSync(file, { force: true });
  pruneEmpty(path.dirname(file), locksRoot(zone));
  return true;
}

/** Removes whatever lock `rel` has (force unlock, maintenance); returns what it was. */
export function removeLock(zone: Pick<Zone, 'workBase'>, rel: string): LockState {
  const file = lockFile(zone, rel);
  if (file === undefined) return { state: 'none' };
  let state: LockState;
  try {
    state = inspectLock(file);
  } catch {
    state = { state: 'corrupt', ino: 0 };
  }
  if (state.state === 'none' || state.state === 'blocked') return state;
  fs.rmSync(file, { force: true });
  pruneEmpty(path.dirname(file), locksRoot(zone));
  return state;
}

export function locksRoot(zone: Pick<Zone, 'workBase'>): string {
  return path.join(zone.workBase ?? '/nonexistent', 'locks');
}

/** Removes empty folders from `dir` up to (not including) `stop` (a file's path can nest thousands of folders: constant cost per level). */
export function pruneEmpty(dir: string, stop: string): void {
  removeEmptyFolders(dir, stop);
}

/**
 * Runs `fn` while holding a write lock on `rel`. Refuses if a live lock exists, even one of the
 * same conversation: that is an open locked-edit session, which a direct write must not disturb.
 */
export async function withFileLock<T>(zone: Zone, rel: string, owner: LockOwner, maxAgeHours: number, fn: () => Promise<T> | T): Promise<T> {
  if (zone.workBase === undefined) return fn();
  // Write locks are only taken under the call lock of the zone's space: when this call holds it,
  // another host's write lock there is a leftover of a call that died, not a live writer.
  const underCallLock = leaseHeld(callLockPath(scopeHome(zone.scope))) !== undefined;
  const held = await acquireWaiting(zone, rel, owner, maxAgeHours, underCallLock);
  try {
    return await fn();
  } finally {
    releaseLock(zone, rel, held.lock.token);
  }
}

/** How long a write waits for another call's short write lock on the same file. */
export const WRITE_LOCK_WAIT_MS = 5_000;

/**
 * Takes a write lock, waiting (bounded, polling with back-off, without blocking the event loop)
 * while another call holds the file's short write lock: that call ends within moments. An edit
 * lock (an open locked-edit session) refuses at once: it may stay for hours.
 */
async function acquireWaiting(zone: Zone, rel: string, owner: LockOwner, maxAgeHours: number, underCallLock: boolean): Promise<Acquired> {
  const deadline = Date.now() + WRITE_LOCK_WAIT_MS;
  let delay = 5;
  // The lock's folders mirror the file's: made on the thread pool, since a path can nest thousands of
  // folders and each mkdir is a disk write (acquireLock then finds them in place).
  const file = lockFile(zone, rel);
  if (file !== undefined) await fs.promises.mkdir(path.dirname(file), { recursive: true }).catch(() => undefined);
  for (;;) {
    try {
      return await acquireLock(zone, rel, owner, maxAgeHours, 'write', underCallLock);
    } catch (err) {
      const busyWrite = err instanceof ShedError && err.code === 'FILE_LOCKED' && err.details?.kind === 'write';
      if (!busyWrite || Date.now() + delay > deadline) throw err;
    }
    await new Promise((resolve) => setTimeout(resolve, delay + Math.floor(Math.random() * delay)));
    delay = Math.min(delay * 2, 100);
  }
}

/** Throws FILE_LOCKED when someone else (another conversation) holds a live lock on `rel`. */
export function ensureNotLockedByOther(zone: Pick<Zone, 'workBase'>, rel: string, owner: LockOwner, maxAgeHours: number): void {
  const file = lockFile(zone, rel);
  if (file === undefined) return;
  const lock = readLock(file);
  if (lock !== undefined && staleReason(lock, maxAgeHours) === undefined && !sameOwner(lock, owner)) throw lockedError(rel, lock, owner);
}

export function lockedError(rel: string, lock: LockInfo, owner: LockOwner): Error {
  const mine = sameOwner(lock, owner);
  const edit = isEditLock(lock);
  let message: string;
  let hint: string;
  if (!edit) {
    message = `'${rel}' is being written by another call right now.`;
    hint = 'Try again in a moment.';
  } else if (mine) {
    message = `'${rel}' is open in a locked edit in this conversation; a direct write would discard it.`;
    hint = 'Finish the edit first: shed_lockedit_save(...) or shed_lockedit_cancel(...), or pass safe=false to write anyway.';
  } else {
    message = `'${rel}' is locked by another conversation since ${lock.locked_at}.`;
    hint = 'Wait for the other conversation to save, or use shed_force_unlock(zone=..., path=...) if that edit was abandoned.';
  }
  return shedError('FILE_LOCKED', message, { details: { path: rel, locked_at: lock.locked_at, ...(edit ? {} : { kind: 'write' }) }, hint });
}

function lockError(rel: string, why: string): Error {
  return shedError('LOCK_ERROR', `Cannot lock '${rel}': ${why}.`, {
    details: { path: rel },
    hint: 'Retry once; if it persists, shed_maintenance() cleans broken locks, or an admin checks the storage.',
  });
}
