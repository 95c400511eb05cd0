/**
 * Reading what people keep (shed_read beyond text files): which files are documents, and their
 * conversion. PDFs and images go to confined programs (pdf.ts, image.ts), office files, e-books,
 * e-mails and HTML to a worker thread (convert.ts). Text files are not this module's business:
 * detectDocument returns undefined for them and shed_read reads them as it always did.
 */
import path from 'node:path';
import { imageFormat, type ImageFormat } from './image.js';

export type DocumentKind = { type: 'pdf' } | { type: 'image'; format: ImageFormat } | { type: 'zip' } | { type: 'html' } | { type: 'eml' };

const HTML_EXT = new Set(['.html', '.htm', '.xhtml']);

/** The document kind of a file from its first bytes (and, for text formats, its extension). */
export function detectDocument(head: Uint8Array, name: string): DocumentKind | undefined {
  const b = Buffer.from(head.buffer, head.byteOffset, head.length);
  if (b.toString('latin1', 0, 5) === '%PDF-') return { type: 'pdf' };
  const image = imageFormat(b);
  if (image !== undefined) return { type: 'image', format: image };
  if (b.length >= 4 && b.readUInt32LE(0) === 0x04034b50) return { type: 'zip' };
  if (b.subarray(0, 8192).includes(0)) return undefined;
  const ext = path.extname(name).toLowerCase();
  if (HTML_EXT.has(ext)) return { type: 'html' };
  if (ext === '.eml') return { type: 'eml' };
  return undefined;
}

export { composePages, parsePages, type PageRange } from './pages.js';
export { convertOffLoop, type Converted } from './convert.js';
export { imageForModel, type ShownImage } from './image.js';
export { pdfPageCount, pdfPageImage, pdfPages } from './pdf.js';
export { DOC_LIMITS } from './limits.js';
export type { LineSlice } from './slice.js';
