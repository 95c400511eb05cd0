/**
 * Listing one folder without holding the event loop: `readdirSync` of a folder of 30,000 entries
 * takes 15-30 ms in one go, and a user decides how many entries a folder holds. Here the entries
 * are read in batches through a directory handle and the slice (slice.ts) may yield between them.
 */
import fs from 'node:fs';
import type { TimeSlice } from './slice.js';

/** Entries read per system call. */
const BATCH = 256;

/** The entries of `dir` (throws as readdirSync does: ENOENT, ENOTDIR, EACCES...). */
export async function listSliced(dir: string, slice: TimeSlice): Promise<fs.Dirent[]> {
  const handle = fs.opendirSync(dir, { bufferSize: BATCH });
  const out: fs.Dirent[] = [];
  try {
    for (let entry = handle.readSync(); entry !== null; entry = handle.readSync()) {
      out.push(entry);
      if (out.length % BATCH === 0) await slice.tick();
    }
  } finally {
    handle.closeSync();
  }
  return out;
}
