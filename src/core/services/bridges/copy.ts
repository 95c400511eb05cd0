/**
 * Moving and copying trees between zones, for the zone bridges and shed_copy_to_group: what a
 * source holds (measured without following links), a copy made beside its destination and renamed
 * into place (a failed copy leaves the destination as it was), a move that is one rename where the
 * disk allows. Links and special files never cross zones: they are skipped and listed. Every walk
 * yields to the event loop within a slice (fs/slice.ts): a user decides how many files a folder holds.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../../base/errors.js';
import { fsyncOffLoop, syncDirOffLoop, TEMP_SUFFIX } from '../../base/fs/atomic.js';
import { listSliced } from '../../base/fs/list.js';
import { removeEntry, removeTree } from '../../base/fs/remove-tree.js';
import { TimeSlice } from '../../base/fs/slice.js';
import { adoptTree, mkdirInheriting } from '../../base/fs/owner.js';
import { assertFence } from '../../base/locks/lease.js';
import { errnoCode } from '../../base/paths/resolve.js';

/** What a source tree holds, measured without following links. */
export interface Scan {
  folder: boolean;
  files: number;
  bytes: number;
  largest: { rel: string; size: number };
  /** Links and special files (relative to the source): they are not carried over. */
  skipped: string[];
}

export async function scanTree(abs: string, st: fs.Stats): Promise<Scan> {
  const scan: Scan = { folder: st.isDirectory(), files: 0, bytes: 0, largest: { rel: '', size: 0 }, skipped: [] };
  if (!scan.folder) {
    scan.files = 1;
    scan.bytes = st.size;
    scan.largest = { rel: '', size: st.size };
    return scan;
  }
  const slice = new TimeSlice();
  const stack = [''];
  while (stack.length > 0) {
    const rel = stack.pop()!;
    for (const entry of await listSliced(path.join(abs, rel), slice)) {
      await slice.tick();
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) stack.push(child);
      else if (entry.isFile()) {
        const size = fs.lstatSync(path.join(abs, child)).size;
        scan.files++;
        scan.bytes += size;
        if (size > scan.largest.size) scan.largest = { rel: child, size };
      } else scan.skipped.push(child);
    }
  }
  return scan;
}

function tempBeside(dest: string, tag: string): string {
  return path.join(path.dirname(dest), `.${path.basename(dest).slice(0, 180)}.${tag}${crypto.randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
}

/**
 * Puts `from` at `dest` by rename. A file replaces a file atomically; a folder that replaces a
 * folder first moves the old one aside and puts it back if the second rename fails. False when
 * the two are on different disks (the caller copies instead).
 */
export async function renameInto(from: string, dest: string, replace: boolean): Promise<boolean> {
  mkdirInheriting(path.dirname(dest));
  const folder = fs.lstatSync(from).isDirectory();
  try {
    assertFence();
    if (!replace || !folder) {
      fs.renameSync(from, dest);
    } else {
      const aside = tempBeside(dest, 'old.');
      fs.renameSync(dest, aside);
      try {
        fs.renameSync(from, dest);
      } catch (err) {
        fs.renameSync(aside, dest);
        throw err;
      }
      await removeEntry(aside);
    }
  } catch (err) {
    if (errnoCode(err) === 'EXDEV') return false;
    throw err;
  }
  await syncDirOffLoop(path.dirname(dest));
  return true;
}

/** Copies a file or folder to a temp entry beside `dest`, then renames it into place. */
export async function copyInto(src: string, folder: boolean, dest: string, replace: boolean): Promise<void> {
  mkdirInheriting(path.dirname(dest));
  const tmp = tempBeside(dest, '');
  try {
    if (folder) await copyFolder(src, tmp);
    else await copyOne(src, tmp, true);
    // The copy beside dest takes the owner of the folder it lands in (src/core/base/fs/owner.ts).
    await adoptTree(tmp);
    if (!(await renameInto(tmp, dest, replace))) throw shedError('IO_ERROR', 'The copy could not be put in place.');
  } catch (err) {
    await removeEntry(tmp);
    throw err;
  }
}

/** Files at least this large are copied on the thread pool (a pool hop costs more than a small copy). */
const POOL_COPY_BYTES = 1 << 20;

/** Copies one file; `sync` flushes it (on the thread pool). A large file is copied there too: never on the loop. */
async function copyOne(src: string, dest: string, sync: boolean): Promise<void> {
  if (fs.statSync(src).size >= POOL_COPY_BYTES) await fs.promises.copyFile(src, dest, fs.constants.COPYFILE_EXCL);
  else fs.copyFileSync(src, dest, fs.constants.COPYFILE_EXCL);
  if (!sync) return;
  const fd = fs.openSync(dest, 'r');
  try {
    await fsyncOffLoop(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Folders and regular files only; links and special files are left out (see Scan.skipped). */
async function copyFolder(src: string, dest: string): Promise<void> {
  fs.mkdirSync(dest);
  const slice = new TimeSlice();
  const stack = [''];
  while (stack.length > 0) {
    const rel = stack.pop()!;
    for (const entry of await listSliced(path.join(src, rel), slice)) {
      await slice.tick();
      const child = rel ? path.join(rel, entry.name) : entry.name;
      if (entry.isDirectory()) {
        fs.mkdirSync(path.join(dest, child));
        stack.push(child);
      } else if (entry.isFile()) {
        await copyOne(path.join(src, child), path.join(dest, child), false);
      }
    }
  }
}

/** After a copying move: removes what was copied, keeping the skipped entries (and their folders). */
export async function removeCopied(src: string, scan: Scan): Promise<void> {
  const slice = new TimeSlice();
  if (scan.skipped.length === 0) {
    await removeTree(src);
    return;
  }
  const removeIn = async (rel: string): Promise<boolean> => {
    const dir = path.join(src, rel);
    let empty = true;
    for (const entry of await listSliced(dir, slice)) {
      await slice.tick();
      const child = rel ? path.join(rel, entry.name) : entry.name;
      if (entry.isDirectory()) {
        if (await removeIn(child)) await fs.promises.rmdir(path.join(src, child));
        else empty = false;
      } else if (entry.isFile()) {
        await fs.promises.unlink(path.join(src, child));
      } else {
        empty = false;
      }
    }
    return empty;
  };
  if (await removeIn('')) await fs.promises.rmdir(src);
}
