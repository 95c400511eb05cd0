/**
 * Usage per user and per group from the usage records (admin.usage.read: one small file per
 * scope, refreshed by the dispatcher after calls): zone sizes, file counts, quota bars, last
 * activity; sortable by any column (server-side, so it works without script).
 */
import { formatSize, plural, admin as pluginAdmin, type UsageRecord } from '../../../index.js';
import { csrfField, esc, timeText } from './page.js';

const COLUMNS = [
  ['id', 'Name'],
  ['total', 'Total'],
  ['quota', 'Quota used'],
  ['files', 'Files'],
  ['activity', 'Last activity'],
] as const;
type SortKey = (typeof COLUMNS)[number][0];

function sortValue(r: UsageRecord, key: SortKey): number | string {
  switch (key) {
    case 'id': return r.id.toLowerCase();
    case 'total': return r.total_bytes;
    case 'quota': return r.quota_bytes > 0 ? r.total_bytes / r.quota_bytes : 0;
    case 'files': return r.total_files;
    case 'activity': return r.last_activity;
  }
}

export async function usagePage(storageBase: string, query: URLSearchParams, csrf: string): Promise<string> {
  const sort = (COLUMNS.find(([k]) => k === query.get('sort'))?.[0] ?? 'total') as SortKey;
  const dir = query.get('dir') === 'asc' ? 'asc' : 'desc';
  const records = pluginAdmin.usage.read(storageBase);
  const undo = await pluginAdmin.usage.undoStores(storageBase);
  const sorted = (kind: UsageRecord['kind']) =>
    records
      .filter((r) => r.kind === kind)
      .sort((a, b) => {
        const x = sortValue(a, sort);
        const y = sortValue(b, sort);
        const c = x < y ? -1 : x > y ? 1 : a.id.localeCompare(b.id);
        return dir === 'asc' ? c : -c;
      });
  const users = sorted('user');
  const groups = sorted('group');
  const measure = `<form method="post" action="/admin/usage" class="inline">${csrfField(csrf)}<button type="submit" name="what" value="missing">Measure users without a record</button><button type="submit" name="what" value="all">Measure everyone again</button></form>`;
  return `<p class="muted">From the usage records (updated after each call); ${plural(users.length, 'user')} and ${plural(groups.length, 'group')} recorded.</p>${measure}
<h2>Users</h2>${table(users, sort, dir, ['Uploads', 'Storage', 'Documents', 'Documents history'], undo)}<h2>Groups</h2>${table(groups, sort, dir, [])}`;
}

/** `undo`: each user's undo capture store (users only; server state outside the quota). */
function table(rows: UsageRecord[], sort: SortKey, dir: string, zones: string[], undo?: Map<string, number>): string {
  if (rows.length === 0) return '<p class="muted">None recorded yet.</p>';
  const head = COLUMNS.map(([k, label]) => {
    const next = k === sort && dir === 'desc' ? 'asc' : 'desc';
    const mark = k === sort ? (dir === 'asc' ? ' ▲' : ' ▼') : '';
    return `<th${k === 'id' || k === 'activity' ? '' : ' class="num"'} aria-sort="${k === sort ? (dir === 'asc' ? 'ascending' : 'descending') : 'none'}"><a href="?sort=${k}&amp;dir=${next}">${esc(label)}${mark}</a></th>`;
  });
  const zoneHead = zones.map((z) => `<th class="num">${esc(z)}</th>`).join('') + (undo ? '<th class="num" title="Undo capture store (server state, outside the quota)">Undo store</th>' : '');
  const body = rows
    .map((r) => {
      const ratio = r.quota_bytes > 0 ? r.total_bytes / r.quota_bytes : 0;
      const pct = Math.min(100, Math.round(ratio * 100));
      // <meter> instead of a styled bar: no inline style, which the CSP (style-src 'self') would block.
      const bar = `<meter min="0" max="1" low="0.8" high="0.95" optimum="0" value="${Math.min(1, ratio).toFixed(3)}" title="${pct}% of ${esc(formatSize(r.quota_bytes))}">${pct}%</meter> ${pct}%`;
      const zoneCells = zones.map((z) => `<td class="num">${esc(formatSize(r.zones[z]?.bytes ?? 0))}<br><small>${plural(r.zones[z]?.files ?? 0, 'file')}</small></td>`).join('');
      return `<tr><td>${esc(r.id)}</td><td class="num">${esc(formatSize(r.total_bytes))}</td><td class="num">${bar}</td><td class="num">${r.total_files}</td><td>${timeText(r.last_activity)}</td>${zoneCells}${undo ? `<td class="num">${esc(formatSize(undo.get(r.id) ?? 0))}</td>` : ''}</tr>`;
    })
    .join('');
  return `<div class="table"><table><thead><tr>${head.join('')}${zoneHead}</tr></thead><tbody>${body}</tbody></table></div>`;
}
