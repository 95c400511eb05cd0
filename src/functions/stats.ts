import fs from 'node:fs';
import { scopeUsage } from '../core/services/quota/quota.js';
import { formatSize } from '../core/base/text/size.js';
import { labelZone, userScope } from '../core/base/zones/zones.js';
import { defineFunction } from '../registry/define.js';

function isFolder(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}

export const shedStats = defineFunction({
  name: 'shed_stats',
  category: 'info',
  summary: 'Show disk usage per zone (Uploads, Storage, Documents) against your quota.',
  description: 'Your space use per zone and what is left of your quota.',
  params: {},
  example: {},
  async handler(_args, ctx) {
    const scope = userScope(ctx.valves, ctx.user.id);
    // Only existing trees are measured: asking about a folder that does not exist creates nothing
    // and counts 0, and must not leave a remembered "empty" answer for when it appears.
    const existing = Object.fromEntries(Object.entries(scope.trees).filter(([, root]) => isFolder(root)));
    const usage = await scopeUsage({ ...scope, trees: existing });

    // The history of Documents counts toward the quota; it is shown with its zone, its objects are not "files".
    const zones: Record<string, { size_bytes: number; size_human: string; files: number; history_bytes?: number }> = {};
    let used = 0;
    let files = 0;
    for (const label of Object.keys(scope.trees)) {
      const u = usage[label] ?? { bytes: 0, files: 0 };
      used += u.bytes;
      const { zone, history } = labelZone(label);
      const entry = (zones[zone] ??= { size_bytes: 0, size_human: formatSize(0), files: 0 });
      if (history) {
        entry.history_bytes = u.bytes;
        continue;
      }
      Object.assign(entry, { size_bytes: u.bytes, size_human: formatSize(u.bytes), files: u.files });
      files += u.files;
    }
    const quota = scope.limitBytes;
    // A zero quota allows nothing: anything stored is then "all of it".
    const percent = quota > 0 ? (used / quota) * 100 : used > 0 ? 100 : 0;
    const total = {
      size_bytes: used,
      size_human: formatSize(used),
      files,
      quota_mb: ctx.valves.quota_per_user_mb,
      quota_bytes: quota,
      usage_percent: `${percent.toFixed(1)}%`,
      remaining_bytes: Math.max(0, quota - used),
    };
    const parts = Object.entries(zones).map(([label, z]) => `${label} ${z.size_human}${z.history_bytes ? ` (+ ${formatSize(z.history_bytes)} history)` : ''}`);
    return {
      data: { zones, total },
      message: `Using ${total.size_human} of ${formatSize(quota)} (${total.usage_percent}), ${formatSize(total.remaining_bytes)} left: ${parts.join(', ')}.`,
    };
  },
});
