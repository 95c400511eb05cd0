/**
 * The Open WebUI link backend: the file is uploaded to Open WebUI's Files API with the user's own
 * session token and marked as a Fileshed link in its metadata; the link is Open WebUI's
 * `/api/v1/files/{id}/content` (it works for the logged-in user, and lasts until deleted). List
 * and delete go through the same API and touch only files carrying the marker.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError, showValue } from '../../base/errors.js';
import type { ZonedPath } from '../../base/files/located.js';
import { clickable } from './urls.js';
import type { CallScope } from '../call.js';

const TIMEOUT_MS = 30_000;

interface Session {
  api: string;
  token: string;
  /** Base of the URLs handed to the user. */
  public: string;
}

function session(ctx: CallScope): Session {
  const owui = ctx.host.openWebUI;
  if (owui === undefined || owui.token === '') {
    throw shedError('OPENWEBUI_API_UNAVAILABLE', 'link_backend is "openwebui" but this call carries no Open WebUI session token.', {
      hint: 'Call through fileshed serve with auth openwebui-session, or ask an admin to set the valve link_backend="standalone".',
    });
  }
  const trim = (u: string) => u.replace(/\/+$/, '');
  return { api: trim(owui.url ?? ctx.valves.openwebui_api_url), token: owui.token, public: trim(ctx.valves.openwebui_api_url) };
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});

async function call(s: Session, method: string, route: string, body?: FormData): Promise<{ status: number; json: unknown }> {
  let res: Response;
  try {
    res = await fetch(`${s.api}${route}`, { method, headers: { Authorization: `Bearer ${s.token}`, Accept: 'application/json' }, body, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    throw shedError('OPENWEBUI_API_UNAVAILABLE', `Open WebUI did not answer ${method} ${route}: ${(err as Error).message}.`, { hint: 'Check the valve openwebui_api_url.' });
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json };
}

const isMarked = (file: Json) => obj(obj(file.meta).data).fileshed_link === true;

function detail(json: unknown): string {
  const d = obj(json).detail;
  return typeof d === 'string' ? `: ${d.slice(0, 200)}` : '';
}

export async function createOpenWebUILink(ctx: CallScope, target: ZonedPath) {
  const s = session(ctx);
  const name = path.posix.basename(target.rel);
  const form = new FormData();
  // openAsBlob reads the file from disk as the request streams: a large file is never held in memory.
  form.append('file', await fs.openAsBlob(target.abs), name);
  form.append('metadata', JSON.stringify({ fileshed_link: true, source_zone: target.zone.label, source_path: target.rel }));
  // process=false: a download link needs no text extraction (and skips the extension allow-list).
  const { status, json } = await call(s, 'POST', '/api/v1/files/?process=false', form);
  const id = obj(json).id;
  if (status >= 300 || typeof id !== 'string' || id === '') {
    throw shedError('OPENWEBUI_INSERT_ERROR', `Open WebUI refused the upload (HTTP ${status}${detail(json)}).`, { hint: 'Check that the file type and size are accepted by Open WebUI.' });
  }
  const url = `${s.public}/api/v1/files/${encodeURIComponent(id)}/content`;
  const link = clickable(name, url, 'file');
  return {
    data: { link_id: id, url, clickable_link: link, kind: 'file' as const, expires_at: null, zone: target.zone.label, path: target.rel },
    message: `Link ready: ${link} (an Open WebUI file: it works for your Open WebUI session until you delete it).`,
  };
}

export async function listOpenWebUILinks(ctx: CallScope) {
  const s = session(ctx);
  const { status, json } = await call(s, 'GET', '/api/v1/files/');
  if (status >= 300) throw shedError('OPENWEBUI_API_UNAVAILABLE', `Open WebUI refused the file list (HTTP ${status}${detail(json)}).`);
  const files = (Array.isArray(json) ? json : Array.isArray(obj(json).items) ? (obj(json).items as unknown[]) : []).map(obj);
  const links = files
    .filter((f) => isMarked(f) && (f.user_id === undefined || f.user_id === ctx.user.id))
    .map((f) => {
      const data = obj(obj(f.meta).data);
      const created = typeof f.created_at === 'number' ? new Date(f.created_at * 1000).toISOString() : String(f.created_at ?? '');
      return {
        link_id: String(f.id),
        zone: String(data.source_zone ?? ''),
        path: String(data.source_path ?? f.filename ?? ''),
        kind: 'file' as const,
        url: `${s.public}/api/v1/files/${encodeURIComponent(String(f.id))}/content`,
        created_at: created,
        expires_at: null,
      };
    });
  return { data: { links, count: links.length }, message: links.length === 0 ? 'No download links.' : `${links.length} download link(s).` };
}

export async function deleteOpenWebUILink(ctx: CallScope, id: string) {
  const s = session(ctx);
  const route = `/api/v1/files/${encodeURIComponent(id)}`;
  const got = await call(s, 'GET', route);
  if (got.status === 404) throw shedError('LINK_NOT_FOUND', `No Open WebUI file has the id ${showValue(id)}.`, { details: { parameter: 'link_id', received: id }, hint: 'shed_link_list() shows your links.' });
  if (got.status === 401 || got.status === 403) throw shedError('ACCESS_DENIED', 'Open WebUI does not let you read this file: it is not yours.', { details: { link_id: id } });
  if (got.status >= 300) throw shedError('OPENWEBUI_API_UNAVAILABLE', `Open WebUI refused to read the file (HTTP ${got.status}${detail(got.json)}).`);
  const file = obj(got.json);
  if (typeof file.user_id === 'string' && file.user_id !== ctx.user.id) throw shedError('ACCESS_DENIED', 'This download link belongs to another user; only its creator can delete it.', { details: { link_id: id } });
  if (!isMarked(file)) {
    throw shedError('NOT_A_FILESHED_LINK', `The Open WebUI file ${showValue(id)} was not created by Fileshed; it is left alone.`, { details: { link_id: id, filename: file.filename } });
  }
  const del = await call(s, 'DELETE', route);
  if (del.status >= 300) throw shedError('OPENWEBUI_DELETE_ERROR', `Open WebUI refused the deletion (HTTP ${del.status}${detail(del.json)}).`);
  return { data: { link_id: id, deleted: true }, message: `Link ${id} deleted from Open WebUI.` };
}
