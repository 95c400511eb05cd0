/**
 * The answer for paged documents (PDF pages, presentation slides): whole pages, each under a
 * "--- page N of T ---" line, as many as fit the character budget; a page with no text is marked
 * as such (a scanned image, most often). With start_line/end_line the selected pages' text is
 * sliced by lines instead, like a text file, for a page longer than the budget.
 */
import { shedError } from '../../base/errors.js';
import { sliceText, type LineSlice } from './slice.js';

export interface PageRange {
  first: number;
  /** undefined: to the end (as far as one call goes). */
  last: number | undefined;
}

/** Parses "3", "2-4", "5-" (also "2–4" and "2..4"); a teaching error otherwise. */
export function parsePages(value: string, example: Record<string, unknown>, render: (args: Record<string, unknown>) => string): PageRange {
  const m = /^\s*(\d{1,9})\s*(?:(?:-|–|—|\.\.|to)\s*(\d{0,9}))?\s*$/i.exec(value);
  const first = m ? Number(m[1]) : NaN;
  const last = m?.[2] ? Number(m[2]) : m && /(-|–|—|\.\.|to)\s*$/i.test(value) ? undefined : first;
  if (!m || first < 1 || (last !== undefined && last < first)) {
    throw shedError('INVALID_PARAMETER', `'pages' must be a page number or a range like "2-4" (pages count from 1); got ${JSON.stringify(value)}.`, {
      details: { parameter: 'pages', received: value, expected: 'a page number or range, e.g. "3", "2-4", "10-"' },
      hint: `Example: ${render({ ...example, pages: '2-4' })}`,
    });
  }
  return { first, last };
}

export interface PagedAnswer {
  content: string;
  /** Pages whose text is (at least partly) shown. */
  firstPage: number;
  lastPage: number;
  /** Pages shown that have no text at all. */
  empty: number[];
  /** Set when the text was sliced by lines (start_line given, or one page longer than the budget). */
  lines?: LineSlice;
  /** The next page to read, when pages remain after the last one shown. */
  nextPage?: number;
}

export function pageHeader(unit: string, n: number, total: number, empty: boolean): string {
  return `--- ${unit} ${n} of ${total}${empty ? ': no text on this page (a scanned image?)' : ''} ---\n`;
}

/**
 * `texts[i]` is page `first + i`; `total` pages exist. `lineRange`: start_line/end_line given.
 */
export function composePages(unit: string, texts: string[], first: number, total: number, budget: number, lineRange: { start: number; end: number } | undefined): PagedAnswer {
  const blocks = texts.map((t, i) => {
    const text = t.replace(/\s+$/, '');
    return { page: first + i, empty: text.trim() === '', block: pageHeader(unit, first + i, total, text.trim() === '') + (text === '' ? '' : `${text}\n`) };
  });
  const after = (page: number) => (page < total ? page + 1 : undefined);
  if (blocks.length === 0) return { content: '', firstPage: first, lastPage: first - 1, empty: [] };
  if (lineRange !== undefined) {
    const lines = sliceText(blocks.map((b) => b.block).join(''), lineRange.start, lineRange.end, budget);
    const lastPage = first + blocks.length - 1;
    return { content: lines.content, firstPage: first, lastPage, empty: blocks.filter((b) => b.empty).map((b) => b.page), lines, ...(lines.truncated ? {} : { nextPage: after(lastPage) }) };
  }
  let content = '';
  let shown = 0;
  for (const b of blocks) {
    if (content.length + b.block.length > budget) break;
    content += b.block;
    shown++;
  }
  if (shown === 0) {
    // The first page alone is longer than the budget: its first lines, and where to go on.
    const lines = sliceText(blocks[0]!.block, 1, Number.MAX_SAFE_INTEGER, budget);
    return { content: lines.content, firstPage: first, lastPage: first, empty: [], lines };
  }
  const lastPage = first + shown - 1;
  return { content, firstPage: first, lastPage, empty: blocks.slice(0, shown).filter((b) => b.empty).map((b) => b.page), ...(after(lastPage) !== undefined ? { nextPage: lastPage + 1 } : {}) };
}
