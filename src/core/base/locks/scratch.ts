/**
 * The folder a shed_lockedit_exec command runs in: a fresh per-call folder under
 * `{workBase}/scratch/` that holds nothing but the working copy, at the file's zone-relative path.
 * The command's working folder (and, under bubblewrap, everything it can see) is this folder, so
 * the working copy is the only file of the user it can change. The copy is hard-linked in (no
 * byte copy); after the command, whatever regular file sits at that path becomes the working copy
 * (sed -i and sort -o replace the file, others write in place). Everything else the command left
 * there is discarded with the folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { atParent } from '../fs/beneath.js';
import { removeTree } from '../fs/remove-tree.js';
import { errnoCode } from '../paths/resolve.js';
import type { Zone } from '../zones/zones.js';

export interface Scratch {
  /** Real path of the folder the command runs in. */
  root: string;
  /** Where the working copy appears in it. */
  file: string;
  /** The working copy (outside the scratch folder). */
  copy: string;
  before: { ino: number; size: number; mtimeMs: number };
  /** Removes the folder and whatever the command left in it (any depth, sliced: removeTree). */
  remove(): Promise<void>;
}

export interface Collected {
  changed: boolean;
  size: number;
  /** Set when the command left no regular file at the path (the working copy was kept). */
  note?: string;
}

export function scratchBase(zone: Pick<Zone, 'workBase'>): string {
  return path.join(zone.workBase ?? '/nonexistent', 'scratch');
}

export function openScratch(zone: Pick<Zone, 'workBase'>, convId: string, rel: string, copy: string): Scratch {
  const base = scratchBase(zone);
  fs.mkdirSync(base, { recursive: true });
  const root = fs.realpathSync(fs.mkdtempSync(path.join(base, `${convId.slice(0, 60)}-`)));
  const remove = async () => void (await removeTree(root));
  try {
    const file = path.join(root, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    try {
      fs.linkSync(copy, file);
    } catch (err) {
      if (errnoCode(err) !== 'EXDEV' && errnoCode(err) !== 'EPERM') throw err;
      fs.copyFileSync(copy, file, fs.constants.COPYFILE_EXCL);
    }
    const st = fs.statSync(copy);
    return { root, file, copy, before: { ino: st.ino, size: st.size, mtimeMs: st.mtimeMs }, remove };
  } catch (err) {
    fs.rmSync(root, { recursive: true, force: true }); // holds at most the working copy's link yet
    throw err;
  }
}

/**
 * Makes what the command left at the file's path the working copy (if it is a regular file within
 * `maxBytes`). The path is followed folder by folder beneath the scratch folder by descriptor
 * (fs/beneath.ts): a folder of the path the command replaced by a link (to another user's file, to
 * outside) holds no regular file for this, so the working copy is kept.
 */
export function collectScratch(s: Scratch, maxBytes: number): Collected {
  const rel = path.relative(s.root, s.file).split(path.sep).join('/');
  return atParent(s.root, rel, (dir, name) => collectAt(s, maxBytes, dir.lstat(name), dir.child(name))) ?? collectAt(s, maxBytes, undefined, s.file);
}

function collectAt(s: Scratch, maxBytes: number, left: fs.Stats | undefined, place: string): Collected {
  const current = () => {
    const st = fs.statSync(s.copy);
    return { changed: st.size !== s.before.size || st.mtimeMs !== s.before.mtimeMs || st.ino !== s.before.ino, size: st.size };
  };
  if (left === undefined || !left.isFile()) {
    return { ...current(), note: 'the command left no regular file at the path, so the working copy was kept as it was' };
  }
  if (left.ino !== s.before.ino) {
    if (left.size > maxBytes) return { ...current(), note: `the command's result (${left.size} bytes) is over the file size limit; the working copy was kept` };
    try {
      fs.renameSync(place, s.copy); // same disk: the scratch folder sits beside the editzone
    } catch (err) {
      if (errnoCode(err) !== 'EXDEV') throw err;
      fs.copyFileSync(place, s.copy);
    }
  }
  return current();
}
