/**
 * Sends one file: streamed from an open descriptor (flat memory whatever the size), single byte
 * ranges (206 / 416), a strong ETag with If-None-Match (304) and If-Range, the content type from the
 * name, RFC 6266 Content-Disposition, and active content (HTML, SVG, XML) under a sandbox CSP so it
 * can never run script on the server's origin.
 */
import fs from 'node:fs';
import type http from 'node:http';
import { pipeline } from 'node:stream/promises';
import { linkServing } from '../../../index.js';
import { commonHeaders, contentDisposition } from './headers.js';
import { contentTypeOf } from './mime.js';
import { sendError } from './pages.js';

export type Range = { start: number; end: number } | 'unsatisfiable' | undefined;

/** One `bytes=` range (`a-b`, `a-`, `-n`); several ranges or a malformed header are ignored (whole file). */
export function parseRange(header: string | undefined, size: number): Range {
  if (header === undefined) return undefined;
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const n = Number(m[2]);
    if (n === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

function etagOf(st: fs.Stats): string {
  return `"${st.size.toString(36)}-${Math.floor(st.mtimeMs).toString(36)}-${st.ino.toString(36)}"`;
}

function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((t) => {
    const v = t.trim();
    return v === '*' || v === etag || v === `W/${etag}`;
  });
}

export async function sendFile(req: http.IncomingMessage, res: http.ServerResponse, abs: string, root: string, name: string, attachment: boolean): Promise<void> {
  const fd = linkServing.openChecked(abs, root);
  if (fd === undefined) return sendError(req, res, 404);
  let owned = true;
  try {
    const st = fs.fstatSync(fd);
    const etag = etagOf(st);
    const { type, active } = contentTypeOf(name);
    commonHeaders(res);
    res.setHeader('ETag', etag);
    res.setHeader('Last-Modified', st.mtime.toUTCString());
    res.setHeader('Accept-Ranges', 'bytes');
    if (matches(req.headers['if-none-match'], etag)) {
      res.statusCode = 304;
      res.end();
      return;
    }
    res.setHeader('Content-Type', type);
    res.setHeader('Content-Disposition', contentDisposition(attachment ? 'attachment' : 'inline', name));
    if (active) res.setHeader('Content-Security-Policy', 'sandbox');
    const ifRange = req.headers['if-range'];
    const range = ifRange === undefined || ifRange === etag ? parseRange(req.headers.range, st.size) : undefined;
    if (range === 'unsatisfiable') {
      res.removeHeader('Content-Disposition');
      return sendError(req, res, 416, undefined, { 'Content-Range': `bytes */${st.size}` });
    }
    const start = range?.start ?? 0;
    const end = range?.end ?? st.size - 1;
    res.statusCode = range ? 206 : 200;
    if (range) res.setHeader('Content-Range', `bytes ${start}-${end}/${st.size}`);
    res.setHeader('Content-Length', Math.max(0, end - start + 1));
    if (req.method === 'HEAD' || st.size === 0) {
      res.end();
      return;
    }
    owned = false; // the stream closes the descriptor
    const stream = fs.createReadStream('', { fd, start, end, highWaterMark: 256 * 1024 });
    try {
      await pipeline(stream, res);
    } catch {
      // The client went away mid-download: nothing to answer any more.
      res.destroy();
    }
  } finally {
    if (owned) fs.closeSync(fd);
  }
}
