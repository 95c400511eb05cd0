/**
 * What a command left at paths of PATH_MAX bytes or more is removed when it ends. A command can nest
 * folders past that depth (through folder descriptors, or `cd` one level at a time), but no call by
 * path reaches them: the quota could not count what they hold, and every later step (commits, the
 * undo capture, archives) would fail on them. The usage walk names them (quota/usage.ts); each is
 * removed from its parent, which is within reach, through a descriptor (fs/remove-tree.ts).
 */
import path from 'node:path';
import { DirCursor, realLocation } from '../../../base/fs/dircursor.js';
import { removeTree } from '../../../base/fs/remove-tree.js';
import { entriesTooLong } from '../../quota/usage.js';

/** Removes the entries below `root` too long to be named; returns them relative to `root`. */
export async function removeTooLong(root: string): Promise<string[]> {
  const found = await entriesTooLong(root);
  for (const abs of found) {
    // The walk records real folders only; a link on the way now (made before the command ended) is not followed.
    const folder = path.dirname(abs);
    if (realLocation(folder, true) !== folder) continue;
    const cursor = new DirCursor(folder);
    const name = path.basename(abs);
    try {
      const st = cursor.lstat(name);
      if (st?.isDirectory()) await removeTree(abs);
      else if (st !== undefined) await cursor.removing.unlink(name);
    } finally {
      cursor.close();
    }
  }
  return found.map((abs) => abs.slice(root.length + 1));
}

/** The line a command's stderr gets when something it made was removed for its path's length. */
export function tooLongNote(removed: readonly string[]): string {
  const levels = removed[0]!.split('/').length;
  const what = removed.length === 1 ? 'an entry' : `${removed.length} entries`;
  return `\nfileshed: removed ${what} this command made at a path of 4,096 bytes or more (the first ${levels} levels deep, with all it held): no tool can name a path that long. Keep folders shallower.\n`;
}
