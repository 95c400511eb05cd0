/**
 * The one seam through which every change to a versioned zone (Documents, groups) passes after it
 * is written. The dispatcher calls `recordChange` once per successful modifying call; it becomes
 * exactly one git commit of the paths the call touched (none when their content did not change).
 */
import type { Identity } from '../../base/identity.js';
import type { Zone } from '../../base/zones/zones.js';
import { ShedError } from '../../base/errors.js';
import { errnoCode } from '../../base/paths/resolve.js';
import { commitZone } from './commit.js';

export interface Change {
  /** Zone-relative paths written, created or removed by the call (a folder stands for all it holds; '' is the whole zone). */
  paths: string[];
  /** Default commit message when the caller gave none. */
  summary: string;
}

export interface CommitResult {
  /** Short commit id, when a commit was made. */
  commit?: string;
  /** Set when the change was written but could not be committed (the call itself succeeded). */
  warning?: string;
}

type CommitListener = (zone: Zone, oid: string) => void;
const listeners: CommitListener[] = [];

/** Called with every commit the seam makes (the undo capture registers here; vcs never imports it). */
export function onCommitted(listen: CommitListener): void {
  listeners.push(listen);
}

export async function recordChange(zone: Zone, change: Change, author: Identity, message: string | undefined): Promise<CommitResult> {
  try {
    const oid = await commitZone(zone, change.paths, author, message ?? change.summary);
    // Undo by turn (SPEC 9.1): the commit is the capture; the turn being served records it (core/services/undo listens).
    if (oid !== undefined) for (const listen of listeners) listen(zone, oid);
    return oid === undefined ? {} : { commit: oid.slice(0, 7) };
  } catch (err) {
    // The file is already written: failing the call now would make the caller repeat a done change.
    const why = err instanceof ShedError ? err.message : `storage error ${errnoCode(err) ?? (err instanceof Error ? err.name : 'unknown')}`;
    return { warning: `The change was saved but not recorded in the ${zone.label} history (${why}).` };
  }
}
