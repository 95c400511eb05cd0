/**
 * Uploads retention: a conversation's upload folder untouched (no entry inside modified) for longer
 * than `uploads_retention_days` is removed by maintenance. The newest modification time anywhere in
 * the folder counts, so a folder someone is still working with is never removed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { walkEntries } from '../fs/walk.js';

const DAY = 86_400_000;

/** Removes the expired conversation folders of one Uploads root; returns their names. */
export function removeExpiredUploads(uploadsRoot: string, retentionDays: number, now = Date.now()): string[] {
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
    if (now - newestChange(dir, st.mtimeMs) <= retentionDays * DAY) continue;
    fs.rmSync(dir, { recursive: true, force: true });
    removed.push(conv);
  }
  return removed;
}

function newestChange(dir: string, own: number): number {
  let newest = own;
  for (const { full } of walkEntries(dir)) {
    const st = fs.lstatSync(full, { throwIfNoEntry: false });
    if (st !== undefined && st.mtimeMs > newest) newest = st.mtimeMs;
  }
  return newest;
}
