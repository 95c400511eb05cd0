/**
 * What the executor sets aside around one command, and puts back after it (in this order: group
 * files checked, then blocked entries back): the zone's blocked entries leave the zone
 * (hide-blocked.ts), group files the caller may not change become read-only and are checked
 * afterwards (guard-group.ts). Hidden entries still count toward the quota while the command runs.
 */
import type { BlockedEntries } from '../../../base/blocked/rules.js';
import type { OwnershipRecord } from '../../groups/access.js';
import { scopeHome } from '../../../base/locks/state-dir.js';
import type { Usage } from '../../quota/usage.js';
import type { Zone } from '../../../base/zones/zones.js';
import type { WriteScope } from './callwatch.js';
import { guardGroupFiles, type GuardReport } from './guard-group.js';
import { hideBlocked, type BlockedReturn } from './hide-blocked.js';
import { putBackLeftovers } from './leftovers.js';

export interface AsideReport {
  blocked?: BlockedReturn;
  group?: GuardReport;
  /** Zone-relative paths written or moved while putting things back (versioned zones commit them). */
  touched: string[];
}

export interface Aside {
  /** The command's write scope, its usage counting what is hidden. */
  scope: WriteScope | undefined;
  /** Whether group files are guarded (the command must not chmod: RunRequest.noModeChanges). */
  guarding: boolean;
  restore(): Promise<AsideReport>;
}

/** What a killed call of this zone's space left aside goes back first: nothing may look at a zone missing entries. */
export async function recoverAside(zone: Zone): Promise<void> {
  await putBackLeftovers(scopeHome(zone.scope));
}

/** Usage as the quota sees it while blocked entries are hidden: their bytes still count. */
function withHidden(u: Usage, hiddenBytes: number): Usage {
  return { bytes: u.bytes + hiddenBytes, files: u.files };
}

/** `kernel`: the command runs as `caller` in a group space under identity separation (guard-group.ts). */
export async function setAside(zone: Zone, blocked: BlockedEntries | undefined, locked: readonly OwnershipRecord[], scope: WriteScope | undefined, kernel?: { caller: string }): Promise<Aside> {
  const home = scopeHome(zone.scope);
  const usedBefore = blocked !== undefined && scope !== undefined ? await scope.used() : 0;
  const hidden = blocked !== undefined ? await hideBlocked(home, zone.root, zone.blocked!, blocked) : undefined;
  try {
    const hiddenBytes = hidden !== undefined && scope !== undefined ? Math.max(0, usedBefore - (await scope.used())) : 0;
    const guard = locked.length > 0 ? await guardGroupFiles(home, zone.root, zone.label, locked, kernel) : undefined;
    return {
      scope:
        scope !== undefined && hiddenBytes > 0
          ? { ...scope, used: async () => (await scope.used()) + hiddenBytes, usage: async () => withHidden(await scope.usage(), hiddenBytes) }
          : scope,
      guarding: guard !== undefined,
      async restore() {
        const report: AsideReport = { touched: [] };
        try {
          if (guard !== undefined) report.group = await guard.restore();
        } finally {
          if (hidden !== undefined) report.blocked = await hidden.restore();
        }
        report.touched.push(...(report.group?.touched ?? []), ...(report.blocked?.movedAside.flatMap((m) => [m.from, m.to]) ?? []));
        return report;
      },
    };
  } catch (err) {
    await hidden?.restore();
    throw err;
  }
}
