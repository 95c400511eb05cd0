/**
 * Cleaning of what interrupted work leaves behind (shed_maintenance): stale and corrupt locks with
 * the working copies of their sessions, working copies whose session has no lock any more, old
 * scratch folders of lockedit_exec, and temp files of interrupted writes. Age thresholds keep it
 * from touching anything a call still running elsewhere may be using.
 */
import fs from 'node:fs';
import path from 'node:path';
import { TEMP_SUFFIX } from '../fs/atomic.js';
import type { Zone } from '../zones/zones.js';
import { inspectLock, isEditLock, lockFile, locksRoot, removeLock, staleReason } from './locks.js';
import { scratchBase } from './scratch.js';
import { CONV_ID, editzoneRoot, removeWorkingCopy } from './session.js';
import { walkEntries, walkEntriesSliced } from '../fs/walk.js';
import { SCOPE_STATE_NAMES } from './state-dir.js';

export interface Cleaned {
  expired_locks: string[];
  corrupted_locks: string[];
  orphan_editzones: string[];
  temp_files: string[];
  /** Internal leftovers (lock temp files, scratch folders) that have no user-visible name. */
  internal: number;
}

export interface Ages {
  maxLockAgeHours: number;
  /** Scratch folders older than this are leftovers (longer than any command may run). */
  scratchMs: number;
  /** Temp files older than this are leftovers of interrupted writes. */
  tempMs: number;
  now: number;
}

export function emptyCleaned(): Cleaned {
  return { expired_locks: [], corrupted_locks: [], orphan_editzones: [], temp_files: [], internal: 0 };
}

/** Locks, working copies and scratch folders of one zone with a work base (Storage, Documents, a group). */
export function cleanLocks(zone: Zone, ages: Ages, out: Cleaned): void {
  if (zone.workBase === undefined) return;
  const shown = (rel: string) => `${zone.label}/${rel}`;
  const root = locksRoot(zone);
  for (const file of walkFiles(root)) {
    const name = path.basename(file);
    if (path.dirname(file) === root && SCOPE_STATE_NAMES.has(name)) continue; // the scope's call lock and change stamp
    if (!name.endsWith('.lock')) {
      // Temp files of lock creation and renamed stale locks.
      if (olderThan(file, 60_000, ages.now) && rmQuiet(file)) out.internal++;
      continue;
    }
    const rel = path.relative(root, file).split(path.sep).join('/').slice(0, -'.lock'.length);
    const state = inspectLock(file);
    if (state.state === 'corrupt') {
      removeLock(zone, rel);
      out.corrupted_locks.push(shown(rel));
    } else if (state.state === 'held' && staleReason(state.lock, ages.maxLockAgeHours, ages.now) !== undefined) {
      removeLock(zone, rel);
      if (isEditLock(state.lock)) removeWorkingCopy(zone, state.lock.conv_id, rel);
      out.expired_locks.push(shown(rel));
    }
  }
  const edits = editzoneRoot(zone);
  for (const conv of listDir(edits)) {
    if (!CONV_ID.test(conv)) continue;
    const base = path.join(edits, conv);
    for (const file of walkFiles(base)) {
      const rel = path.relative(base, file).split(path.sep).join('/');
      if (path.basename(file).endsWith(TEMP_SUFFIX)) {
        if (olderThan(file, ages.tempMs, ages.now) && rmQuiet(file)) out.internal++;
        continue;
      }
      const lock = readHeld(zone, rel);
      if (lock !== undefined && isEditLock(lock) && lock.conv_id === conv) continue;
      removeWorkingCopy(zone, conv, rel);
      out.orphan_editzones.push(shown(rel));
    }
  }
  const scratch = scratchBase(zone);
  for (const name of listDir(scratch)) {
    const dir = path.join(scratch, name);
    if (olderThan(dir, ages.scratchMs, ages.now)) {
      fs.rmSync(dir, { recursive: true, force: true });
      out.internal++;
    }
  }
}

/** Temp files of interrupted atomic writes in a zone tree (a walk of a tree the user shaped: sliced). */
export async function cleanTempFiles(label: string, root: string, ages: Ages, out: Cleaned): Promise<void> {
  for await (const { full: file } of walkEntriesSliced(root)) {
    if (!path.basename(file).endsWith(TEMP_SUFFIX) || !olderThan(file, ages.tempMs, ages.now)) continue;
    if (rmQuiet(file)) out.temp_files.push(`${label}/${path.relative(root, file).split(path.sep).join('/')}`);
  }
}

function readHeld(zone: Zone, rel: string) {
  try {
    const state = inspectLock(lockFile(zone, rel)!);
    return state.state === 'held' ? state.lock : undefined;
  } catch {
    return undefined;
  }
}

/** Every non-folder entry below `root`, without following links. */
function* walkFiles(root: string, skip?: (dir: string, name: string) => boolean): Generator<string> {
  for (const { full } of walkEntries(root, skip)) yield full;
}

function listDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function olderThan(p: string, ms: number, now: number): boolean {
  try {
    return now - fs.lstatSync(p).mtimeMs > ms;
  } catch {
    return false; // removed, or a folder on the way replaced by a file, since the walk listed it
  }
}

function rmQuiet(p: string): boolean {
  try {
    fs.rmSync(p, { force: true });
    return true;
  } catch {
    return false;
  }
}
