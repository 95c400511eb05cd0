/**
 * Helpers for functions that remove or move whole entries (shed_delete, shed_rename): counting
 * what a folder holds, and refusing when another conversation has a live lock on the entry or,
 * for a folder, on any file inside it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureNotLockedByOther, type LockOwner } from '../core/locks/locks.js';
import type { Zone } from '../core/zones/zones.js';
import type { ZonedPath } from './common.js';

/**
 * The zone-relative path of what is really at `p.abs`. It differs from `p.rel` when the path goes
 * through a folder link ("alias/a.txt" for "real/a.txt"): locks and commits must use the real one.
 */
export function diskRel(p: ZonedPath): string {
  return path.relative(p.zone.root, p.abs).split(path.sep).join('/');
}

/** Files, links and other non-folder entries under `abs`, counted without following links. */
export function countFiles(abs: string): number {
  let count = 0;
  const stack = [abs];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue; // vanished or unreadable: the removal itself will report a real problem
    }
    for (const entry of entries) {
      if (entry.isDirectory()) stack.push(path.join(dir, entry.name));
      else count++;
    }
  }
  return count;
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
  const stack = [base];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue; // no locks folder for it: nothing is locked
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        stack.push(full);
      } else if (entry.isFile() && entry.name.endsWith('.lock')) {
        const inner = path.relative(base, full).split(path.sep).join('/').slice(0, -'.lock'.length);
        ensureNotLockedByOther(zone, `${rel}/${inner}`, owner, maxAgeHours);
      }
    }
  }
}
