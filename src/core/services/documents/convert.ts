/**
 * The converters written in TypeScript (office files, e-books, e-mails, HTML) run as pool jobs on a
 * worker thread (core/base/work), never on the event loop that answers other users: a worker has a heap
 * cap and the call a deadline (the exec timeout), so a file crafted to be slow or huge costs one
 * worker, stopped, and a clear error. Only the part of the text the call asked for comes back.
 */
import fs from 'node:fs';
import { shedError } from '../../base/errors.js';
import type { JobTable } from '../../base/work/jobs.js';
import { runJob } from '../../base/work/pool.js';
import { htmlToText } from './html.js';
import { DOC_LIMITS } from './limits.js';
import { emailText } from './mail.js';
import { docxText, epubText, odfText, pptxSlides } from './office.js';
import { odsSheet, xlsxSheet } from './sheets.js';
import { sliceText, type LineSlice } from './slice.js';
import type { TextOut } from './text.js';
import { DocumentZip, damaged } from './zip.js';

export type ZipKind = 'docx' | 'xlsx' | 'pptx' | 'odt' | 'ods' | 'odp' | 'epub';
export type ConvertKind = 'zip' | 'html' | 'eml';

export interface ConvertRequest {
  abs: string;
  shown: string;
  kind: ConvertKind;
  start: number;
  end: number;
  budget: number;
  sheet?: string | undefined;
  /** Slides wanted (presentations); undefined: from the first. */
  first?: number | undefined;
  last?: number | undefined;
}

export type Converted =
  | { mode: 'lines'; format: ZipKind | 'html' | 'eml'; slice: LineSlice; cut: boolean }
  | { mode: 'sheet'; format: 'xlsx' | 'ods'; names: string[]; index: number; slice: LineSlice; formulas?: { count: number; first: string } }
  | { mode: 'units'; format: 'pptx' | 'odp'; total: number; first: number; texts: string[] };

/** What a zip holds: an office document or an e-book, by its member names (or none). */
function zipKind(zip: DocumentZip): ZipKind | undefined {
  if (zip.has('word/document.xml')) return 'docx';
  if (zip.has('xl/workbook.xml')) return 'xlsx';
  if (zip.has('ppt/presentation.xml')) return 'pptx';
  const mime = zip.has('mimetype') ? (zip.text('mimetype') ?? '').trim() : '';
  if (mime === 'application/epub+zip' || zip.has('META-INF/container.xml')) return 'epub';
  if (mime.endsWith('opendocument.text')) return 'odt';
  if (mime.endsWith('opendocument.spreadsheet')) return 'ods';
  if (mime.endsWith('opendocument.presentation')) return 'odp';
  return undefined;
}

function readWhole(abs: string, shown: string): Buffer {
  const fd = fs.openSync(abs, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    const size = fs.fstatSync(fd).size;
    if (size > DOC_LIMITS.memberBytes) {
      throw shedError('DOCUMENT_LIMIT', `${shown} is ${Math.round(size / 1048576)} MiB; files above ${DOC_LIMITS.memberBytes / 1048576} MiB are not converted to text.`, {
        hint: 'Read its source with raw=true and start_line/end_line, or search it with shed_exec(cmd="grep", ...).',
      });
    }
    const buf = Buffer.alloc(size);
    let got = 0;
    while (got < size) {
      const n = fs.readSync(fd, buf, got, size - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    fs.closeSync(fd);
  }
}

function lines(format: ZipKind | 'html' | 'eml', text: TextOut, r: ConvertRequest): Converted {
  return { mode: 'lines', format, slice: sliceText(text.toString(), r.start, r.end, r.budget), cut: text.full };
}

/** Worker side: the conversion itself. */
export async function convertDocument(r: ConvertRequest): Promise<Converted> {
  if (r.kind === 'html') return lines('html', htmlToText(readWhole(r.abs, r.shown).toString('utf8')), r);
  if (r.kind === 'eml') return lines('eml', emailText(readWhole(r.abs, r.shown)), r);
  const zip = await DocumentZip.open(r.abs, r.shown);
  try {
    const kind = zipKind(zip);
    switch (kind) {
      case 'docx':
        return lines(kind, docxText(zip, r.shown), r);
      case 'odt':
        return lines(kind, odfText(zip, r.shown), r);
      case 'epub':
        return lines(kind, epubText(zip, r.shown), r);
      case 'xlsx':
      case 'ods': {
        const read = (kind === 'xlsx' ? xlsxSheet : odsSheet)(zip, r.shown, r.sheet, r.start, r.end, r.budget);
        return { mode: 'sheet', format: kind, names: read.names, index: read.index, slice: read.slice, ...(read.formulas ? { formulas: read.formulas } : {}) };
      }
      case 'pptx':
      case 'odp': {
        const all = kind === 'pptx' ? pptxSlides(zip, r.shown) : odfText(zip, r.shown, true);
        const first = Math.max(1, r.first ?? 1);
        const last = Math.min(all.length, r.last ?? all.length, first + DOC_LIMITS.pdfPagesPerCall - 1);
        return { mode: 'units', format: kind, total: all.length, first, texts: all.slice(first - 1, last) };
      }
      default:
        throw shedError('INVALID_FORMAT', `${r.shown} is a ZIP archive, not a document shed_read converts (DOCX, XLSX, PPTX, ODT, ODS, ODP, EPUB).`, {
          hint: 'List it with shed_zipinfo, or unpack it with shed_unzip and read the files inside.',
        });
    }
  } finally {
    zip.close();
  }
}

export const documentJobs: JobTable = {
  async 'doc.convert'(input) {
    try {
      return { value: await convertDocument(input as ConvertRequest) };
    } catch (err) {
      if (err instanceof RangeError) throw damaged((input as ConvertRequest).shown, 'it is too large or too deeply nested to convert');
      throw err;
    }
  },
};

/** Main-thread side: converts on a worker thread, stopped after `timeoutSeconds`. */
export function convertOffLoop(r: ConvertRequest, timeoutSeconds: number): Promise<Converted> {
  return runJob<Converted>('doc.convert', r, {
    timeoutMs: timeoutSeconds * 1000,
    onTimeout: () =>
      shedError('TIMEOUT', `Converting ${r.shown} took longer than ${timeoutSeconds} s and was stopped.`, {
        details: { timeout_seconds: timeoutSeconds },
        hint: 'The file may be crafted to be slow, or very large: split it, or ask the admin to raise exec_timeout_default.',
      }),
  });
}
