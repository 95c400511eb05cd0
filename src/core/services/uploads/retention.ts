/**
 * Uploads retention: a conversation's upload folder untouched (no entry inside modified) for longer
 * than `uploads_retention_days` is removed by maintenance. The newest modification time anywhere in
 * the folder counts, so a folder someone is still working with is never removed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { walkEntriesSliced } from '../../base/fs/walk.js';
import { removeTree } from '../../base/fs/remove-tree.js';

const DAY = 86_400_000;

/** Removes the expired conversation folders of one Uploads root; returns their names. */
export async function removeExpiredUploads(uploadsRoot: string, retentionDays: number, now = Date.now()): Promise<string[]> {
  if (retentionDays <= 0) return [];
  const removed: string[] = [];
  let names: string[];
  try {
    names = fs.readdirSync(uploadsRoot);
  } catch {
    return [];
  }
  for (const conv of names.sort()) {
    const dir = path.join(uploadsRoot, conv);
    const st = fs.lstatSync(dir, { throwIfNoEntry: false });
    if (st === undefined || !st.isDirectory()) continue;
    if (now - (await newestChange(dir, st.mtimeMs)) <= retentionDays * DAY) continue;
    await removeTree(dir);
    removed.push(conv);
  }
  return removed;
}

/** Sliced: a conversation's uploads are a tree the user shaped (unzipped archives...). */
async function newestChange(dir: string, own: number): Promise<number> {
  let newest = own;
  for await (const { full } of walkEntriesSliced(dir)) {
    let mtime: number;
    try {
      mtime = fs.lstatSync(full).mtimeMs;
    } catch {
      continue; // removed meanwhile
    }
    if (mtime > newest) newest = mtime;
  }
  return newest;
}
