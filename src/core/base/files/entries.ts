/**
 * Helpers for functions that remove or move whole entries (shed_delete, shed_rename): counting
 * what a folder holds, and refusing when another conversation has a live lock on the entry or,
 * for a folder, on any file inside it.
 */
import path from 'node:path';
import { ensureNotLockedByOther, type LockOwner } from '../locks/locks.js';
import type { Zone } from '../zones/zones.js';
import type { ZonedPath } from './located.js';
import { walkEntries } from '../fs/walk.js';

/**
 * The zone-relative path of what is really at `p.abs`. It differs from `p.rel` when the path goes
 * through a folder link ("alias/a.txt" for "real/a.txt"): locks and commits must use the real one.
 */
export function diskRel(p: ZonedPath): string {
  return path.relative(p.zone.root, p.abs).split(path.sep).join('/');
}

/**
 * FILE_LOCKED when another conversation holds a live lock on the entry (under the path given or
 * its real path), or, for a folder, on any file below it (its locks live under locks/<rel>/).
 */
export function ensureNoForeignLock(p: ZonedPath, isFolder: boolean, owner: LockOwner, maxAgeHours: number): void {
  const real = diskRel(p);
  for (const rel of real === p.rel ? [real] : [p.rel, real]) lockedBelow(p.zone, rel, isFolder, owner, maxAgeHours);
}

function lockedBelow(zone: Zone, rel: string, isFolder: boolean, owner: LockOwner, maxAgeHours: number): void {
  ensureNotLockedByOther(zone, rel, owner, maxAgeHours);
  if (!isFolder || zone.workBase === undefined) return;
  const base = path.join(zone.workBase, 'locks', rel);
  for (const { full, entry } of walkEntries(base)) {
    if (!entry.isFile() || !entry.name.endsWith('.lock')) continue;
    const inner = path.relative(base, full).split(path.sep).join('/').slice(0, -'.lock'.length);
    ensureNotLockedByOther(zone, `${rel}/${inner}`, owner, maxAgeHours);
  }
}
