/**
 * Putting an entry back at its place in a zone after a command ran there (blocked entries hidden
 * during the command, group files a command changed): the command may have made anything of that
 * place meanwhile. Nothing the command made is lost and nothing is followed:
 * - each folder on the way must be a real folder: a missing one is made; a file, link or other
 *   entry standing where a folder belongs is moved aside (renamed in its own folder) and the folder
 *   made;
 * - an entry that took the place itself is moved aside the same way;
 * - links are never followed (lstat only), so a link planted on the way cannot redirect the entry.
 * "Aside" is `<name>.~N~`, the first free N (GNU's numbered-backup form, which users know).
 */
import fs from 'node:fs';
import path from 'node:path';
import { lstatIfAny } from './stat.js';

/** A newcomer moved aside: it was at `from`, it is now at `to` (zone-relative). */
export interface MovedAside {
  from: string;
  to: string;
}

/** A free name beside `abs` for what stands there: `<name>.~N~`. */
function asideName(abs: string): string {
  for (let n = 1; ; n++) {
    const candidate = `${abs}.~${n}~`;
    if (lstatIfAny(candidate) === undefined) return candidate;
  }
}

/** Moves whatever is at `abs` aside, noting it in `moved`. */
export function moveAside(root: string, abs: string, moved: MovedAside[]): void {
  const to = asideName(abs);
  fs.renameSync(abs, to);
  moved.push({ from: rel(root, abs), to: rel(root, to) });
}

function rel(root: string, abs: string): string {
  return path.relative(root, abs).split(path.sep).join('/');
}

/**
 * Makes every folder on the way to `root/relPath` a real folder (`root` itself is one): a missing
 * one is made, anything else standing there (a file, a link) moved aside first. Returns the
 * absolute place, which may still hold an entry. Folders in `known` were made real already.
 */
export function realFolders(root: string, relPath: string, moved: MovedAside[], known?: Set<string>): string {
  const parts = relPath.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.includes('..')) throw new Error(`not a place inside the zone: ${relPath}`);
  let dir = root;
  for (const part of parts.slice(0, -1)) {
    const next = path.join(dir, part);
    if (known?.has(next)) {
      dir = next;
      continue;
    }
    known?.add(next);
    const st = lstatIfAny(next);
    if (st !== undefined && !st.isDirectory()) moveAside(root, next, moved);
    if (st === undefined || !st.isDirectory()) fs.mkdirSync(next);
    dir = next;
  }
  return path.join(dir, parts.at(-1)!);
}

/** `realFolders`, and whatever took the place itself moved aside: the place is free. */
export function makeRoom(root: string, relPath: string, moved: MovedAside[], known?: Set<string>): string {
  const place = realFolders(root, relPath, moved, known);
  if (lstatIfAny(place) !== undefined) moveAside(root, place, moved);
  return place;
}

/**
 * Moves `from` (an entry outside the zone, same filesystem) to `root/relPath`, making room first.
 * `known`: folders already made real by this run of put-backs (nothing else changes them meanwhile),
 * so a thousand entries of one folder check it once.
 */
export function putBack(root: string, relPath: string, from: string, moved: MovedAside[], known?: Set<string>): void {
  fs.renameSync(from, makeRoom(root, relPath, moved, known));
}
