/**
 * Removes a folder and everything below it, for trees the user shapes (any number of entries,
 * nested thousands deep). `fs.rmSync` recurses in JavaScript on Node 20 (a stack overflow past
 * about a thousand levels), names every entry by its full path (ENAMETOOLONG past 4 KiB) and holds
 * the event loop for the whole tree. Here the walk is iterative, each folder is reached through a
 * descriptor (DirCursor: constant cost per level, no path length limit), links are removed and never
 * followed, and the work yields to the event loop between slices (slice.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { DirCursor } from './dircursor.js';
import { TimeSlice } from './slice.js';

interface Level {
  name: string;
  /** Subfolders of this folder not removed yet. */
  pending: string[];
}

/** Removes `abs` (a real folder, not a link) and what it holds; returns how many non-folder entries it removed. */
export async function removeTree(abs: string): Promise<number> {
  const slice = new TimeSlice();
  const cursor = new DirCursor(path.dirname(abs));
  let removed = 0;
  try {
    const enter = async (name: string): Promise<Level> => {
      cursor.enter(name);
      const pending: string[] = [];
      for (const entry of listing(cursor)) {
        if (entry.isDirectory()) pending.push(entry.name);
        else {
          unlinkGone(cursor, entry.name);
          removed++;
          await slice.tick(); // a folder of a million files is removed in slices too
        }
      }
      return { name, pending };
    };
    const levels = [await enter(path.basename(abs))];
    while (levels.length > 0) {
      await slice.tick();
      const level = levels[levels.length - 1]!;
      const next = level.pending.pop();
      if (next !== undefined) {
        levels.push(await enter(next));
        continue;
      }
      levels.pop();
      cursor.up();
      cursor.rmdir(level.name);
    }
  } finally {
    cursor.close();
  }
  return removed;
}

/** The folder's entries; a folder left without read permission (`mkdir -m 0`) is opened up first. */
function listing(cursor: DirCursor): fs.Dirent[] {
  try {
    return cursor.list();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EACCES') throw err;
    fs.chmodSync(cursor.here, 0o700);
    return cursor.list();
  }
}

function unlinkGone(cursor: DirCursor, name: string): void {
  try {
    cursor.unlink(name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
