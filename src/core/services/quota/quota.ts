/**
 * Quota and size limits, checked before every write. Usage comes from `treeUsage` (exact, cheap);
 * a write is judged by its net growth, so replacing a file with one of the same size always fits.
 */
import { shedError } from '../../base/errors.js';
import type { QuotaScope } from '../../base/zones/zones.js';
import { checkStamp, crossCheck } from './stamp.js';
import { treeUsage, type Usage } from './usage.js';
import { formatSize } from '../../base/text/size.js';

const MIB = 1024 * 1024;

export async function scopeUsage(scope: QuotaScope): Promise<Record<string, Usage>> {
  // Another process (another host, where inotify sees nothing) wrote: its changes are applied first.
  const lastTotals = checkStamp(scope);
  let out = await measure(scope);
  if (lastTotals !== undefined && !crossCheck(scope, lastTotals, out)) out = await measure(scope);
  return out;
}

async function measure(scope: QuotaScope): Promise<Record<string, Usage>> {
  // The trees answer together: each first lets pending change events in (two turns of the event
  // loop), and asked one after another they took those turns each in turn.
  const trees = Object.entries(scope.trees);
  const usages = await Promise.all(trees.map(([, root]) => treeUsage(root)));
  const out: Record<string, Usage> = {};
  trees.forEach(([label], i) => (out[label] = usages[i]!));
  return out;
}

export async function scopeTotal(scope: QuotaScope): Promise<number> {
  let total = 0;
  for (const usage of Object.values(await scopeUsage(scope))) total += usage.bytes;
  return total;
}

/** Refuses a write that would grow the scope by `growth` bytes past its quota (shrinking always passes). */
export async function ensureQuota(scope: QuotaScope, growth: number): Promise<void> {
  if (growth <= 0) return;
  const used = await scopeTotal(scope);
  if (used + growth <= scope.limitBytes) return;
  throw shedError(
    'QUOTA_EXCEEDED',
    `Quota exceeded: ${formatSize(used)} used + ${formatSize(growth)} for this write > ${formatSize(scope.limitBytes)} quota.`,
    {
      details: { used_bytes: used, requested_bytes: growth, quota_bytes: scope.limitBytes },
      hint: 'Free space first: shed_stats shows usage per zone; shed_delete removes files.',
    },
  );
}

export function ensureFileSize(bytes: number, maxMb: number, what: string): void {
  if (bytes <= maxMb * MIB) return;
  throw shedError('FILE_TOO_LARGE', `${what} would be ${formatSize(bytes)}, above the ${formatSize(maxMb * MIB)} limit per file.`, {
    details: { size_bytes: bytes, max_file_size_mb: maxMb },
    hint: 'Split the content into several files, or write less at once.',
  });
}
