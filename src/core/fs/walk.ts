/**
 * The one folder walk for housekeeping (link sweeps, maintenance, counting, lock scans): every
 * non-folder entry below `root`, depth first, never following links; unreadable or vanished
 * folders are skipped. (The quota walk in quota/usage.ts is separate: it must watch each folder
 * before listing it.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { TimeSlice } from './slice.js';

export interface WalkEntry {
  /** Absolute path of the entry. */
  full: string;
  /** Folder holding it. */
  dir: string;
  entry: fs.Dirent;
}

/** `skip(dir, name)` prunes an entry (and, for a folder, everything below it). */
export function* walkEntries(root: string, skip?: (dir: string, name: string) => boolean): Generator<WalkEntry> {
  for (const item of entriesAndFolders(root, skip)) if (item !== FOLDER) yield item;
}

/**
 * The same walk for trees the user shapes (any number of folders, nested thousands deep), run after
 * commands and while serving: it yields to the event loop between folders once a slice is used up
 * (see slice.ts), so other users' calls are answered meanwhile.
 */
export async function* walkEntriesSliced(root: string, skip?: (dir: string, name: string) => boolean): AsyncGenerator<WalkEntry> {
  const slice = new TimeSlice();
  for (const item of entriesAndFolders(root, skip)) {
    if (item === FOLDER) await slice.tick();
    else yield item;
  }
}

const FOLDER = Symbol('next folder');

function* entriesAndFolders(root: string, skip?: (dir: string, name: string) => boolean): Generator<WalkEntry | typeof FOLDER> {
  const stack = [root];
  while (stack.length > 0) {
    yield FOLDER;
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
