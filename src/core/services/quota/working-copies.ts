/**
 * Working copies are real bytes on disk, so they count against the quota while an edit is open
 * (otherwise opening many files and growing their copies would escape it). The zone trees of
 * the quota scope plus the editzone folder beside each of them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../../base/errors.js';
import { scopeTotal } from './quota.js';
import { invalidateTree, treeUsage } from './usage.js';
import type { QuotaScope } from '../../base/zones/zones.js';
import { formatSize } from '../../base/text/size.js';

function editzones(scope: QuotaScope): string[] {
  // A zone and its history share one folder, hence one editzone: counted once.
  return [...new Set(Object.values(scope.trees).map((tree) => path.join(path.dirname(tree), 'editzone')))];
}

/** After a command changed a working copy through another link, its folder must be measured again. */
export function invalidateCopies(scope: QuotaScope): void {
  for (const dir of editzones(scope)) invalidateTree(dir);
}

export async function workingCopyBytes(scope: QuotaScope): Promise<number> {
  let total = 0;
  for (const editzone of editzones(scope)) {
    if (fs.statSync(editzone, { throwIfNoEntry: false })?.isDirectory()) total += (await treeUsage(editzone)).bytes;
  }
  return total;
}

/** Bytes still free in the scope when working copies are counted (negative when over). */
export async function roomWithCopies(scope: QuotaScope): Promise<number> {
  return scope.limitBytes - (await scopeTotal(scope)) - (await workingCopyBytes(scope));
}

/** Refuses growing the working copies by `growth` bytes past the quota. */
export async function ensureCopyRoom(scope: QuotaScope, growth: number): Promise<void> {
  if (growth <= 0) return;
  const room = await roomWithCopies(scope);
  if (growth <= room) return;
  throw shedError('QUOTA_EXCEEDED', `Quota exceeded: the working copy would need ${formatSize(growth)}, but only ${formatSize(Math.max(0, room))} of the ${formatSize(scope.limitBytes)} quota are free (open edits count until they are saved or cancelled).`, {
    details: { requested_bytes: growth, free_bytes: Math.max(0, room), quota_bytes: scope.limitBytes },
    hint: 'Free space (shed_stats shows usage; shed_delete removes files), finish other open edits with shed_lockedit_save or shed_lockedit_cancel, or edit directly with shed_patch_text.',
  });
}
