/** The audit log with filters (user, function, errors only, flagged), newest first. */
import { admin as pluginAdmin } from '../../../index.js';
import { esc } from './page.js';

export function auditPage(storageBase: string, q: URLSearchParams, auditOn: boolean): string {
  const user = (q.get('user') ?? '').trim();
  const fn = (q.get('function') ?? '').trim();
  const errorsOnly = q.get('errors') === '1';
  const flaggedOnly = q.get('flagged') === '1';
  const limit = Math.max(1, Math.min(Number(q.get('limit')) || 200, 2000));
  const entries = pluginAdmin.readAudit(storageBase, { ...(user ? { user } : {}), ...(fn ? { function: fn } : {}), errorsOnly, flaggedOnly, limit });
  const filters = `<form method="get" action="/admin/audit" class="inline"><label>User <input type="search" name="user" value="${esc(user)}" placeholder="alice"></label><label>Function <input type="search" name="function" value="${esc(fn)}" placeholder="shed_exec"></label>
<label><input type="checkbox" name="errors" value="1"${errorsOnly ? ' checked' : ''}> errors only</label><label><input type="checkbox" name="flagged" value="1"${flaggedOnly ? ' checked' : ''}> flagged only</label><button type="submit">Filter</button></form>`;
  const off = auditOn ? '' : '<p class="notice warn">The audit log is off (valve audit_log): no new entries are written.</p>';
  const rows = entries
    .map((e) => `<tr${e.flagged ? ' class="flagged"' : ''}><td>${esc(e.time.replace('T', ' ').slice(0, 19))}</td><td>${esc(e.user)}</td><td>${e.conversation ? esc(e.conversation) : '<span class="muted" title="The host sent no chat id (X-OpenWebUI-Chat-Id)">—</span>'}</td><td><code>${esc(e.function)}</code>${e.command ? ` <code>${esc(e.command)}</code>` : ''}</td><td>${esc([e.zone, e.group].filter(Boolean).join(' '))}</td><td>${(e.paths ?? []).map((p) => `<code>${esc(p)}</code>`).join('<br>')}</td><td>${esc(e.code)}${e.flagged ? ' <span class="tag flag">flagged</span>' : ''}</td><td class="num">${esc(e.ms)}</td></tr>`)
    .join('');
  const table = entries.length
    ? `<div class="table"><table><thead><tr><th>Time (UTC)</th><th>User</th><th>Conversation</th><th>Function</th><th>Zone</th><th>Paths</th><th>Result</th><th class="num">ms</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : '<p class="muted">No matching entries.</p>';
  return `${off}${filters}<p class="muted">${entries.length} entries shown (newest first, at most ${limit}).</p>${table}`;
}
