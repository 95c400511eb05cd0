import fs from 'node:fs';
import { z } from 'zod';
import { shedError } from '../core/base/errors.js';
import { ZONE_NAMES } from '../core/base/zones/zones.js';
import { defineFunction } from '../registry/define.js';
import { allowZoneInPath, groupParam, lineNumber, pagesParam, pathParam, sheetParam, zoneParam } from '../registry/params.js';
import { detectDocument } from '../core/services/documents/index.js';
import { readDocument } from './read_document.js';
import { locate, requireFile } from '../core/base/files/located.js';
import { looksBinary, outputLimit, plural } from '../core/base/text/format.js';
import { TimeSlice } from '../core/base/fs/slice.js';

const CHUNK = 64 * 1024;

interface LineSlice {
  bytes: Buffer;
  totalLines: number;
  /** Lines whose bytes were collected (may end mid-line when the byte budget ran out). */
  lastLine: number;
}

/**
 * Streams the file once: counts every line, keeps only lines start..end, and stops keeping once
 * `budget` bytes are held, so memory stays bounded whatever the file size.
 */
async function sliceLines(abs: string, start: number, end: number, budget: number): Promise<LineSlice> {
  // Counting every line of a large file takes a while: the loop yields in slices (others' calls go on).
  const slice = new TimeSlice();
  const fd = fs.openSync(abs, 'r');
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let line = 1;
  let lastLine = start - 1;
  let pendingBytes = 0; // bytes of the current (unfinished) line seen so far
  const buf = Buffer.alloc(CHUNK);
  try {
    for (;;) {
      await slice.tick();
      const n = fs.readSync(fd, buf, 0, CHUNK, null);
      if (n === 0) break;
      let from = 0;
      while (from < n) {
        const nl = buf.indexOf(10, from);
        const to = nl === -1 || nl >= n ? n : nl + 1;
        if (line >= start && line <= end && keptBytes < budget) {
          const piece = Buffer.from(buf.subarray(from, Math.min(to, from + (budget - keptBytes))));
          kept.push(piece);
          keptBytes += piece.length;
          lastLine = line;
        }
        pendingBytes += to - from;
        from = to;
        if (to <= n && nl !== -1 && nl < n) {
          line++;
          pendingBytes = 0;
        }
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return { bytes: Buffer.concat(kept), totalLines: pendingBytes > 0 ? line : line - 1, lastLine };
}

export const shedRead = defineFunction({
  name: 'shed_read',
  category: 'read',
  summary: 'Read text by lines; PDF/slides by pages, XLSX/ODS sheets, DOCX/EPUB/EML/HTML as text; images.',
  description:
    'Read a file: text by lines (start_line..end_line); PDF and slides by pages; XLSX/ODS one sheet as CSV (rows = lines); DOCX, ODT, EPUB, EML, HTML as text; PNG/JPEG/GIF/WebP as the image itself. The answer says what part it shows and how to get the rest.',
  params: {
    zone: zoneParam(ZONE_NAMES),
    path: pathParam(),
    start_line: lineNumber('First line'),
    end_line: lineNumber('Last line (inclusive)'),
    pages: pagesParam,
    sheet: sheetParam,
    max_output: z.number().int().optional().describe('Character limit; 0 = admin maximum'),
    group: groupParam,
    allow_zone_in_path: allowZoneInPath,
    raw: z.boolean().optional().describe('true: HTML or e-mail source, not its text'),
  },
  zones: { accepted: ZONE_NAMES, writes: false },
  example: { zone: 'storage', path: 'notes.txt', start_line: 1, end_line: 50 },
  async handler(args, ctx) {
    const target = locate(ctx.zone(args.zone, args.group), args.path, 'path', 'read', args.allow_zone_in_path);
    const stat = requireFile(target);
    const start = args.start_line ?? 1;
    const end = args.end_line ?? Number.MAX_SAFE_INTEGER;
    if (end < start) {
      throw shedError('INVALID_PARAMETER', `'end_line' (${end}) is before 'start_line' (${start}).`, {
        details: { parameter: 'end_line', received: end },
        hint: `Example: shed_read(zone="${args.zone}", path="${args.path}", start_line=${start}, end_line=${start + 49})`,
      });
    }
    const limit = outputLimit(ctx, args.max_output);
    const head = Buffer.alloc(Math.min(8192, stat.size));
    if (head.length > 0) {
      const fd = fs.openSync(target.abs, 'r');
      try {
        fs.readSync(fd, head, 0, head.length, 0);
      } finally {
        fs.closeSync(fd);
      }
    }
    const document = args.raw ? undefined : detectDocument(head, target.rel);
    if (document !== undefined) return readDocument(document, target, stat.size, args, limit, ctx);
    for (const param of ['pages', 'sheet'] as const) {
      if (args[param] === undefined) continue;
      throw shedError('INVALID_PARAMETER', `'${param}' applies to ${param === 'pages' ? 'PDF and presentation files' : 'spreadsheets (XLSX, ODS)'}; ${target.shown} is read by lines. Got ${param}=${JSON.stringify(args[param])}.`, {
        details: { parameter: param, received: args[param] },
        hint: `Use start_line and end_line instead: shed_read(zone="${args.zone}", path="${args.path}", start_line=1, end_line=200)`,
      });
    }
    if (looksBinary(head)) {
      throw shedError('INVALID_FORMAT', `${target.shown} looks binary (it contains NUL bytes) and is none of the document kinds shed_read converts (PDF, DOCX, XLSX, PPTX, ODT, ODS, ODP, EPUB, EML, HTML, PNG, JPEG, GIF, WebP).`, {
        details: { path: target.rel, size: stat.size },
        hint: `Use shed_hexdump(zone="${args.zone}", path="${args.path}") or shed_read_bytes, or shed_file_type to identify it.`,
      });
    }
    // 4 bytes per character at most, plus one so we can tell that more was there.
    const slice = await sliceLines(target.abs, start, end, limit * 4 + 4);
    let content = new TextDecoder('utf-8').decode(slice.bytes);
    let lastLine = Math.min(slice.lastLine, slice.totalLines);
    let truncated = false;
    if (content.length > limit) {
      truncated = true;
      const cut = content.lastIndexOf('\n', limit - 1);
      if (cut >= 0) {
        content = content.slice(0, cut + 1);
        lastLine = start + countNewlines(content) - 1;
      } else {
        content = content.slice(0, limit);
        lastLine = start; // one long line, cut inside it
      }
    }
    const firstShown = slice.totalLines === 0 ? 0 : Math.min(start, slice.totalLines);
    const data: Record<string, unknown> = {
      path: target.rel,
      zone: target.zone.label,
      content,
      size: stat.size,
      total_lines: slice.totalLines,
      start_line: firstShown,
      end_line: lastLine,
      truncated,
    };
    let message: string;
    if (slice.totalLines > 0 && start > slice.totalLines) {
      message = `${target.shown} has only ${plural(slice.totalLines, 'line')}; nothing to show from line ${start}.`;
    } else if (truncated) {
      const next = cutInsideLine(content, lastLine, start) ? lastLine : lastLine + 1;
      data.next_start_line = next;
      message = `Showing lines ${firstShown}-${lastLine} of ${slice.totalLines}: TRUNCATED at ${limit} characters. Continue with start_line=${next}, or search with shed_exec(cmd="grep", ...).`;
    } else {
      message = `Read lines ${firstShown}-${lastLine} of ${slice.totalLines} (${content.length} characters).`;
    }
    return { data, message };
  },
});

function countNewlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

function cutInsideLine(content: string, lastLine: number, start: number): boolean {
  return !content.endsWith('\n') && lastLine === start;
}
