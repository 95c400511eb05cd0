/**
 * The one folder walk for housekeeping (link sweeps, maintenance, counting, lock scans): every
 * non-folder entry below `root`, depth first, never following links; unreadable or vanished
 * folders are skipped. (The quota walk in quota/usage.ts is separate: it must watch each folder
 * before listing it.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { TimeSlice } from './slice.js';
import { listSliced } from './list.js';

export interface WalkEntry {
  /** Absolute path of the entry. */
  full: string;
  /** Folder holding it. */
  dir: string;
  entry: fs.Dirent;
}

/** `skip(dir, name)` prunes an entry (and, for a folder, everything below it). */
export function* walkEntries(root: string, skip?: (dir: string, name: string) => boolean): Generator<WalkEntry> {
  yield* entriesAndFolders(root, skip);
}

/**
 * The same walk for trees the user shapes (any number of folders, nested thousands deep, or 30,000
 * entries in one folder), run after commands and while serving: folders are listed in batches and
 * it yields to the event loop between entries once a slice is used up (see slice.ts), so other
 * users' calls are answered meanwhile. The caller's work per entry counts in the same slice.
 */
export async function* walkEntriesSliced(root: string, skip?: (dir: string, name: string) => boolean): AsyncGenerator<WalkEntry> {
  const slice = new TimeSlice();
  const stack = [root];
  while (stack.length > 0) {
    await slice.tick();
    const dir = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = await listSliced(dir, slice);
    } catch {
      continue; // vanished, replaced by a file, unreadable: nothing to walk there
    }
    for (const entry of entries) {
      await slice.tick();
      if (skip?.(dir, entry.name)) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) stack.push(full);
      else yield { full, dir, entry };
    }
  }
}

function* entriesAndFolders(root: string, skip?: (dir: string, name: string) => boolean): Generator<WalkEntry> {
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (skip?.(dir, entry.name)) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) stack.push(full);
      else yield { full, dir, entry };
    }
  }
}
