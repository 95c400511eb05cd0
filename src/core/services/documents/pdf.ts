/**
 * PDF text with poppler-utils, confined (confined.ts): `pdfinfo` for the page count (and whether the
 * file opens at all), `pdftotext` for the text of a range of pages in reading order, one text per
 * page (poppler ends every page with a form feed). A page with no text at all is left empty: the
 * caller says it may be a scanned image, and `pdftoppm` renders such a page as a picture for a model
 * that sees images (pdfPageImage).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { shedError } from '../../base/errors.js';
import type { Valves } from '../../base/valves.js';
import { runConverter, type Converter } from './confined.js';
import { imageForModel, imageFormat, type ShownImage } from './image.js';
import { DOC_LIMITS } from './limits.js';
import { writeBytes } from '../../base/fs/read.js';

const PDFINFO: Converter = { program: 'pdfinfo', pkg: 'poppler-utils', reads: 'PDF files' };
const PDFTOTEXT: Converter = { program: 'pdftotext', pkg: 'poppler-utils', reads: 'PDF files' };
const PDFTOPPM: Converter = { program: 'pdftoppm', pkg: 'poppler-utils', reads: 'PDF pages as images' };
/** What pdftoppm may write for one page at DOC_LIMITS.imageSide pixels (a PNG of noise is about 7 MB). */
const PAGE_PNG_BYTES = 16 * 1024 * 1024;

function failure(shown: string, stderr: string): Error {
  const line = stderr.split('\n').map((l) => l.trim()).find((l) => l !== '') ?? 'poppler could not open it';
  if (/password/i.test(stderr)) {
    return shedError('INVALID_FORMAT', `${shown} is password-protected; its text cannot be read.`, { hint: 'Ask the user for an unprotected copy.' });
  }
  return shedError('INVALID_FORMAT', `${shown} could not be read as a PDF (${line.slice(0, 200)}).`, {
    details: { reason: line.slice(0, 200) },
    hint: 'The file may be damaged or not a PDF: check it with shed_file_type.',
  });
}

/**
 * Page counts of files read recently, by identity and version (device, inode, size, modification time): a
 * model paging through a PDF asks pdfinfo once. A changed file has another key.
 */
const counts = new Map<string, number>();
const COUNTS_KEPT = 256;

export async function pdfPageCount(valves: Valves, abs: string, shown: string): Promise<number> {
  const st = fs.statSync(abs);
  // Not the change time: staging the file for pdfinfo hard-links it, which moves its ctime (every
  // call would miss).
  const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
  const known = counts.get(key);
  if (known !== undefined) return known;
  const total = await countPages(valves, abs, shown);
  if (counts.size >= COUNTS_KEPT) counts.delete(counts.keys().next().value!);
  counts.set(key, total);
  return total;
}

let counted = 0;

/** How many times pdfinfo was run by this process (tests tell a cached count from a new one). */
export function pdfCountRuns(): number {
  return counted;
}

async function countPages(valves: Valves, abs: string, shown: string): Promise<number> {
  counted++;
  const r = await runConverter(valves, PDFINFO, abs, '.pdf', { args: (input) => [input], captureBytes: 64 * 1024, timeoutSec: valves.exec_timeout_default });
  const pages = /^Pages:\s+(\d+)/m.exec(r.stdout.bytes.toString('utf8'));
  if (r.returncode !== 0 || pages === null) throw failure(shown, r.stderr.bytes.toString('utf8'));
  return Number(pages[1]);
}

/** Texts of pages first..last (inclusive), at most `captureBytes` of text in all. */
export async function pdfPages(valves: Valves, abs: string, shown: string, first: number, last: number, captureBytes: number): Promise<{ texts: string[]; cut: boolean }> {
  const r = await runConverter(valves, PDFTOTEXT, abs, '.pdf', {
    args: (input) => ['-q', '-f', String(first), '-l', String(last), '-enc', 'UTF-8', '-eol', 'unix', input, '-'],
    captureBytes,
    timeoutSec: valves.exec_timeout_default,
  });
  const cut = r.stdout.total > r.stdout.bytes.length;
  if (r.returncode !== 0 && !cut && r.stdout.bytes.length === 0) throw failure(shown, r.stderr.bytes.toString('utf8'));
  const texts = r.stdout.bytes.toString('utf8').split('\f');
  // The text after the last form feed is empty (every page ends with one), or the start of a page cut short.
  if (texts.length > 0 && texts[texts.length - 1] === '') texts.pop();
  return { texts: texts.slice(0, last - first + 1), cut };
}

/**
 * One page as an image for a multimodal model: rendered by pdftoppm (confined like pdftotext) at most
 * DOC_LIMITS.imageSide pixels on its long side, whatever size the page declares; a PNG over the byte
 * cap is re-encoded by the image path (imageForModel: JPEG, smaller sides), which also reads it
 * confined, from a private temp file.
 */
export async function pdfPageImage(valves: Valves, abs: string, shown: string, page: number, maxBytes: number): Promise<ShownImage> {
  const r = await runConverter(valves, PDFTOPPM, abs, '.pdf', {
    args: (input) => ['-q', '-f', String(page), '-l', String(page), '-png', '-scale-to', String(DOC_LIMITS.imageSide), input],
    captureBytes: PAGE_PNG_BYTES,
    timeoutSec: valves.exec_timeout_default,
  });
  const png = r.stdout.bytes;
  if (r.returncode !== 0 || r.stdout.total > png.length || imageFormat(png) !== 'png' || png.length < 24) {
    throw failure(shown, r.stderr.bytes.toString('utf8') || `pdftoppm could not render page ${page}`);
  }
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  if (png.length <= maxBytes) {
    return { mime_type: 'image/png', width, height, original_width: width, original_height: height, bytes: png.length, data_uri: `data:image/png;base64,${png.toString('base64')}` };
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-page-'));
  try {
    const file = path.join(dir, 'page.png');
    writeBytes(file, png, { mode: 0o600, exclusive: true });
    return await imageForModel(valves, file, `page ${page} of ${shown}`, 'png', maxBytes);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
