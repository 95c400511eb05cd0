/**
 * The standalone link backend: links recorded in access_auth.sqlite, signed with the storage's
 * secret, served by `fileshed serve` at {public_url}/files/{token}.
 */
import path from 'node:path';
import { shedError, showValue } from '../../base/errors.js';
import type { ZonedPath } from '../../base/files/located.js';
import { signingKeys } from './secret.js';
import { getLink, insertLink, linksOf, revokeLink, type LinkKind } from './store.js';
import { newLinkId } from './tokens.js';
import { clickable, linkUrl } from './urls.js';
import type { CallScope } from '../call.js';

const base = (ctx: CallScope) => path.resolve(ctx.valves.storage_base_path);

export async function createStandaloneLink(ctx: CallScope, target: ZonedPath, kind: LinkKind, hours: number) {
  const now = Date.now();
  const keys = await signingKeys(base(ctx));
  const id = newLinkId();
  const expiresAt = new Date(now + hours * 3600 * 1000).toISOString();
  await insertLink(base(ctx), {
    id,
    userId: ctx.user.id,
    zone: target.zone.name,
    groupId: target.zone.group?.id,
    convId: target.zone.name === 'uploads' ? ctx.convId : '',
    path: target.rel,
    kind,
    createdAt: new Date(now).toISOString(),
    expiresAt,
  });
  const url = linkUrl(ctx.valves.public_url, keys, id, kind);
  const name = target.rel === '' ? target.zone.label : path.posix.basename(target.rel);
  const link = clickable(name, url, kind);
  // A picture can be shown in the chat itself: chat UIs (Open WebUI) render a Markdown image inline.
  const picture = kind === 'file' && PICTURE.test(name) ? `![${name.replace(/[[\]]/g, '')}](${url})` : undefined;
  return {
    data: { link_id: id, url, clickable_link: link, ...(picture ? { image_markdown: picture } : {}), kind, expires_at: expiresAt, zone: target.zone.label, path: target.rel },
    message: `Link ready: ${link} (works until ${expiresAt}; served ${ctx.host.linkServer?.(ctx.valves.public_url) ?? `by \`fileshed serve\` on the same storage at ${ctx.valves.public_url}`}).${picture ? ` To show the picture in the chat, put ${picture} in your answer.` : ''}`,
  };
}

const PICTURE = /\.(png|jpe?g|gif|webp)$/i;

export async function listStandaloneLinks(ctx: CallScope) {
  const keys = await signingKeys(base(ctx));
  const now = Date.now();
  const records = await linksOf(base(ctx), ctx.user.id);
  const links = records.map((r) => ({
    link_id: r.id,
    zone: r.zone,
    ...(r.groupId !== undefined ? { group: r.groupId } : {}),
    path: r.path,
    kind: r.kind,
    url: linkUrl(ctx.valves.public_url, keys, r.id, r.kind),
    created_at: r.createdAt,
    expires_at: r.expiresAt,
    expired: Date.parse(r.expiresAt) <= now,
  }));
  return {
    data: { links, count: links.length },
    message: links.length === 0 ? 'No download links.' : `${links.length} download link${links.length === 1 ? '' : 's'}.`,
  };
}

export async function deleteStandaloneLink(ctx: CallScope, id: string) {
  const rec = await getLink(base(ctx), id);
  if (rec === undefined || rec.revokedAt !== undefined) {
    throw shedError('LINK_NOT_FOUND', `No download link has the id ${showValue(id)}.`, {
      details: { parameter: 'link_id', received: id },
      hint: 'shed_link_list() shows your links and their ids.',
    });
  }
  if (rec.userId !== ctx.user.id) {
    throw shedError('ACCESS_DENIED', 'This download link belongs to another user; only its creator can delete it.', { details: { link_id: id } });
  }
  await revokeLink(base(ctx), id);
  return { data: { link_id: id, deleted: true }, message: `Link ${id} deleted: its URL no longer works.` };
}
