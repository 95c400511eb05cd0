/**
 * Blocked entries (valve blocked_patterns) are not in the zone while a command runs: before it, every
 * blocked file and folder of the zone, and every other name of a blocked file (a hard link, found
 * by inode), is moved out of the zone into the call's stash (stash.ts: server state, same
 * filesystem, journalled before the first move); after it, each is put back. So no argument form
 * reaches one, in any sandbox mode: not `..` forms, list or response files, `-C`, recursive
 * readers, links (they dangle meanwhile) or hard links (there is nothing to link to). The command
 * sees the zone as shed_tree shows it, without blocked entries.
 *
 * What the command made at a blocked entry's place meanwhile (an archive member named `.env`, a
 * file where a blocked folder's parent was) is moved aside (`<name>.~N~`, put-back.ts) and the
 * blocked entry goes back; an extra name of a blocked file whose place a newcomer took is dropped
 * instead (the file keeps its blocked name). The answer lists both.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../../../base/errors.js';
import { lstatBeneath } from '../../../base/fs/beneath.js';
import { putBack, type MovedAside } from '../../../base/fs/put-back.js';
import { TimeSlice } from '../../../base/fs/slice.js';
import { lstatIfAny } from '../../../base/fs/stat.js';
import { errnoCode } from '../../../base/paths/resolve.js';
import { blockedPattern, type BlockedEntries, type BlockRules } from '../../../base/blocked/rules.js';
import { closeStash, itemPath, openStash, safeRel, type Stash } from './stash.js';

export interface HiddenEntry {
  rel: string;
  /** Another name (a hard link) of a blocked file, not blocked by a pattern itself. */
  link?: true;
}

export interface BlockedReturn {
  /** What the command made at the place of a blocked entry (or on its way), moved aside. */
  movedAside: MovedAside[];
  /** Other names of blocked files whose place the command took: dropped, the file keeps its blocked name. */
  namesDropped: string[];
  /** Entries that could not be put back now (left in the stash; the next call or recovery retries). */
  left: number;
}

export interface HiddenBlocked {
  /** How many entries were set aside. */
  entries: number;
  /** Puts every entry back; the stash is removed once all are back. */
  restore(): Promise<BlockedReturn>;
}

/** Moves the blocked entries `found` lists out of the zone (`root`, real) into a new stash of the scope at `home`. */
export async function hideBlocked(home: string, root: string, rules: BlockRules, found: BlockedEntries): Promise<HiddenBlocked | undefined> {
  const entries: HiddenEntry[] = [
    ...found.dirs.map((rel) => ({ rel })),
    ...found.files.map((rel) => (blockedPattern(rules, rel) === undefined ? { rel, link: true as const } : { rel })),
  ];
  if (entries.length === 0) return undefined;
  const stash = await openStash(home, 'blocked', root, entries);
  const slice = new TimeSlice();
  try {
    for (let i = 0; i < entries.length; i++) {
      await slice.tick();
      try {
        fs.renameSync(path.join(root, entries[i]!.rel), itemPath(stash, i));
      } catch (err) {
        if (errnoCode(err) === 'ENOENT') continue; // gone since the walk: nothing to hide
        throw err;
      }
    }
  } catch (err) {
    await putBackAll(root, stash);
    if (errnoCode(err) === 'EXDEV') {
      throw shedError('SANDBOX_UNAVAILABLE', 'The command was not run: blocked files (admin setting blocked_patterns) could not be moved out of the zone, whose folder is on another filesystem than the server\'s state folder.', {
        hint: 'Nothing was changed. An admin should keep each user\'s and group\'s folders on one filesystem (mounts inside the storage base split them).',
      });
    }
    throw err;
  }
  return { entries: entries.length, restore: () => putBackAll(root, stash) };
}

/** Puts every stashed entry back into the zone at `root` (idempotent: what is back already is skipped). */
export async function putBackAll(root: string, stash: Stash<unknown>): Promise<BlockedReturn> {
  const out: BlockedReturn = { movedAside: [], namesDropped: [], left: 0 };
  const entries = stash.journal.entries as HiddenEntry[];
  const slice = new TimeSlice();
  const known = new Set<string>();
  // Blocked names first: an extra name is dropped only once the file is back under its blocked name.
  const order = [...entries.keys()].sort((a, b) => Number(entries[a]!.link === true) - Number(entries[b]!.link === true));
  for (const i of order) {
    await slice.tick();
    const entry = entries[i]!;
    const rel = safeRel(entry?.rel);
    const item = itemPath(stash, i);
    const kept = lstatIfAny(item);
    if (kept === undefined) continue; // never moved, or back already
    if (rel === undefined) {
      out.left++; // a journal entry we cannot read: the entry stays safe in the stash
      continue;
    }
    try {
      if (entry.link && kept.nlink > 1 && lstatBeneath(root, rel) !== undefined) {
        fs.unlinkSync(item);
        out.namesDropped.push(rel);
      } else {
        putBack(root, rel, item, out.movedAside, known);
      }
    } catch {
      out.left++; // the disk refused (or a name too long): kept safe in the stash, retried later
    }
  }
  if (out.left === 0) closeStash(stash);
  return out;
}
