/**
 * `?thumb=1` on a picture of a link: the small image folder pages show beside its name (made by the
 * plugin, confined: core/services/links/thumbnail.ts). Not a picture, or one that cannot be made small: 404,
 * and the page's name link still opens the file.
 */
import type http from 'node:http';
import { linkServing, type Target, type TargetOptions } from '../../../index.js';
import { commonHeaders } from './headers.js';
import { sendError } from './pages.js';

export async function sendThumbnail(req: http.IncomingMessage, res: http.ServerResponse, target: Target, opts: TargetOptions): Promise<void> {
  if (target.isFolder) return sendError(req, res, 404);
  const thumb = await linkServing.thumbnail(target, opts);
  if (thumb === undefined) return sendError(req, res, 404);
  commonHeaders(res);
  res.setHeader('Content-Type', thumb.mime);
  res.setHeader('Content-Length', thumb.bytes.length);
  res.statusCode = 200;
  res.end(req.method === 'HEAD' ? undefined : thumb.bytes);
}
