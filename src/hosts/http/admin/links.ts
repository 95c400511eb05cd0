/** Download links of every user, newest first, with revoke. */
import { admin as pluginAdmin } from '../../../index.js';
import { csrfField, esc, timeText } from './page.js';

export async function linksPage(storageBase: string, csrf: string): Promise<string> {
  const list = await pluginAdmin.links.list(storageBase);
  if (list.length === 0) return '<p class="muted">No links.</p>';
  const now = Date.now();
  const rows = list
    .map((l) => {
      const state = l.revokedAt ? 'revoked' : Date.parse(l.expiresAt) <= now ? 'expired' : 'active';
      const revoke = state === 'active' ? `<form method="post" action="/admin/links" class="inline">${csrfField(csrf)}<input type="hidden" name="link_id" value="${esc(l.id)}"><button type="submit">Revoke</button></form>` : '';
      const where = l.groupId ? `group:${l.groupId}` : l.zone;
      return `<tr><td>${esc(l.userId)}</td><td>${esc(where)}</td><td><code>${esc(l.path)}</code></td><td>${esc(l.kind)}</td><td>${timeText(l.createdAt)}</td><td>${timeText(l.expiresAt)}</td><td>${state}</td><td>${revoke}</td></tr>`;
    })
    .join('');
  return `<div class="table"><table><thead><tr><th>User</th><th>Zone</th><th>Path</th><th>Kind</th><th>Created</th><th>Expires</th><th>State</th><th></th></tr></thead><tbody>${rows}</tbody></table></div>`;
}
