/**
 * Download links of every user (issue 12), with revoke. The links module is optional for this
 * page: when the plugin exports `admin.links` (list and revoke over access_auth.sqlite), the
 * section appears; otherwise it is left out of the navigation and its routes say so.
 */
import { admin as pluginAdmin } from '../../../index.js';
import { csrfField, esc } from './page.js';

/** What the page needs from the links module. */
export interface LinksAdmin {
  list(storageBase: string): Promise<{ link_id: string; user: string; zone: string; path: string; kind?: string; created_at?: string; expires_at?: string }[]>;
  revoke(storageBase: string, linkId: string): Promise<unknown>;
}

export function linksModule(): LinksAdmin | undefined {
  const candidate = (pluginAdmin as { links?: Partial<LinksAdmin> }).links;
  return typeof candidate?.list === 'function' && typeof candidate.revoke === 'function' ? (candidate as LinksAdmin) : undefined;
}

export async function linksPage(storageBase: string, csrf: string): Promise<string> {
  const links = linksModule();
  if (!links) return '<p class="muted">Download links are not part of this build.</p>';
  const list = await links.list(storageBase);
  if (list.length === 0) return '<p class="muted">No links.</p>';
  const rows = list
    .map((l) => `<tr><td>${esc(l.user)}</td><td>${esc(l.zone)}</td><td><code>${esc(l.path)}</code></td><td>${esc(l.kind ?? '')}</td><td>${esc(l.created_at ?? '')}</td><td>${esc(l.expires_at ?? '')}</td><td><form method="post" action="/admin/links" class="inline">${csrfField(csrf)}<input type="hidden" name="link_id" value="${esc(l.link_id)}"><button type="submit">Revoke</button></form></td></tr>`)
    .join('');
  return `<div class="table"><table><thead><tr><th>User</th><th>Zone</th><th>Path</th><th>Kind</th><th>Created</th><th>Expires</th><th></th></tr></thead><tbody>${rows}</tbody></table></div>`;
}
