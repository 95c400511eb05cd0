/**
 * What a killed call left aside in a scope's stash (stash.ts), put back: blocked entries return to
 * their zone, group files are compared with HEAD, restored where they differ, and get their modes
 * back. Run under the scope's call lock: by the lock's takeover and the server's start
 * (recovery/recover.ts), by shed_maintenance, and by every command before it looks at its zone.
 */
import fs from 'node:fs';
import { restoreGuarded } from './guard-group.js';
import { putBackAll } from './hide-blocked.js';
import { closeStash, leftoverStashes, zoneOf } from './stash.js';

export interface LeftoverReport {
  /** Stashes undone completely. */
  undone: number;
  /** Stashes that could not be undone yet (kept for the next try). */
  kept: number;
}

export async function putBackLeftovers(home: string): Promise<LeftoverReport> {
  const report: LeftoverReport = { undone: 0, kept: 0 };
  for (const leftover of leftoverStashes(home)) {
    const { stash } = leftover;
    if (leftover.state === 'none') {
      closeStash(leftover); // killed before its journal: nothing was moved
      continue;
    }
    if (stash === undefined) {
      report.kept++; // an unreadable journal is never guessed at
      continue;
    }
    const root = zoneOf(home, stash.journal);
    try {
      if (stash.journal.kind === 'blocked') await putBackAll(root, stash);
      else await restoreGuarded(root, labelOf(stash.journal.zone), stash, []);
    } catch {
      // the next try repeats it: each step is idempotent
    }
    if (fs.existsSync(stash.dir)) report.kept++;
    else report.undone++;
  }
  return report;
}

/** A name for the repository of a zone root (only used in messages). */
function labelOf(zoneRel: string): string {
  return zoneRel.startsWith('Documents') ? 'Documents' : 'Group';
}
