/**
 * Previews of what a link serves (`?view=1` on a file, and the "view" links of folder pages):
 * Markdown rendered (markdown.ts), CSV and TSV as a table, other text with line numbers, images
 * shown in the page, PDFs in the browser's own viewer. Every preview is the server's own HTML page
 * under the pages' CSP (no script at all); the file's content only ever appears escaped, or as the
 * file itself loaded by <img> or by the browser's PDF viewer (a PDF is not a document of this
 * origin). Text and tables show the start of a large file and say so.
 */
import { extensionOf, isMarkdown } from './mime.js';
import { escapeHtml, page } from './pages.js';

export type PreviewKind = 'markdown' | 'table' | 'text' | 'image' | 'pdf';

const IMAGES = new Set(['png', 'jpg', 'jpeg', 'gif', 'webp', 'avif', 'bmp', 'ico']);
const TEXT = new Set(['txt', 'log', 'json', 'yaml', 'yml', 'toml', 'ini', 'xml', 'html', 'htm', 'svg', 'css', 'js', 'mjs', 'ts', 'py', 'sh', 'c', 'h', 'java', 'rs', 'go', 'sql', 'r', 'rb', 'php', 'pl', 'conf', 'cfg', 'env', 'tex', 'diff', 'patch']);

/** Bytes of a text, CSV or Markdown file a preview reads (the rest is left for the download). */
export const PREVIEW_MAX_BYTES = 2 * 1024 * 1024;
const MAX_ROWS = 2_000;
const MAX_COLUMNS = 100;
const MAX_LINES = 20_000;

export function previewKind(name: string): PreviewKind | undefined {
  const ext = extensionOf(name);
  if (isMarkdown(name)) return 'markdown';
  if (ext === 'csv' || ext === 'tsv') return 'table';
  if (IMAGES.has(ext)) return 'image';
  if (ext === 'pdf') return 'pdf';
  if (TEXT.has(ext)) return 'text';
  return undefined;
}

/** The page's CSP: the pages' own, plus framing this origin's PDF for the PDF preview. */
export function previewCsp(base: string, kind: PreviewKind): string {
  return kind === 'pdf' ? `${base}; frame-src 'self'` : base;
}

function nav(name: string, inFolder: boolean): string {
  const file = encodeURIComponent(name);
  return `<nav class="crumbs">${inFolder ? '<a href="./">← folder</a> · ' : ''}<a href="${file}">open</a> · <a href="${file}?download=1">download</a></nav><h1>${escapeHtml(name)}</h1>`;
}

function partial(shownBytes: number, totalBytes: number, what: string): string {
  return shownBytes < totalBytes ? `<p class="note">Showing the ${what} of the first ${Math.round(shownBytes / 1024)} KiB of ${Math.round(totalBytes / 1024)} KiB; download the file for the rest.</p>` : '';
}

export function imagePage(name: string, inFolder: boolean): string {
  return page(name, `${nav(name, inFolder)}<figure class="preview"><img src="${encodeURIComponent(name)}" alt="${escapeHtml(name)}"></figure>`);
}

export function pdfPage(name: string, inFolder: boolean): string {
  return page(name, `${nav(name, inFolder)}<iframe class="pdf" src="${encodeURIComponent(name)}" title="${escapeHtml(name)}"></iframe>`);
}

/** `text`: the file's first bytes decoded; `total`: its size. */
export function textPage(name: string, text: string, shownBytes: number, total: number, inFolder: boolean): string {
  let lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  if (shownBytes < total && lines.length > 1) lines.pop(); // the last line may be cut: leave it out
  const cut = lines.length > MAX_LINES;
  lines = lines.slice(0, MAX_LINES);
  const rows = lines.map((l, i) => `<tr><td class="ln">${i + 1}</td><td class="code">${escapeHtml(l.replace(/\r$/, '')) || ' '}</td></tr>`).join('');
  const note = cut ? `<p class="note">Showing the first ${MAX_LINES.toLocaleString('en-US')} lines; download the file for the rest.</p>` : partial(shownBytes, total, 'lines');
  return page(name, `${nav(name, inFolder)}${note}<div class="scroll"><table class="lines"><tbody>${rows}</tbody></table></div>`);
}

export function tablePage(name: string, text: string, shownBytes: number, total: number, inFolder: boolean): string {
  const delimiter = extensionOf(name) === 'tsv' ? '\t' : guessDelimiter(text);
  const { rows, complete } = parseCsv(text, delimiter, shownBytes < total);
  const head = rows[0] ?? [];
  const body = rows.slice(1, MAX_ROWS + 1);
  const width = Math.min(MAX_COLUMNS, Math.max(head.length, ...body.slice(0, 200).map((r) => r.length)));
  const cells = (r: string[], tag: 'th' | 'td') => Array.from({ length: width }, (_v, i) => `<${tag}>${escapeHtml(r[i] ?? '')}</${tag}>`).join('');
  const more = rows.length - 1 > MAX_ROWS || !complete;
  const note = more ? `<p class="note">Showing the first ${body.length.toLocaleString('en-US')} rows${complete ? '' : ` of the first ${Math.round(shownBytes / 1024)} KiB`}; download the file for the rest.</p>` : '';
  return page(name, `${nav(name, inFolder)}${note}<div class="scroll"><table class="grid"><thead><tr><th class="ln">#</th>${cells(head, 'th')}</tr></thead><tbody>${body.map((r, i) => `<tr><td class="ln">${i + 1}</td>${cells(r, 'td')}</tr>`).join('')}</tbody></table></div>`);
}

function guessDelimiter(text: string): string {
  const first = text.slice(0, text.indexOf('\n') === -1 ? text.length : text.indexOf('\n'));
  const count = (c: string) => first.split(c).length - 1;
  return [';', '\t', '|'].reduce((best, c) => (count(c) > count(best) ? c : best), ',');
}

/** RFC 4180 records (quoted fields, doubled quotes, line breaks in quotes); stops at MAX_ROWS + 1. */
export function parseCsv(text: string, delimiter: string, cutShort: boolean): { rows: string[][]; complete: boolean } {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const n = text.length;
  while (i < n && rows.length <= MAX_ROWS) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === delimiter) {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
    i++;
  }
  const ended = i >= n;
  if (ended && (field !== '' || row.length > 0) && !cutShort) {
    row.push(field);
    rows.push(row);
  }
  return { rows, complete: ended && !cutShort };
}
