/**
 * shed_read's answers for documents (core/services/documents): converted text with the same line slicing as
 * a text file, spreadsheets one sheet at a time (rows as lines), PDFs and presentations by whole
 * pages, images as the image itself. Every answer says what part of how much it shows and how to
 * get the rest; the text stays within max_output.
 */
import { shedError } from '../core/base/errors.js';
import { composePages, convertOffLoop, DOC_LIMITS, imageForModel, parsePages, pdfPageCount, pdfPageImage, pdfPages, type Converted, type DocumentKind, type LineSlice, type PageRange } from '../core/services/documents/index.js';
import type { ZonedPath } from '../core/base/files/located.js';
import { formatSize } from '../core/base/text/size.js';
import { plural, renderCall } from '../core/base/text/format.js';
import { type CallContext, type HandlerResult } from '../registry/define.js';

const LABELS: Record<string, string> = {
  pdf: 'PDF document',
  docx: 'Word document (DOCX)',
  xlsx: 'Excel workbook (XLSX)',
  pptx: 'PowerPoint presentation (PPTX)',
  odt: 'OpenDocument text (ODT)',
  ods: 'OpenDocument spreadsheet (ODS)',
  odp: 'OpenDocument presentation (ODP)',
  epub: 'EPUB e-book',
  eml: 'e-mail (EML)',
  html: 'HTML page',
};

export interface DocumentArgs {
  zone: string;
  path: string;
  start_line?: number | undefined;
  end_line?: number | undefined;
  pages?: string | undefined;
  sheet?: string | undefined;
  group?: string | undefined;
}

const fmt = (n: number) => n.toLocaleString('en-US');

export async function readDocument(kind: DocumentKind, target: ZonedPath, size: number, args: DocumentArgs, limit: number, ctx: CallContext): Promise<HandlerResult> {
  const call = (extra: Record<string, unknown>) => renderCall('shed_read', { zone: args.zone, path: args.path, ...(args.group ? { group: args.group } : {}), ...extra });
  const common = { path: target.rel, zone: target.zone.label, size };
  const timeout = ctx.valves.exec_timeout_default;
  if (kind.type === 'image') {
    notFor('pages', args.pages, 'an image', call);
    notFor('sheet', args.sheet, 'an image', call);
    const maxKb = ctx.valves.read_image_max_kb;
    if (maxKb === 0) {
      throw shedError('INVALID_FORMAT', `${target.shown} is an image, and showing images to the model is turned off on this server (valve read_image_max_kb=0).`, {
        hint: `Describe it with shed_file_type(zone="${args.zone}", path="${args.path}"), or share it with shed_link_create.`,
      });
    }
    const image = await imageForModel(ctx.valves, target.abs, target.shown, kind.format, maxKb * 1024);
    const scaled = image.width !== image.original_width || image.height !== image.original_height;
    return {
      data: { ...common, format: kind.format, image },
      message: `${target.shown}: ${kind.format.toUpperCase()} image, ${image.original_width} x ${image.original_height} pixels (${formatSize(size)}), shown ${scaled ? `scaled to ${image.width} x ${image.height}` : 'at full size'} (${formatSize(image.bytes)} ${image.mime_type.slice(6).toUpperCase()}).`,
    };
  }
  const lineRange = args.start_line !== undefined || args.end_line !== undefined ? { start: args.start_line ?? 1, end: args.end_line ?? Number.MAX_SAFE_INTEGER } : undefined;
  const range = args.pages === undefined ? undefined : parsePages(args.pages, { zone: args.zone, path: args.path }, (a) => renderCall('shed_read', a));
  if (kind.type === 'pdf') {
    notFor('sheet', args.sheet, 'a PDF', call);
    const total = await pdfPageCount(ctx.valves, target.abs, target.shown);
    const { first, last } = pageWindow(range, total, target.shown, 'page', call);
    // Four bytes per character at most, and more than one answer can show: the capture never limits what is shown.
    const { texts, cut } = await pdfPages(ctx.valves, target.abs, target.shown, first, last, Math.min(DOC_LIMITS.textChars, limit * 4 + 64 * 1024));
    if (cut && texts.length > 1) texts.pop(); // the last page was cut short by the capture: the next call shows it
    const answer = paged('pdf', 'page', texts, first, total, range, lineRange, limit, target, common, call);
    return await withPageImage(answer, target, ctx, call);
  }
  const converted: Converted = await convertOffLoop(
    {
      abs: target.abs,
      shown: target.shown,
      kind: kind.type,
      start: lineRange?.start ?? 1,
      end: lineRange?.end ?? Number.MAX_SAFE_INTEGER,
      budget: limit,
      sheet: args.sheet,
      first: range?.first,
      last: range?.last,
    },
    timeout,
  );
  if (converted.mode === 'units') {
    notFor('sheet', args.sheet, `a ${LABELS[converted.format]}`, call);
    if (range !== undefined && range.first > converted.total) pageWindow(range, converted.total, target.shown, 'slide', call);
    return paged(converted.format, 'slide', converted.texts, converted.first, converted.total, range, lineRange, limit, target, common, call);
  }
  notFor('pages', args.pages, `a ${LABELS[converted.format]} (it has no pages)`, call);
  const label = LABELS[converted.format]!;
  if (converted.mode === 'sheet') {
    const name = converted.names[converted.index]!;
    const others = converted.names.length > 1 ? ` Sheets: ${converted.names.slice(0, 20).map((n, i) => `${i + 1} "${n}"`).join(', ')}${converted.names.length > 20 ? ', ...' : ''}.` : '';
    const f = converted.formulas;
    const formulas = f
      ? ` ${plural(f.count, 'formula cell')} of this sheet ${f.count === 1 ? 'has' : 'have'} no computed value in the file (saved by a program that does not calculate) and ${f.count === 1 ? 'is' : 'are'} shown as the formula, e.g. ${f.first}: open and save it in a spreadsheet program to get the values, or compute them from the cells they name.`
      : '';
    return {
      data: { ...common, format: converted.format, sheet: name, sheet_number: converted.index + 1, sheets: converted.names.slice(0, 100), ...lineData(converted.slice), total_rows: converted.slice.totalLines, ...(f ? { formulas_without_value: f.count } : {}) },
      message: `${target.shown}: ${label}, sheet "${name}" as CSV (line N = row N): ${rowsPart(converted.slice, limit)}${continuation(converted.slice, (extra) => call({ sheet: name, ...extra }), 'rows')}${formulas}${others}`,
    };
  }
  return {
    data: { ...common, format: converted.format, ...lineData(converted.slice), ...(converted.cut ? { text_cut: true } : {}) },
    message: `${target.shown}: ${label} as text: ${linesPart(converted.slice, limit)}${continuation(converted.slice, call, 'lines')}${converted.cut ? ` The converted text stops after ${DOC_LIMITS.textChars / 1048576} Mi characters; the rest of the document is not shown.` : ''}${converted.format === 'html' || converted.format === 'eml' ? ' (raw=true shows the source.)' : ''}`,
  };
}

/**
 * A PDF page without text (a scan, most likely) is offered as a picture for a model that sees images:
 * attached (data.image, the shape of an image read, which hosts pass on as an image) when the answer
 * shows that one page or only such pages; otherwise the answer names the call that attaches it.
 */
async function withPageImage(answer: HandlerResult, target: ZonedPath, ctx: CallContext, call: (extra: Record<string, unknown>) => string): Promise<HandlerResult> {
  const data = answer.data as Record<string, unknown>;
  const empty = data.pages_without_text as number[] | undefined;
  if (empty === undefined || empty.length === 0) return answer;
  const page = empty[0]!;
  const shownPages = (data.last_page as number) - (data.first_page as number) + 1;
  const maxKb = ctx.valves.read_image_max_kb;
  if (maxKb === 0) {
    return { ...answer, message: `${answer.message} Showing pages as images is turned off on this server (valve read_image_max_kb=0).` };
  }
  if (shownPages !== 1 && empty.length !== shownPages) {
    return { ...answer, message: `${answer.message} A model that sees images can look at the page instead: ${call({ pages: String(page) })} attaches it as an image.` };
  }
  const image = await pdfPageImage(ctx.valves, target.abs, target.shown, page, maxKb * 1024);
  const others = empty.length > 1 ? ` The others one at a time: ${call({ pages: String(empty[1]) })}.` : '';
  return {
    data: { ...data, image, image_page: page },
    message: `${answer.message} Page ${page} is attached as an image (${image.width} x ${image.height} ${image.mime_type.slice(6).toUpperCase()}, ${formatSize(image.bytes)}) for a model that sees images: read it from the picture.${others}`,
  };
}

function notFor(param: 'pages' | 'sheet', value: string | undefined, what: string, call: (extra: Record<string, unknown>) => string): void {
  if (value === undefined) return;
  const instead = param === 'pages' ? 'start_line and end_line select its lines' : 'only spreadsheets (XLSX, ODS) have sheets';
  throw shedError('INVALID_PARAMETER', `'${param}' does not apply to ${what}; ${instead}. Got ${param}=${JSON.stringify(value)}.`, {
    details: { parameter: param, received: value },
    hint: `Example: ${call(param === 'pages' ? { start_line: 1, end_line: 200 } : {})}`,
  });
}

/** Pages to convert for this call: the range asked for (at most one call's worth), or from the first. */
function pageWindow(range: PageRange | undefined, total: number, shown: string, unit: string, call: (extra: Record<string, unknown>) => string): { first: number; last: number } {
  const first = range?.first ?? 1;
  if (total === 0) throw shedError('INVALID_FORMAT', `${shown} has no ${unit}s.`, { hint: 'Check it with shed_file_type.' });
  if (first > total) {
    throw shedError('INVALID_PARAMETER', `${shown} has only ${plural(total, unit)}; pages=${JSON.stringify(`${range!.first}${range!.last === range!.first ? '' : `-${range!.last ?? ''}`}`)} is past the end.`, {
      details: { parameter: 'pages', received: range!.first, expected: `1-${total}` },
      hint: `Example: ${call({ pages: total === 1 ? '1' : `1-${Math.min(total, 5)}` })}`,
    });
  }
  return { first, last: Math.min(total, range?.last ?? total, first + DOC_LIMITS.pdfPagesPerCall - 1) };
}

function paged(format: string, unit: string, texts: string[], first: number, total: number, range: PageRange | undefined, lineRange: { start: number; end: number } | undefined, limit: number, target: ZonedPath, common: Record<string, unknown>, call: (extra: Record<string, unknown>) => string): HandlerResult {
  const answer = composePages(unit, texts, first, total, limit, lineRange);
  const span = (a: number, b: number) => (a === b ? `${unit} ${a}` : `${unit}s ${a}-${b}`);
  const pagesArg = (a: number, b: number) => (a === b ? String(a) : `${a}-${b}`);
  let message = `${target.shown}: ${LABELS[format]}, ${plural(total, unit)}. Showing ${span(answer.firstPage, answer.lastPage)} (${fmt(answer.content.length)} characters).`;
  const data: Record<string, unknown> = { ...common, format, content: answer.content, [`total_${unit}s`]: total, [`first_${unit}`]: answer.firstPage, [`last_${unit}`]: answer.lastPage };
  if (answer.lines !== undefined) {
    Object.assign(data, { start_line: answer.lines.startLine, end_line: answer.lines.endLine, total_lines: answer.lines.totalLines, truncated: answer.lines.truncated });
    message += ` Lines ${answer.lines.startLine}-${answer.lines.endLine} of the ${fmt(answer.lines.totalLines)} lines of ${span(answer.firstPage, answer.lastPage)}.`;
    if (answer.lines.truncated && answer.lines.nextStartLine !== undefined) {
      data.next_start_line = answer.lines.nextStartLine;
      message += ` TRUNCATED at ${fmt(limit)} characters: continue with ${call({ pages: pagesArg(answer.firstPage, answer.lastPage), start_line: answer.lines.nextStartLine })}.`;
    }
  } else {
    data.truncated = answer.nextPage !== undefined && (range?.last === undefined || answer.lastPage < range.last);
  }
  if (answer.nextPage !== undefined && !(answer.lines?.truncated ?? false)) {
    data.next_pages = `${answer.nextPage}-`;
    message += ` Next: ${call({ pages: `${answer.nextPage}-` })}.`;
  }
  if (answer.empty.length > 0) {
    data[`${unit}s_without_text`] = answer.empty;
    message += ` ${answer.empty.length === 1 ? `${unit[0]!.toUpperCase()}${unit.slice(1)} ${answer.empty[0]} has` : `${unit[0]!.toUpperCase()}${unit.slice(1)}s ${answer.empty.join(', ')} have`} no text (scanned images, most likely: the file holds no text for them).`;
  }
  return { data, message };
}

function lineData(s: LineSlice): Record<string, unknown> {
  return { content: s.content, total_lines: s.totalLines, start_line: s.startLine, end_line: s.endLine, truncated: s.truncated, ...(s.nextStartLine !== undefined && s.truncated ? { next_start_line: s.nextStartLine } : {}) };
}

function linesPart(s: LineSlice, limit: number): string {
  if (s.totalLines === 0) return 'no text.';
  if (s.content === '' && s.startLine > s.totalLines) return `nothing to show from line ${s.startLine} (it has ${plural(s.totalLines, 'line')}).`;
  return `lines ${s.startLine}-${s.endLine} of ${fmt(s.totalLines)} (${fmt(s.content.length)} characters)${s.truncated ? `, TRUNCATED at ${fmt(limit)} characters` : ''}.`;
}

function rowsPart(s: LineSlice, limit: number): string {
  if (s.totalLines === 0) return 'the sheet is empty.';
  if (s.content === '' && s.startLine > s.totalLines) return `nothing to show from row ${s.startLine} (it has ${plural(s.totalLines, 'row')}).`;
  return `rows ${s.startLine}-${s.endLine} of ${fmt(s.totalLines)} (${fmt(s.content.length)} characters)${s.truncated ? `, TRUNCATED at ${fmt(limit)} characters` : ''}.`;
}

function continuation(s: LineSlice, call: (extra: Record<string, unknown>) => string, what: 'lines' | 'rows'): string {
  if (s.truncated && s.nextStartLine !== undefined) return ` Continue with start_line=${s.nextStartLine}${what === 'rows' ? ' (the next row)' : ''}: ${call({ start_line: s.nextStartLine })}.`;
  if (s.endLine < s.totalLines && s.content !== '') return ` More after line ${s.endLine}: start_line=${s.endLine + 1}.`;
  return '';
}
