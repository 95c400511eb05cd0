/**
 * Putting an entry back at its place in a zone after a command ran there (blocked entries hidden
 * during the command): the command may have made anything of that place meanwhile. Nothing the
 * command made is lost and nothing is followed:
 * - the place is reached beneath the zone by descriptor (beneath.ts), folder by folder, never
 *   through a link, whatever the command renamed;
 * - each folder on the way must be a real folder: a missing one is made; a file, link or other
 *   entry standing where a folder belongs is moved aside (renamed in its own folder) and the folder
 *   made;
 * - an entry that took the place itself is moved aside the same way.
 * "Aside" is `<name>.~N~`, the first free N (GNU's numbered-backup form, which users know).
 */
import fs from 'node:fs';
import { makeBeneath, type MovedAside } from './beneath.js';

export type { MovedAside } from './beneath.js';

/**
 * Moves `from` (an entry outside the zone, same filesystem) to `root/relPath`, making room first.
 * `known`: folders already made real by this run of put-backs (kept for the callers' loops; each
 * put-back still walks its way by descriptor, a few opens, whatever the depth of earlier ones).
 */
export function putBack(root: string, relPath: string, from: string, moved: MovedAside[], known?: Set<string>): void {
  void known;
  const parts = relPath.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.includes('..')) throw new Error(`not a place inside the zone: ${relPath}`);
  const dir = makeBeneath(root, parts.slice(0, -1).join('/'), moved);
  try {
    const name = parts.at(-1)!;
    fs.renameSync(from, dir.makeRoom(name, moved));
  } finally {
    dir.close();
  }
}
