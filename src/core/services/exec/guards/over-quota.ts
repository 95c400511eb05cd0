/**
 * A command that took its space past the quota, by files, folders or apparent size (sparse files),
 * is stopped (callwatch.ts) and then undone as far as it grew the space: everything it created is
 * removed (files, links, folders with what they hold) and every file it made larger is cut back to
 * its size before the command (which also frees blocks reserved past its end). What it removed or shrank stays as it is, so the space ends at most
 * where it started. What was there before comes from the change watch's records of the moment the
 * command started (usage.ts), which hold whether or not events were lost meanwhile.
 */
import fs from 'node:fs';
import path from 'node:path';
import { removeTree } from '../../../base/fs/remove-tree.js';
import { TimeSlice } from '../../../base/fs/slice.js';
import { lstatIfAny } from '../../../base/fs/stat.js';
import { chargedBytes, type Prior } from '../../quota/usage.js';

export interface QuotaUndo {
  /** Zone-relative paths the command had created, removed. */
  removed: string[];
  /** Files it had made larger, cut back to their size before. */
  cut: { path: string; size: number }[];
}

/**
 * Undoes the growth of a command in the tree at `root`. `changed`: the paths the watch saw change;
 * undefined when it could not tell (the whole tree is compared then).
 */
export async function undoGrowth(root: string, changed: readonly string[] | undefined, prior: (rel: string) => Prior | undefined): Promise<QuotaUndo> {
  const out: QuotaUndo = { removed: [], cut: [] };
  const slice = new TimeSlice();
  const visit = async (rel: string): Promise<boolean> => {
    await slice.tick();
    const abs = path.join(root, rel);
    const st = lstatIfAny(abs);
    if (st === undefined || !inPlace(root, abs)) return false;
    const was = prior(rel);
    if (was === undefined || was.folder !== st.isDirectory()) {
      if (st.isDirectory()) await removeTree(abs);
      else await fs.promises.rm(abs, { force: true });
      out.removed.push(rel);
      return false;
    }
    if (st.isFile() && (st.size > was.size || reservedBeyondSize(st))) {
      // Cutting to the size it has also frees blocks reserved past its end (fallocate KEEP_SIZE).
      const size = Math.min(st.size, was.size);
      cutBack(abs, size);
      out.cut.push({ path: rel, size });
    }
    return st.isDirectory();
  };
  if (changed !== undefined && !changed.includes('')) {
    for (const rel of changed) await visit(rel);
    return out;
  }
  // Unknown changes: every entry is compared with what was there.
  const stack = [''];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let names: string[];
    try {
      names = fs.readdirSync(path.join(root, dir));
    } catch {
      continue;
    }
    for (const name of names) {
      const rel = dir === '' ? name : `${dir}/${name}`;
      if (await visit(rel)) stack.push(rel);
    }
  }
  return out;
}

/** The entry's folder is where the zone's tree says (no link on the way): acting on it acts on that path. */
function inPlace(root: string, abs: string): boolean {
  try {
    return fs.realpathSync(path.dirname(abs)) === path.dirname(abs) && abs.startsWith(`${root}${path.sep}`);
  } catch {
    return false;
  }
}

/** More blocks than the size needs (space reserved behind the file's end): usage.ts counts them. */
function reservedBeyondSize(st: fs.Stats): boolean {
  return chargedBytes(st) > st.size;
}

/** Cuts a regular file (never through a link) back to `size` bytes. */
function cutBack(abs: string, size: number): void {
  const fd = fs.openSync(abs, fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW);
  try {
    fs.ftruncateSync(fd, size);
  } finally {
    fs.closeSync(fd);
  }
}
