/**
 * Where CSV records go during an import: each field is converted for its column and handed to the
 * bulk inserter. Rows come either as string records (csv-parse, other encodings, the sample) or as
 * regions of raw UTF-8 lines, which are split here on bytes: integers, plain decimals, ISO dates
 * and text are recognised and copied without making a JavaScript string per field. Anything less
 * common goes through the string converters, so both paths store exactly the same values.
 *
 * When a value does not fit its column's type the sink stops inserting and only learns types
 * ("scanning"): the caller then rolls back and inserts again with the widened types.
 */
import type { RowInserter } from '../sqldb.js';
import type { DateParser } from './dates.js';
import { MISFIT, T_DATE, T_DATETIME, T_INT, T_REAL, valueMask, type ColumnType, type Converter, type ValueRules } from './values.js';

const B_STRING = 0;
const B_TEXT = 1;
const B_INT = 2;
const B_REAL = 3;
const B_ISODATE = 4;

/** The mask of a column whose values so far all fitted type t (an INTEGER column can still become REAL). */
export function startMask(t: ColumnType): number {
  return { INTEGER: T_INT | T_REAL, REAL: T_REAL, DATE: T_DATE | T_DATETIME, DATETIME: T_DATETIME, TEXT: 0 }[t];
}

export interface SinkCounters {
  rows: number;
  padded: number;
  truncated: number;
  firstRagged: number;
  blank: number;
}

export class RowSink {
  readonly counters: SinkCounters = { rows: 0, padded: 0, truncated: 0, firstRagged: 0, blank: 0 };
  /** Per-column type masks, once a value misfitted (then nothing more is inserted). */
  masks: number[] | undefined;
  private readonly width: number;
  private readonly byteKind: Uint8Array;
  private readonly delimByte: number;

  constructor(
    private readonly types: ColumnType[],
    private readonly forced: (DateParser | undefined)[],
    private readonly convert: Converter[],
    private readonly rules: ValueRules,
    private readonly inserter: RowInserter,
    private readonly delimiter: string,
  ) {
    this.width = types.length;
    this.byteKind = new Uint8Array(types.map((t, i) => {
      if (forced[i] !== undefined) return B_STRING;
      if (t === 'TEXT') return B_TEXT;
      if (t === 'INTEGER') return B_INT;
      if (t === 'REAL') return rules.decimalComma ? B_STRING : B_REAL;
      return B_ISODATE;
    }));
    // Byte splitting needs a one-byte delimiter; anything else (never sniffed) uses string records.
    this.delimByte = Buffer.byteLength(delimiter) === 1 ? delimiter.charCodeAt(0) : -1;
  }

  get canTakeBytes(): boolean {
    return this.delimByte !== -1;
  }

  /** One string record. */
  record(r: string[]): void {
    const c = this.counters;
    c.rows++;
    this.ragged(r.length);
    if (this.masks !== undefined) {
      this.scan(r);
      return;
    }
    const width = this.width;
    const ins = this.inserter;
    for (let i = 0; i < width; i++) {
      const v = r[i];
      if (v === undefined) {
        ins.value(null);
        continue;
      }
      const b = this.convert[i]!(v);
      if (b === MISFIT) {
        this.misfit(r);
        return;
      }
      ins.value(b);
    }
    ins.endRow();
  }

  /** Whole lines of raw UTF-8 without quotes, from `start` to `end` (a final line may lack its newline). */
  bytes(buf: Buffer, start: number, end: number): void {
    const width = this.width;
    const ins = this.inserter;
    const delim = this.delimByte;
    const kinds = this.byteKind;
    const c = this.counters;
    let nd = buf.indexOf(delim, start);
    if (nd === -1) nd = end;
    let p = start;
    while (p < end) {
      let nl = buf.indexOf(10, p);
      if (nl === -1 || nl >= end) nl = end;
      let le = nl;
      if (le > p && buf[le - 1] === 13) le--;
      if (le === p) {
        c.blank++;
        p = nl + 1;
        continue;
      }
      c.rows++;
      if (this.masks !== undefined) {
        const r = buf.toString('utf8', p, le).split(this.delimiter);
        this.ragged(r.length);
        this.scan(r);
        p = nl + 1;
        continue;
      }
      let col = 0;
      let a = p;
      let misfit = false;
      for (;;) {
        if (nd < a) {
          nd = buf.indexOf(delim, a);
          if (nd === -1) nd = end;
        }
        const fe = nd < le ? nd : le;
        if (col < width && !misfit) {
          if (a === fe) {
            ins.value(null);
          } else {
            const k = kinds[col];
            let done = false;
            if (k === B_TEXT) {
              ins.bytes(buf, a, fe);
              done = true;
            } else if (k === B_INT) {
              const v = intBytes(buf, a, fe);
              if (v !== undefined) {
                ins.value(v);
                done = true;
              }
            } else if (k === B_REAL) {
              if (realBytes(buf, a, fe)) {
                ins.value(Number(buf.toString('latin1', a, fe)));
                done = true;
              }
            } else if (k === B_ISODATE) {
              if (isoDateBytes(buf, a, fe)) {
                ins.bytes(buf, a, fe);
                done = true;
              }
            }
            if (!done) {
              const b = this.convert[col]!(buf.toString('utf8', a, fe));
              if (b === MISFIT) misfit = true;
              else ins.value(b);
            }
          }
        }
        col++;
        if (fe === le) break;
        a = fe + 1;
      }
      this.ragged(col);
      if (misfit) {
        this.misfit(buf.toString('utf8', p, le).split(this.delimiter));
      } else {
        for (let i = col; i < width; i++) ins.value(null);
        ins.endRow();
      }
      p = nl + 1;
    }
  }

  private ragged(fields: number): void {
    if (fields === this.width) return;
    const c = this.counters;
    if (fields < this.width) c.padded++;
    else c.truncated++;
    if (c.firstRagged === 0) c.firstRagged = c.rows;
  }

  /** First misfit: from now on only learn the types (the caller rolls the inserts back). */
  private misfit(r: string[]): void {
    this.masks = this.types.map(startMask);
    this.scan(r);
  }

  private scan(r: string[]): void {
    const masks = this.masks!;
    const n = Math.min(r.length, this.width);
    for (let i = 0; i < n; i++) {
      const v = r[i]!;
      if (v !== '' && this.forced[i] === undefined) masks[i]! &= valueMask(v, this.rules);
    }
  }
}

/** A plain integer of at most 15 digits (no sign other than '-', no leading zero, no spaces). */
function intBytes(buf: Buffer, a: number, b: number): number | undefined {
  let i = a;
  let neg = false;
  if (buf[i] === 45) {
    neg = true;
    i++;
  }
  const digits = b - i;
  if (digits < 1 || digits > 15) return undefined;
  if (buf[i] === 48 && digits > 1) return undefined;
  let v = 0;
  for (; i < b; i++) {
    const d = buf[i]! - 48;
    if (d < 0 || d > 9) return undefined;
    v = v * 10 + d;
  }
  return neg ? -v : v;
}

/** A plain decimal number: -?digits[.digits][e[+-]digits], no leading zero before another digit. */
function realBytes(buf: Buffer, a: number, b: number): boolean {
  let i = a;
  if (buf[i] === 45 || buf[i] === 43) i++;
  const first = i;
  let digits = 0;
  while (i < b && buf[i]! >= 48 && buf[i]! <= 57) {
    i++;
    digits++;
  }
  if (digits > 1 && buf[first] === 48) return false;
  if (i < b && buf[i] === 46) {
    i++;
    while (i < b && buf[i]! >= 48 && buf[i]! <= 57) {
      i++;
      digits++;
    }
  }
  if (digits === 0) return false;
  if (i < b && (buf[i] === 101 || buf[i] === 69)) {
    i++;
    if (i < b && (buf[i] === 43 || buf[i] === 45)) i++;
    const e0 = i;
    while (i < b && buf[i]! >= 48 && buf[i]! <= 57) i++;
    if (i === e0 || i - e0 > 3) return false; // a huge exponent may overflow: let the string path decide
  }
  return i === b;
}

const DAYS = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** YYYY-MM-DD with a real calendar date. */
function isoDateBytes(buf: Buffer, a: number, b: number): boolean {
  if (b - a !== 10 || buf[a + 4] !== 45 || buf[a + 7] !== 45) return false;
  let y = 0;
  for (let i = a; i < a + 4; i++) {
    const d = buf[i]! - 48;
    if (d < 0 || d > 9) return false;
    y = y * 10 + d;
  }
  const m1 = buf[a + 5]! - 48;
  const m2 = buf[a + 6]! - 48;
  const d1 = buf[a + 8]! - 48;
  const d2 = buf[a + 9]! - 48;
  if (m1 < 0 || m1 > 1 || m2 < 0 || m2 > 9 || d1 < 0 || d1 > 3 || d2 < 0 || d2 > 9) return false;
  const m = m1 * 10 + m2;
  const d = d1 * 10 + d2;
  if (y < 1 || m < 1 || m > 12 || d < 1 || d > DAYS[m]!) return false;
  return m !== 2 || d < 29 || (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0));
}
