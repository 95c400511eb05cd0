/**
 * One watch per command in a writable zone, answering "which folders changed during this command"
 * (the quota module's folder watches, see quota/usage.ts). It serves two needs:
 *
 * - Quota per call, not per file: while the command runs, the zone's quota scope is measured every
 *   QUOTA_POLL_MS and on every change event (only folders that changed are read again); once usage passes the quota (or what
 *   was used at the start, if the scope was already over) the whole process group is killed. Each
 *   file is also capped by `ulimit -f` at what was left of the quota, so the overshoot is at most what
 *   the command writes in one poll interval, plus one file.
 * - O(change) commits in versioned zones: the paths that changed are read off the changed folders
 *   only. When the watch cannot vouch for them (inotify unavailable, far too many events) the
 *   caller compares full stat snapshots (`exact` false at the start) or commits the whole zone.
 */
import { scopeTotal } from '../quota/quota.js';
import { invalidateTree, watchChanges } from '../quota/usage.js';
import type { Zone } from '../zones/zones.js';
import type { RunRequest } from './runner.js';

/** How often usage is measured while a command runs. */
export const QUOTA_POLL_MS = 20;

export interface CallWatchEnd {
  /** Zone-relative paths the command changed; undefined when unknown (see `exact`). */
  changed: string[] | undefined;
  usedBytes: number;
  /** Bytes above the quota after the command (0 when within it). */
  overBytes: number;
}

export interface CallWatch {
  /** True when `changed` will be known at the end (no full snapshot needed). */
  exact: boolean;
  monitor: NonNullable<RunRequest['monitor']>;
  finish(): Promise<CallWatchEnd>;
}

export async function watchCall(zone: Zone): Promise<CallWatch | undefined> {
  if (zone.readonly) return undefined;
  const treeRoot = zone.scope.trees[zone.label] ?? zone.root;
  const watch = await watchChanges(treeRoot, { entries: zone.versioned });
  const ceiling = Math.max(zone.scope.limitBytes, await scopeTotal(zone.scope));
  return {
    exact: watch.exact,
    monitor: {
      everyMs: QUOTA_POLL_MS,
      check: async () => ((await scopeTotal(zone.scope)) > ceiling ? 'quota' : undefined),
      // Every change event asks again at once: a fast writer is caught after the write that passed the quota.
      wake: (now) => watch.onChange(now),
    },
    async finish() {
      const { paths, reliable } = await watch.finish();
      // Events may have been lost: the usage cache is rebuilt by the next question.
      if (!reliable) invalidateTree(treeRoot);
      const usedBytes = await scopeTotal(zone.scope);
      const changed = paths?.filter((rel) => rel !== '.git' && !rel.startsWith('.git/'));
      return { changed, usedBytes, overBytes: usedBytes > ceiling ? usedBytes - zone.scope.limitBytes : 0 };
    },
  };
}
