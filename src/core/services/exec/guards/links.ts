/**
 * An archive extraction, a copy or a checkout can leave symbolic links that lead outside the zone
 * (a later command would follow them without the sandbox) or at their own folder or an ancestor
 * (`a -> .` makes `a/a/../..` climb above where its text says, and recursive tools loop). After
 * such commands, in every mode, every link the one link rule (paths/links.ts) rejects is removed,
 * anywhere in the zone (a `.git` folder there is the user's data like any other).
 */
import fs from 'node:fs';
import path from 'node:path';
import { walkEntriesSliced } from '../../../base/fs/walk.js';
import { linkProblem } from '../../../base/paths/links.js';

/** Removing one link can change where another leads (`a -> b/..`), so the sweep repeats until nothing moves. */
const MAX_ROUNDS = 8;

/**
 * Runs after commands over a tree the user shaped: sliced, so other users' calls go on meanwhile.
 * `within`: only these zone-relative paths (and what the folders among them hold) can hold a new
 * link (what a script changed, read off its watch); the whole zone otherwise.
 */
export async function outwardLinkSweep(root: string, within?: readonly string[]): Promise<string[]> {
  const removed: string[] = [];
  for (let round = 0; round < MAX_ROUNDS; round++) {
    let changed = false;
    for await (const full of linksBelow(root, within)) {
      let problem: string | undefined;
      try {
        problem = linkProblem(root, full, fs.readlinkSync(full));
      } catch {
        continue; // removed or replaced (by the command's leftovers) since the listing: judged next round
      }
      if (problem === undefined) continue;
      try {
        fs.rmSync(full, { force: true });
      } catch {
        // gone meanwhile, or its folder is a file now (ENOTDIR): nothing left to sweep there
      }
      removed.push(path.relative(root, full));
      changed = true;
    }
    if (!changed) break;
  }
  return removed;
}

/** The symbolic links below `root`, or at `within` and below the folders among them. */
async function* linksBelow(root: string, within: readonly string[] | undefined): AsyncGenerator<string> {
  for (const start of within === undefined ? [root] : within.map((rel) => path.join(root, rel))) {
    const st = fs.lstatSync(start, { throwIfNoEntry: false });
    if (st?.isSymbolicLink()) yield start;
    if (!st?.isDirectory()) continue;
    for await (const { full, entry } of walkEntriesSliced(start)) if (entry.isSymbolicLink()) yield full;
  }
}
