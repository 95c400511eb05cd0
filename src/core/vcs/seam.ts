/**
 * The one seam through which every change to a versioned zone (Documents, groups) passes after it
 * is written. The dispatcher calls `recordChange` once per successful modifying call; the versioning
 * issue turns it into exactly one git commit. Until then it reports that no commit was made.
 */
import type { Identity } from '../identity.js';
import type { Zone } from '../zones/zones.js';

export interface Change {
  /** Zone-relative paths written, created or removed by the call. */
  paths: string[];
  /** Default commit message when the caller gave none. */
  summary: string;
}

export interface CommitResult {
  /** Short commit id, when a commit was made. */
  commit?: string;
}

export async function recordChange(_zone: Zone, _change: Change, _author: Identity, _message: string | undefined): Promise<CommitResult> {
  return {};
}
