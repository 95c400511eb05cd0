/**
 * What a command changed, found without hashing: a stat snapshot of the zone before and after
 * (readdir + lstat, links never followed, names the history never holds skipped) compared entry by entry.
 *
 * A file counts as changed when its type, size, mode, inode, mtime or ctime differ (ctime catches
 * tools that restore mtime, like `touch -r` or `cp -p`). File timestamps come from a coarse clock,
 * so a file written just before the first snapshot could be rewritten by the command with the same
 * size and the same timestamps; such "racy" entries (changed within RACY_NS of the snapshot) are
 * always reported, and the commit, which hashes them, drops them if their content is the same.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isTrackableName } from './names.js';
import { TimeSlice } from '../../base/fs/slice.js';
import { listSliced } from '../../base/fs/list.js';

export type EntryType = 'file' | 'link' | 'dir' | 'other';

export interface SnapEntry {
  type: EntryType;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
  ino: bigint;
  mode: bigint;
}

export interface Snapshot {
  root: string;
  /** Wall-clock time the walk started, in ns. */
  takenAtNs: bigint;
  /** Zone-relative path → what was there (folders included). */
  entries: Map<string, SnapEntry>;
}

const RACY_NS = 100_000_000n;
const FOLDER: SnapEntry = { type: 'dir', size: 0n, mtimeNs: 0n, ctimeNs: 0n, ino: 0n, mode: 0n };

/** Stat snapshot of everything under `root` (O(files), no file is read; sliced: the user shapes the tree). */
export async function snapshot(root: string): Promise<Snapshot> {
  const takenAtNs = BigInt(Date.now()) * 1_000_000n;
  const entries = new Map<string, SnapEntry>();
  const stack: string[] = [''];
  const slice = new TimeSlice();
  while (stack.length > 0) {
    await slice.tick();
    const rel = stack.pop()!;
    let names: fs.Dirent[];
    try {
      names = await listSliced(rel === '' ? root : path.join(root, rel), slice);
    } catch {
      continue; // vanished or unreadable meanwhile
    }
    for (const d of names) {
      await slice.tick(); // 30,000 entries in one folder: per entry, not per folder
      if (!isTrackableName(d.name)) continue;
      const child = rel === '' ? d.name : `${rel}/${d.name}`;
      if (d.isDirectory()) {
        // A folder's own stat data says nothing git tracks: only its type is kept.
        entries.set(child, FOLDER);
        stack.push(child);
        continue;
      }
      let st: fs.BigIntStats;
      try {
        st = fs.lstatSync(path.join(root, child), { bigint: true });
      } catch {
        continue;
      }
      const type: EntryType = st.isFile() ? 'file' : st.isDirectory() ? 'dir' : st.isSymbolicLink() ? 'link' : 'other';
      entries.set(child, { type, size: st.size, mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs, ino: st.ino, mode: st.mode });
      if (type === 'dir') stack.push(child);
    }
  }
  return { root, takenAtNs, entries };
}

/**
 * Zone-relative paths of the files and links that appeared, disappeared or changed between two
 * snapshots, sorted (folders themselves are not listed: git tracks only what they hold).
 */
export function changedPaths(before: Snapshot, after: Snapshot): string[] {
  const out = new Set<string>();
  const racyFrom = before.takenAtNs - RACY_NS;
  for (const [rel, a] of before.entries) {
    const b = after.entries.get(rel);
    if (a.type === 'dir') {
      if (b !== undefined && b.type !== 'dir') out.add(rel);
      continue;
    }
    if (b === undefined || b.type !== a.type || b.size !== a.size || b.mode !== a.mode || b.ino !== a.ino || b.mtimeNs !== a.mtimeNs || b.ctimeNs !== a.ctimeNs || a.ctimeNs >= racyFrom || a.mtimeNs >= racyFrom) {
      out.add(rel);
    }
  }
  for (const [rel, b] of after.entries) {
    if (b.type !== 'dir' && !before.entries.has(rel)) out.add(rel);
  }
  return [...out].sort();
}
