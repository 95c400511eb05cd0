/**
 * `GET`/`HEAD /files/{token}[/{subpath}]`: what a download link opens. The server mounts
 * `handleFilesRequest` at /files/; the handler answers every request itself (a file, a folder
 * page, a zip, a rendered Markdown page, or a short HTML error page) and never lets an error
 * escape as a 500 with details.
 */
import fs from 'node:fs';
import type http from 'node:http';
import { markdownPage, MARKDOWN_VIEW_MAX_BYTES } from './markdown.js';
import { PAGE_CSP } from './headers.js';
import { imagePage, pdfPage, previewCsp, previewKind, PREVIEW_MAX_BYTES, tablePage, textPage } from './preview.js';
import { linkServing, type TargetOptions } from '../../../index.js';
import { listingPage } from './listing.js';
import type { SortKey } from '../../../index.js';
import { escapeHtml, page, sendError, sendPage } from './pages.js';
import { sendFile } from './send-file.js';
import { sendThumbnail } from './thumbnail.js';
import { sendZip } from './zip.js';

export type FilesOptions = TargetOptions;

const MESSAGES = {
  expired: 'This link has expired. Ask the assistant in your chat for a new download link (it can create one with shed_link_create).',
  revoked: 'This link was deleted by its owner. Ask them for a new one.',
};

/**
 * `rest` is the raw, still percent-encoded part of the path after `/files/` (default: taken from
 * req.url). The query (`view`, `zip`, `download`, `thumb`, `sort`, `order`) is read from req.url.
 */
export async function handleFilesRequest(req: http.IncomingMessage, res: http.ServerResponse, opts: FilesOptions, rest?: string): Promise<void> {
  try {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q < 0 ? url : url.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(req, res, 405, undefined, { Allow: 'GET, HEAD' });
    const tail = rest ?? (pathname.startsWith('/files/') ? pathname.slice('/files/'.length) : '');
    const target = await linkServing.resolveTarget(tail, opts);
    if ('status' in target) {
      const text = target.reason === 'expired' ? MESSAGES.expired : target.reason === 'revoked' ? MESSAGES.revoked : undefined;
      return sendError(req, res, target.status, text);
    }
    if (target.isFolder) {
      if (!target.slash) {
        // Relative links in the page resolve below the folder only when its URL ends with '/'.
        const location = `${pathname}/${q < 0 ? '' : url.slice(q)}`;
        return sendPage(req, res, 301, page('Moved', `<p><a href="${escapeHtml(location)}">Open the folder</a></p>`), { Location: location });
      }
      if (query.get('zip') === '1') return await sendZip(req, res, target);
      const sort: SortKey = (['name', 'size', 'date'] as const).find((k) => k === query.get('sort')) ?? 'name';
      const desc = query.get('order') === 'desc';
      const entries = await linkServing.readEntries(target, { key: sort, desc });
      return sendPage(req, res, 200, await listingPage(target, entries, sort, desc));
    }
    if (query.get('thumb') === '1') return await sendThumbnail(req, res, target, opts);
    const kind = query.get('view') === '1' ? previewKind(target.name) : undefined;
    if (kind !== undefined) {
      const inFolder = target.sub !== '';
      const csp = previewCsp(PAGE_CSP, kind);
      if (kind === 'image') return sendPage(req, res, 200, imagePage(target.name, inFolder), {}, csp);
      if (kind === 'pdf') return sendPage(req, res, 200, pdfPage(target.name, inFolder), {}, csp);
      const fd = linkServing.openChecked(target.abs, target.linkRoot);
      if (fd === undefined) return sendError(req, res, 404);
      try {
        const size = fs.fstatSync(fd).size;
        const cap = kind === 'markdown' ? MARKDOWN_VIEW_MAX_BYTES : PREVIEW_MAX_BYTES;
        // Markdown past its cap is served raw (a half document renders wrongly); text and tables show their start.
        if (kind !== 'markdown' || size <= cap) {
          const buf = Buffer.alloc(Math.min(size, cap));
          const n = fs.readSync(fd, buf, 0, buf.length, 0);
          const text = new TextDecoder('utf-8').decode(buf.subarray(0, n));
          const html = kind === 'markdown' ? markdownPage(target.name, text, inFolder) : kind === 'table' ? tablePage(target.name, text, n, size, inFolder) : textPage(target.name, text, n, size, inFolder);
          return sendPage(req, res, 200, html, {}, csp);
        }
      } finally {
        fs.closeSync(fd);
      }
    }
    return await sendFile(req, res, target.abs, target.linkRoot, target.name, query.get('download') === '1');
  } catch {
    // Whatever went wrong, the visitor gets a short page, never a stack trace.
    if (!res.headersSent) return sendError(req, res, 404);
    res.destroy();
  }
}
