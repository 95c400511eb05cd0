/**
 * Content types of files the link server sends, from their names (the server never sniffs contents;
 * nosniff tells browsers not to either), and which of them a browser would run as active content.
 * The table is the core's one (core/formats/mime.ts, reached through the plugin's entry like all of the
 * core); this adds only how a browser should be told.
 */
import { linkServing } from '../../../index.js';

const { extensionOf, isTextType, mimeOfExtension } = linkServing.mime;
export { extensionOf };

/** Types a browser renders with script or markup: always served under `Content-Security-Policy: sandbox`. */
const ACTIVE = new Set(['text/html', 'application/xhtml+xml', 'application/xml', 'image/svg+xml', 'text/javascript', 'text/css']);

/** Text types a browser shows as they are (the rest of the text, source code mostly, is sent as text/plain to be read, not downloaded). */
const SHOWN_AS_IS = new Set([...ACTIVE, 'text/plain', 'text/markdown', 'text/csv', 'text/tab-separated-values', 'application/json']);

export function contentTypeOf(name: string): { type: string; active: boolean } {
  const known = mimeOfExtension(extensionOf(name)) ?? 'application/octet-stream';
  if (!isTextType(known)) return { type: known, active: false };
  const base = SHOWN_AS_IS.has(known) ? known : 'text/plain';
  return { type: `${base}; charset=utf-8`, active: ACTIVE.has(base) };
}

export function isMarkdown(name: string): boolean {
  const ext = extensionOf(name);
  return ext === 'md' || ext === 'markdown';
}
