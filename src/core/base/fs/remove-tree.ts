/**
 * Removes a folder and everything below it, for trees the user shapes (any number of entries,
 * nested thousands deep). `fs.rmSync` recurses in JavaScript on Node 20 (a stack overflow past
 * about a thousand levels), names every entry by its full path (ENAMETOOLONG past 4 KiB) and holds
 * the event loop for the whole tree. Here the walk is iterative, each folder is reached through a
 * descriptor (DirCursor: constant cost per level, no path length limit), links are removed and never
 * followed, the walk yields between slices (slice.ts), and the removals themselves run on the thread
 * pool: the kernel may spend long on one (a CI run saw 420 ms of CPU inside rmdir calls of a chain
 * another process was walking), and that time must not be the event loop's.
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

/** Files of one folder removed at once: enough to keep the thread pool busy (20,000 files: 220 ms; 8 at once, 320 ms). */
const UNLINKS_IN_FLIGHT = 32;

/** Removes `abs` (a real folder, not a link) and what it holds; returns how many non-folder entries it removed. */
export async function removeTree(abs: string): Promise<number> {
  const slice = new TimeSlice();
  const cursor = new DirCursor(path.dirname(abs));
  let removed = 0;
  try {
    const enter = async (name: string): Promise<Level> => {
      cursor.enter(name);
      const pending: string[] = [];
      const files: string[] = [];
      for (const entry of listing(cursor)) (entry.isDirectory() ? pending : files).push(entry.name);
      for (let i = 0; i < files.length; i += UNLINKS_IN_FLIGHT) {
        await Promise.all(files.slice(i, i + UNLINKS_IN_FLIGHT).map((file) => unlinkGone(cursor, file)));
      }
      removed += files.length;
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
      await cursor.removing.rmdir(level.name);
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

async function unlinkGone(cursor: DirCursor, name: string): Promise<void> {
  try {
    await cursor.removing.unlink(name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/** Removes whatever is at `abs` (a folder and its tree, or a file or link itself); nothing there is no error. */
export async function removeEntry(abs: string): Promise<void> {
  const st = await fs.promises.lstat(abs).catch(() => undefined);
  if (st?.isDirectory()) await removeTree(abs);
  else if (st !== undefined) await fs.promises.rm(abs, { force: true });
}
