/**
 * Groups of the standalone directory (admin.groups, the same functions as `fileshed groups ...`):
 * list with members, create, delete, add and remove members. When Open WebUI provides
 * membership (auth mode openwebui-session only), the page is a read-only view.
 */
import { admin as pluginAdmin, plural } from '../../../index.js';
import type { ServerContext } from '../route.js';
import { csrfField, esc } from './page.js';

export function groupsReadOnly(ctx: ServerContext): boolean {
  return ctx.settings.auth.every((m) => m === 'openwebui-session');
}

export async function groupsPage(ctx: ServerContext, csrf: string): Promise<string> {
  const base = ctx.storageBase;
  const readOnly = groupsReadOnly(ctx);
  const list = await pluginAdmin.groups.list(base);
  const note = readOnly
    ? '<p class="notice warn">Group membership comes from Open WebUI for every caller of this server (auth mode openwebui-session): this is a read-only view of the standalone directory; manage groups in Open WebUI.</p>'
    : ctx.settings.auth.includes('openwebui-session')
      ? '<p class="muted">Callers with an Open WebUI session get their groups from Open WebUI; the groups below apply to the other callers (local, API key, JWT).</p>'
      : '';
  const rows: string[] = [];
  for (const g of list) {
    const members = await pluginAdmin.groups.members(base, g.id);
    const memberList = members
      .map((m) => (readOnly ? `<li>${esc(m)}</li>` : `<li><form method="post" action="/admin/groups" class="inline">${csrfField(csrf)}<input type="hidden" name="action" value="remove-member"><input type="hidden" name="group" value="${esc(g.id)}"><input type="hidden" name="user" value="${esc(m)}">${esc(m)} <button type="submit" class="link">remove</button></form></li>`))
      .join('');
    const add = readOnly ? '' : `<form method="post" action="/admin/groups" class="inline">${csrfField(csrf)}<input type="hidden" name="action" value="add-member"><input type="hidden" name="group" value="${esc(g.id)}"><label>User id <input type="text" name="user" placeholder="alice" required></label><button type="submit">Add member</button></form>`;
    const del = readOnly ? '' : `<form method="post" action="/admin/groups" class="inline">${csrfField(csrf)}<input type="hidden" name="action" value="delete"><input type="hidden" name="group" value="${esc(g.id)}"><button type="submit">Delete group</button></form>`;
    rows.push(`<div class="card" data-group="${esc(g.id)}"><h3>${esc(g.name)} <small><code>${esc(g.id)}</code></small></h3><p class="muted">${esc(g.description)} ${plural(members.length, 'member')}. Deleting a group removes it from the directory; its files stay on disk.</p><ul>${memberList}</ul>${add} ${del}</div>`);
  }
  const create = readOnly ? '' : `<h2>New group</h2><form method="post" action="/admin/groups" class="inline">${csrfField(csrf)}<input type="hidden" name="action" value="create"><label>Group id <input type="text" name="group" placeholder="team-a" required></label><label>Name <input type="text" name="name" placeholder="Team A"></label><button type="submit" class="primary">Create group</button></form>`;
  return `${note}${create}<h2>Groups (${list.length})</h2>${rows.length ? `<div class="grid">${rows.join('')}</div>` : '<p class="muted">No groups yet.</p>'}`;
}

/** Applies one group form; returns the message to show (ok or error). Errors of the directory are user-readable. */
export async function groupAction(ctx: ServerContext, form: URLSearchParams): Promise<{ ok: boolean; text: string }> {
  if (groupsReadOnly(ctx)) return { ok: false, text: 'Groups are managed in Open WebUI on this server; nothing was changed.' };
  const base = ctx.storageBase;
  const group = (form.get('group') ?? '').trim();
  const user = (form.get('user') ?? '').trim();
  try {
    switch (form.get('action')) {
      case 'create':
        await pluginAdmin.groups.add(base, group, (form.get('name') ?? '').trim() || group);
        return { ok: true, text: `Group '${group}' created.` };
      case 'delete':
        await pluginAdmin.groups.remove(base, group);
        return { ok: true, text: `Group '${group}' deleted (its files stay on disk).` };
      case 'add-member':
        await pluginAdmin.groups.addMember(base, group, user);
        return { ok: true, text: `'${user}' added to '${group}'.` };
      case 'remove-member':
        await pluginAdmin.groups.removeMember(base, group, user);
        return { ok: true, text: `'${user}' removed from '${group}'.` };
      default:
        return { ok: false, text: 'Unknown action; nothing was changed.' };
    }
  } catch (err) {
    return { ok: false, text: `Nothing was changed: ${(err as Error).message}.` };
  }
}
