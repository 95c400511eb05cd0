/**
 * The one folder walk for housekeeping (link sweeps, maintenance, counting, lock scans): every
 * non-folder entry below `root`, depth first, never following links; unreadable or vanished
 * folders are skipped. (The quota walk in quota/usage.ts is separate: it must watch each folder
 * before listing it.)
 */
import fs from 'node:fs';
import path from 'node:path';

export interface WalkEntry {
  /** Absolute path of the entry. */
  full: string;
  /** Folder holding it. */
  dir: string;
  entry: fs.Dirent;
}

/** `skip(dir, name)` prunes an entry (and, for a folder, everything below it). */
export function* walkEntries(root: string, skip?: (dir: string, name: string) => boolean): Generator<WalkEntry> {
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
