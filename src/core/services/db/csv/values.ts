/**
 * Column types of a CSV import, decided from the values. Each value gets a mask of the types it
 * fits (an integer also fits REAL; an ISO date also fits DATETIME); a column's type is the most
 * specific type every value fits. Empty fields are NULL; NA markers (NA, N/A, NULL, NaN, #N/A ...)
 * are NULL in typed columns and kept as text in TEXT columns.
 *
 * Deliberately TEXT: numbers with leading zeros ("007", zip codes and ids keep their zeros),
 * integers beyond 64 bits, "inf"/"nan", numbers with thousands separators unless decimal=",".
 */
import { isoKind, type DateParser } from './dates.js';

export const T_INT = 1;
export const T_REAL = 2;
export const T_DATE = 4;
export const T_DATETIME = 8;
export const T_ALL = 15;

export type ColumnType = 'INTEGER' | 'REAL' | 'DATE' | 'DATETIME' | 'TEXT';

export const NA_TOKENS = new Set(['NA', 'N/A', 'n/a', 'NULL', 'null', 'None', 'NaN', 'nan', '#N/A', '#NA']);

export interface ValueRules {
  decimalComma: boolean;
  /** date_format given without date_columns: every column may turn out to hold such dates. */
  anyColumnDates: DateParser | undefined;
}

const REAL_DOT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const REAL_COMMA = /^[+-]?(?:\d{1,3}(?:[. \u00a0\u202f]\d{3})+|\d+)(?:,\d*)?(?:[eE][+-]?\d+)?$/;
const GROUPED_INT = /^[+-]?\d{1,3}(?:[. \u00a0\u202f]\d{3})+$/;
const GROUP_SEPARATORS = /[. \u00a0\u202f]/g;
const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

function trimmed(s: string): string {
  const n = s.length;
  return n > 0 && (s.charCodeAt(0) <= 32 || s.charCodeAt(n - 1) <= 32) ? s.trim() : s;
}

/** Integer value (number, or decimal text beyond 2^53 that SQLite stores exactly), or undefined. */
export function toInteger(raw: string, rules: ValueRules): number | string | undefined {
  let s = trimmed(raw);
  if (rules.decimalComma && GROUPED_INT.test(s)) s = s.replace(GROUP_SEPARATORS, '');
  const n = s.length;
  if (n === 0) return undefined;
  let i = 0;
  const c0 = s.charCodeAt(0);
  if (c0 === 45 || c0 === 43) i = 1;
  if (i === n) return undefined;
  if (s.charCodeAt(i) === 48 && n - i > 1) return undefined; // leading zero: an identifier, keep as text
  for (let j = i; j < n; j++) {
    const c = s.charCodeAt(j);
    if (c < 48 || c > 57) return undefined;
  }
  const digits = n - i;
  if (digits <= 15) return Number(s);
  if (digits > 19) return undefined;
  const big = BigInt(s);
  if (big > INT64_MAX || big < INT64_MIN) return undefined;
  return big.toString();
}

/** Real value, or undefined (integers count as reals). */
export function toReal(raw: string, rules: ValueRules): number | undefined {
  let s = trimmed(raw);
  if (s.length === 0) return undefined;
  if (rules.decimalComma) {
    if (!REAL_COMMA.test(s)) return undefined;
    s = s.replace(GROUP_SEPARATORS, '').replace(',', '.');
  } else if (!REAL_DOT.test(s)) {
    return undefined;
  }
  // A whole number too long for 64 bits is an identifier (a double would round its digits).
  if (s.length > 19 && /^[+-]?\d+$/.test(s)) return undefined;
  // "007.5" and "00" are identifiers, not numbers
  const body = s.charCodeAt(0) === 45 || s.charCodeAt(0) === 43 ? s.slice(1) : s;
  if (body.length > 1 && body.charCodeAt(0) === 48 && body.charCodeAt(1) >= 48 && body.charCodeAt(1) <= 57) return undefined;
  const v = Number(s);
  return Number.isFinite(v) ? v : undefined;
}

/** The types a non-empty value fits. */
export function valueMask(raw: string, rules: ValueRules): number {
  if (NA_TOKENS.has(raw)) return T_ALL;
  if (toInteger(raw, rules) !== undefined) return T_INT | T_REAL;
  if (toReal(raw, rules) !== undefined) return T_REAL;
  const k = isoKind(trimmed(raw));
  if (k === 1) return T_DATE | T_DATETIME;
  if (k === 2) return T_DATETIME;
  if (rules.anyColumnDates) {
    const parsed = rules.anyColumnDates(raw);
    if (parsed !== undefined) return parsed.length === 10 ? T_DATE | T_DATETIME : T_DATETIME;
  }
  return 0;
}

/** The column type for the AND of its values' masks; a column with no values at all is TEXT. */
export function typeOf(mask: number, sawValue: boolean): ColumnType {
  if (!sawValue) return 'TEXT';
  if (mask & T_INT) return 'INTEGER';
  if (mask & T_REAL) return 'REAL';
  if (mask & T_DATE) return 'DATE';
  if (mask & T_DATETIME) return 'DATETIME';
  return 'TEXT';
}

/** Marker returned when a value does not fit its column's type. */
export const MISFIT = Symbol('misfit');
export type Bound = string | number | null;

/** Converts one CSV field for a column; MISFIT when it does not fit the column's type. */
export type Converter = (raw: string) => Bound | typeof MISFIT;

export function converter(type: ColumnType, rules: ValueRules, forcedDates: DateParser | undefined, dateFailures: { count: number }): Converter {
  if (forcedDates !== undefined) {
    // date_columns: convert what parses, keep the rest as it is (never widens)
    return (raw) => {
      if (raw === '' || NA_TOKENS.has(raw)) return null;
      const iso = forcedDates(raw);
      if (iso !== undefined) return iso;
      dateFailures.count++;
      return raw;
    };
  }
  switch (type) {
    case 'INTEGER':
      return (raw) => {
        if (raw === '') return null;
        const v = toInteger(raw, rules);
        if (v !== undefined) return v;
        return NA_TOKENS.has(raw) ? null : MISFIT;
      };
    case 'REAL':
      return (raw) => {
        if (raw === '') return null;
        const v = toReal(raw, rules);
        if (v !== undefined) return v;
        return NA_TOKENS.has(raw) ? null : MISFIT;
      };
    case 'DATE':
    case 'DATETIME': {
      const any = rules.anyColumnDates;
      return (raw) => {
        if (raw === '') return null;
        const t = trimmed(raw);
        if (isoKind(t) !== 0) return t;
        if (any) {
          const iso = any(raw);
          if (iso !== undefined) return iso;
        }
        return NA_TOKENS.has(raw) ? null : MISFIT;
      };
    }
    default:
      return (raw) => (raw === '' ? null : raw);
  }
}
