/**
 * Spreadsheets (XLSX, ODS) as CSV text, one sheet at a time: line N is row N of the sheet (empty
 * rows stay as empty lines), so start_line/end_line select rows. Only the requested rows are kept
 * (up to the character budget); the rest of the sheet is scanned to count its rows. Values are the
 * cells' shown values: shared strings, inline strings, numbers (dates formatted as ISO dates when
 * the cell's number format is a date), booleans, errors; ODS cells give their displayed text. An
 * XLSX formula cell without a cached value (a file written by a program that does not compute, e.g.
 * openpyxl) shows its formula, "=SUM(A1:A3)", and the answer counts them: a blank would read as no data;
 * an ODS formula cell without displayed text likewise shows its table:formula.
 * Repeated ODF rows and cells stand for at most DOC_LIMITS.repeat copies when they hold a value,
 * and trailing empty ones (LibreOffice writes a million) cost nothing.
 */
import path from 'node:path';
import { shedError } from '../../base/errors.js';
import { DOC_LIMITS } from './limits.js';
import { relationships } from './office.js';
import { cut, type LineSlice } from './slice.js';
import { local, tokenize } from '../../formats/xml/tokenize.js';
import { damaged, type DocumentZip } from './zip.js';

export interface SheetRead {
  names: string[];
  index: number;
  slice: LineSlice;
  /** XLSX cells shown as their formula because the file holds no computed value for them. */
  formulas?: { count: number; first: string };
}

/** Collects rows start..end as CSV lines while they fit the budget, and counts the sheet's rows. */
class Rows {
  private content = '';
  private lastKept = 0;
  /** The last row that holds anything. */
  last = 0;

  constructor(
    private readonly start: number,
    private readonly end: number,
    private readonly budget: number,
  ) {}

  add(row: number, cells: string[]): void {
    let width = cells.length;
    while (width > 0 && cells[width - 1] === '') width--;
    if (width === 0) return;
    this.last = Math.max(this.last, row);
    if (row < this.start || row > this.end || this.content.length > this.budget) return;
    const from = Math.max(this.lastKept + 1, this.start);
    if (row > from) this.content += '\n'.repeat(Math.min(row - from, this.budget + 1));
    this.content += `${cells.slice(0, Math.min(width, DOC_LIMITS.columns)).map(csvCell).join(',')}\n`;
    this.lastKept = row;
  }

  slice(): LineSlice {
    if (this.start > this.last) return { content: '', totalLines: this.last, startLine: this.last === 0 ? 0 : this.start, endLine: this.last === 0 ? 0 : this.start - 1, truncated: false };
    return cut(this.content, this.start, this.last, this.budget);
  }
}

function csvCell(value: string): string {
  const v = value.replace(/\r\n|[\r\n]/g, ' ');
  return /[",]/.test(v) || v !== v.trim() ? `"${v.replace(/"/g, '""')}"` : v;
}

/** 1-based index of the sheet a call asked for (a name, any case, or a number), or a teaching error. */
function pick(names: string[], wanted: string | undefined, shown: string): number {
  if (wanted === undefined || wanted.trim() === '') return 0;
  const w = wanted.trim();
  const exact = names.findIndex((n) => n.toLowerCase() === w.toLowerCase());
  if (exact !== -1) return exact;
  if (/^\d+$/.test(w) && Number(w) >= 1 && Number(w) <= names.length) return Number(w) - 1;
  const list = names.slice(0, 30).map((n, i) => `${i + 1}: "${n}"`).join(', ');
  throw shedError('INVALID_PARAMETER', `${shown} has no sheet ${JSON.stringify(w)}. Its sheets are ${list}${names.length > 30 ? ', ...' : ''}.`, {
    details: { parameter: 'sheet', received: wanted, expected: names.slice(0, 100) },
    hint: `Give a sheet name or its number, e.g. sheet=${JSON.stringify(names[0] ?? 'Sheet1')} or sheet="1".`,
  });
}

// ---------------------------------------------------------------------------------------------
// XLSX

/** Built-in number formats that are dates (ECMA-376 18.8.30). */
const DATE_FORMATS = new Set([14, 15, 16, 17, 18, 19, 20, 21, 22, 45, 46, 47]);

function dateStyles(zip: DocumentZip): Set<number> {
  const custom = new Map<number, string>();
  const styles: number[] = [];
  let inXfs = false;
  tokenize(zip.text('xl/styles.xml') ?? '', {
    open(name, attrs) {
      const n = local(name);
      if (n === 'numFmt') custom.set(Number(attrs.numFmtId), attrs.formatCode ?? '');
      else if (n === 'cellXfs') inXfs = true;
      else if (n === 'xf' && inXfs) styles.push(Number(attrs.numFmtId ?? 0));
    },
    close(name) {
      if (local(name) === 'cellXfs') inXfs = false;
    },
  });
  const isDate = (id: number) => DATE_FORMATS.has(id) || /[dmy]/i.test((custom.get(id) ?? '').replace(/"[^"]*"|\[[^\]]*\]|\\./g, ''));
  const out = new Set<number>();
  styles.forEach((fmt, i) => isDate(fmt) && out.add(i));
  return out;
}

function excelDate(serial: number): string {
  const ms = Math.round((serial - 25569) * 86400 * 1000);
  if (!Number.isFinite(ms) || serial < 1 || serial > 2958465) return String(serial);
  const iso = new Date(ms).toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 19).replace('T', ' ');
}

function columnIndex(ref: string): number {
  let n = 0;
  for (let i = 0; i < ref.length; i++) {
    const c = ref.charCodeAt(i);
    if (c < 65 || c > 90) break;
    n = n * 26 + (c - 64);
  }
  return n - 1;
}

export function xlsxSheet(zip: DocumentZip, shown: string, wanted: string | undefined, start: number, end: number, budget: number): SheetRead {
  const sheets: Array<{ name: string; rid: string }> = [];
  const workbook = zip.text('xl/workbook.xml');
  if (workbook === undefined) throw damaged(shown, 'it has no xl/workbook.xml');
  tokenize(workbook, {
    open(name, attrs) {
      if (local(name) === 'sheet' && sheets.length < DOC_LIMITS.parts) sheets.push({ name: attrs.name ?? `Sheet${sheets.length + 1}`, rid: attrs['r:id'] ?? '' });
    },
  });
  if (sheets.length === 0) throw damaged(shown, 'its workbook lists no sheet');
  const names = sheets.map((s) => s.name);
  const index = pick(names, wanted, shown);
  const rels = relationships(zip, 'xl/_rels/workbook.xml.rels', 'xl');
  const member = rels.get(sheets[index]!.rid) ?? `xl/worksheets/sheet${index + 1}.xml`;
  const strings: string[] = [];
  let si: string[] | undefined;
  let inT = false;
  let phonetic = 0;
  tokenize(zip.text('xl/sharedStrings.xml') ?? '', {
    open(name) {
      const n = local(name);
      if (n === 'si') si = [];
      else if (n === 't') inT = true;
      else if (n === 'rPh') phonetic++;
    },
    close(name) {
      const n = local(name);
      if (n === 'si' && si) {
        strings.push(si.join(''));
        si = undefined;
      } else if (n === 't') inT = false;
      else if (n === 'rPh') phonetic--;
    },
    text(t) {
      if (si && inT && phonetic === 0) si.push(t);
    },
  });
  const dates = dateStyles(zip);
  const sheetXml = zip.text(path.posix.normalize(member));
  if (sheetXml === undefined) throw damaged(shown, `its sheet "${names[index]}" is missing`);
  const rows = new Rows(start, end, budget);
  let rowNumber = 0;
  let cells: string[] = [];
  let col = -1;
  let type = '';
  let style = 0;
  let value = '';
  let inValue = false;
  let formula = '';
  let inFormula = false;
  // A <v> present but empty is a computed empty string (=IF(..., "")), not a missing value.
  let sawValue = false;
  let sharedIndex: string | undefined;
  let ref = '';
  // The text of each shared formula, by its si: later cells of the group carry only the index.
  const shared = new Map<string, string>();
  let uncomputed = 0;
  let firstUncomputed = '';
  tokenize(sheetXml, {
    open(name, attrs) {
      const n = local(name);
      if (n === 'row') {
        rowNumber = attrs.r !== undefined && Number(attrs.r) > rowNumber ? Number(attrs.r) : rowNumber + 1;
        cells = [];
        col = -1;
      } else if (n === 'c') {
        col = attrs.r !== undefined ? columnIndex(attrs.r) : col + 1;
        type = attrs.t ?? 'n';
        style = Number(attrs.s ?? 0);
        value = '';
        formula = '';
        sawValue = false;
        sharedIndex = undefined;
        ref = attrs.r ?? '';
      } else if (n === 'v' || (n === 't' && type === 'inlineStr')) {
        inValue = true;
        sawValue = true;
      } else if (n === 'f') {
        inFormula = true;
        if (attrs.t === 'shared' && attrs.si !== undefined) sharedIndex = attrs.si;
      }
    },
    close(name) {
      const n = local(name);
      if (n === 'v' || n === 't') inValue = false;
      else if (n === 'f') {
        inFormula = false;
        if (sharedIndex !== undefined && formula !== '' && !shared.has(sharedIndex) && shared.size < 10_000) shared.set(sharedIndex, `${formula} (in ${ref})`);
      } else if (n === 'c') {
        if (col >= 0 && col < DOC_LIMITS.columns && !sawValue && (formula !== '' || sharedIndex !== undefined)) {
          // No cached value: the formula itself, so the cell is not read as empty.
          const text = formula !== '' ? `=${formula}` : `=(shared formula of ${shared.get(sharedIndex!) ?? `group ${sharedIndex}`})`;
          while (cells.length < col) cells.push('');
          cells[col] = text;
          if (uncomputed++ === 0) firstUncomputed = `${ref || `row ${rowNumber}`} ${text}`;
        } else if (col >= 0 && col < DOC_LIMITS.columns && value !== '') {
          while (cells.length < col) cells.push('');
          cells[col] = cellValue(type, value, style, strings, dates);
        }
      } else if (n === 'row') rows.add(rowNumber, cells);
    },
    text(t) {
      if (inValue) value += t;
      else if (inFormula && formula.length < 8192) formula += t;
    },
  });
  return { names, index, slice: rows.slice(), ...(uncomputed > 0 ? { formulas: { count: uncomputed, first: firstUncomputed } } : {}) };
}

function cellValue(type: string, raw: string, style: number, strings: string[], dates: Set<number>): string {
  switch (type) {
    case 's':
      return strings[Number(raw)] ?? '';
    case 'b':
      return raw === '1' ? 'TRUE' : 'FALSE';
    case 'n':
      return dates.has(style) && raw.trim() !== '' ? excelDate(Number(raw)) : raw;
    default:
      return raw;
  }
}

// ---------------------------------------------------------------------------------------------
// ODS

export function odsSheet(zip: DocumentZip, shown: string, wanted: string | undefined, start: number, end: number, budget: number): SheetRead {
  const content = zip.text('content.xml');
  if (content === undefined) throw damaged(shown, 'it has no content.xml');
  const names: string[] = [];
  // Sheet names first (cheap: a regex over the table start tags), so the choice is known before rows are kept.
  for (const m of content.matchAll(/<table:table\b[^>]*?table:name="([^"]*)"/g)) if (names.length < DOC_LIMITS.parts) names.push(decodeXml(m[1]!));
  if (names.length === 0) throw damaged(shown, 'it holds no sheet');
  const index = pick(names, wanted, shown);
  const rows = new Rows(start, end, budget);
  let table = -1;
  let row = 0;
  let rowRepeat = 1;
  let cells: string[] = [];
  let cellRepeat = 1;
  let cellText: string[] | undefined;
  let cellFormula = '';
  let cellValue = '';
  let pendingEmpty = 0;
  let uncomputed = 0;
  let firstUncomputed = '';
  tokenize(content, {
    open(name, attrs, selfClosing) {
      if (name === 'table:table') {
        table++;
        return;
      }
      if (table !== index) return;
      if (name === 'table:table-row') {
        rowRepeat = Math.max(1, Number(attrs['table:number-rows-repeated'] ?? 1) || 1);
        cells = [];
      } else if (name === 'table:table-cell' || name === 'table:covered-table-cell') {
        cellRepeat = Math.max(1, Number(attrs['table:number-columns-repeated'] ?? 1) || 1);
        cellText = [];
        cellFormula = (attrs['table:formula'] ?? '').slice(0, 8192);
        cellValue = attrs['office:value'] ?? attrs['office:date-value'] ?? attrs['office:time-value'] ?? attrs['office:boolean-value'] ?? attrs['office:string-value'] ?? '';
        if (selfClosing) closeCell();
      } else if (name === 'text:p' && cellText && cellText.length > 0) cellText.push(' ');
      else if (name === 'text:s' && cellText) cellText.push(' '.repeat(Math.min(100, Number(attrs['text:c'] ?? 1) || 1)));
    },
    close(name) {
      if (table !== index) return;
      if (name === 'table:table-cell' || name === 'table:covered-table-cell') closeCell();
      else if (name === 'table:table-row') {
        const filled = cells.some((c) => c !== '');
        if (!filled) {
          pendingEmpty += rowRepeat; // trailing empty rows never count
          return;
        }
        row += pendingEmpty;
        pendingEmpty = 0;
        for (let k = 0; k < Math.min(rowRepeat, DOC_LIMITS.repeat); k++) rows.add(++row, cells);
      }
    },
    text(t) {
      if (table === index && cellText) cellText.push(t);
    },
  });
  function closeCell(): void {
    if (!cellText) return;
    let text = cellText.join('').trim();
    cellText = undefined;
    // No displayed text: the stored value, else (a formula never computed) the formula itself.
    if (text === '' && cellFormula !== '' && cellValue !== '') text = cellValue;
    else if (text === '' && cellFormula !== '') {
      // A formula saved without its displayed value: the formula itself (without the of: namespace).
      text = cellFormula.replace(/^of:/, '');
      if (uncomputed++ === 0) firstUncomputed = `row ${row + pendingEmpty + 1} ${text}`;
    }
    if (text === '') {
      for (let k = 0; k < cellRepeat && cells.length < DOC_LIMITS.columns; k++) cells.push('');
      return;
    }
    for (let k = 0; k < Math.min(cellRepeat, DOC_LIMITS.repeat) && cells.length < DOC_LIMITS.columns; k++) cells.push(text);
  }
  return { names, index, slice: rows.slice(), ...(uncomputed > 0 ? { formulas: { count: uncomputed, first: firstUncomputed } } : {}) };
}

function decodeXml(s: string): string {
  return s.replace(/&(lt|gt|amp|quot|apos);/g, (_m, e: string) => ({ lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" })[e]!);
}
