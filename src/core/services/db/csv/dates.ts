/**
 * Date recognition for CSV import. ISO 8601 dates and date-times are recognised everywhere; other
 * forms only where the caller asked (date_columns / date_format): "dayfirst" (31/12/2024,
 * 31.12.24), "monthfirst" (12/31/2024), or an explicit strptime pattern ("%d/%m/%Y %H:%M").
 * Results are ISO text ("2024-12-31", "2024-12-31 08:30:00"), the form SQLite's date functions read.
 */
import { shedError } from '../../../base/errors.js';

export type DateParser = (text: string) => string | undefined;

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

function daysIn(year: number, month: number): number {
  return [31, year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
}

function validDate(y: number, m: number, d: number): boolean {
  return y >= 1 && y <= 9999 && m >= 1 && m <= 12 && d >= 1 && d <= daysIn(y, m);
}

/** Two-digit years as Python reads them: 00-68 → 2000s, 69-99 → 1900s. */
function fullYear(text: string): number {
  const y = Number(text);
  if (text.length > 2) return y;
  return y < 69 ? 2000 + y : 1900 + y;
}

function iso(y: number, m: number, d: number, time?: { h: number; mi: number; s: number; frac?: string }): string | undefined {
  if (!validDate(y, m, d)) return undefined;
  const date = `${String(y).padStart(4, '0')}-${pad2(m)}-${pad2(d)}`;
  if (time === undefined) return date;
  if (time.h > 23 || time.mi > 59 || time.s > 60) return undefined;
  return `${date} ${pad2(time.h)}:${pad2(time.mi)}:${pad2(time.s)}${time.frac ? `.${time.frac}` : ''}`;
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATETIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?$/;

/** 1 = ISO date, 2 = ISO date-time, 0 = neither. The text is stored as it is. */
export function isoKind(text: string): 0 | 1 | 2 {
  const n = text.length;
  if (n === 10) {
    const m = ISO_DATE.exec(text);
    return m && validDate(Number(m[1]), Number(m[2]), Number(m[3])) ? 1 : 0;
  }
  if (n < 16 || n > 35 || text.charCodeAt(4) !== 45) return 0;
  const m = ISO_DATETIME.exec(text);
  if (!m || !validDate(Number(m[1]), Number(m[2]), Number(m[3]))) return 0;
  return Number(m[4]) <= 23 && Number(m[5]) <= 59 && Number(m[6] ?? 0) <= 60 ? 2 : 0;
}

const DMY = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4}|\d{2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2}))?)?$/;

function ordered(dayFirst: boolean): DateParser {
  return (text) => {
    const t = text.trim();
    if (isoKind(t) !== 0) return t;
    const m = DMY.exec(t);
    if (!m) return undefined;
    const a = Number(m[1]);
    const b = Number(m[2]);
    const time = m[4] === undefined ? undefined : { h: Number(m[4]), mi: Number(m[5]), s: Number(m[6] ?? 0) };
    return dayFirst ? iso(fullYear(m[3]!), b, a, time) : iso(fullYear(m[3]!), a, b, time);
  };
}

/** For date_columns without date_format: day-first or month-first, whichever the sample proves. */
export function guessOrder(samples: string[]): 'dayfirst' | 'monthfirst' | undefined {
  let dayFirst = false;
  let monthFirst = false;
  for (const s of samples) {
    const m = DMY.exec(s.trim());
    if (!m) continue;
    if (Number(m[1]) > 12) dayFirst = true;
    if (Number(m[2]) > 12) monthFirst = true;
  }
  if (dayFirst && !monthFirst) return 'dayfirst';
  if (monthFirst && !dayFirst) return 'monthfirst';
  return undefined;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const MONTH_NAMES = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

const DIRECTIVES: Record<string, { re: string; key: string }> = {
  d: { re: '(\\d{1,2})', key: 'd' },
  m: { re: '(\\d{1,2})', key: 'm' },
  Y: { re: '(\\d{4})', key: 'Y' },
  y: { re: '(\\d{2})', key: 'y' },
  H: { re: '(\\d{1,2})', key: 'H' },
  M: { re: '(\\d{1,2})', key: 'M' },
  S: { re: '(\\d{1,2})', key: 'S' },
  f: { re: '(\\d{1,6})', key: 'f' },
  b: { re: '([A-Za-z]{3})', key: 'b' },
  B: { re: '([A-Za-z]{3,9})', key: 'B' },
};

/** Compiles a strptime pattern (%d %m %Y %y %H %M %S %f %b %B %%) into a parser. */
export function compilePattern(pattern: string): DateParser {
  let re = '^';
  const keys: string[] = [];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c !== '%') {
      re += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      continue;
    }
    const d = pattern[++i];
    if (d === '%') {
      re += '%';
      continue;
    }
    const dir = d === undefined ? undefined : DIRECTIVES[d];
    if (dir === undefined) {
      throw shedError('INVALID_PARAMETER', `'date_format' ${JSON.stringify(pattern)} uses %${d ?? ''}, which is not supported.`, {
        details: { parameter: 'date_format', received: pattern, supported: Object.keys(DIRECTIVES).map((k) => `%${k}`) },
        hint: 'Use "dayfirst", "monthfirst", or a pattern with %d %m %Y %y %H %M %S %f %b %B, e.g. date_format="%d/%m/%Y".',
      });
    }
    re += dir.re;
    keys.push(dir.key);
  }
  if (!keys.some((k) => k === 'Y' || k === 'y') || !keys.some((k) => k === 'm' || k === 'b' || k === 'B') || !keys.includes('d')) {
    throw shedError('INVALID_PARAMETER', `'date_format' ${JSON.stringify(pattern)} must contain a day (%d), a month (%m, %b or %B) and a year (%Y or %y).`, {
      details: { parameter: 'date_format', received: pattern },
      hint: 'Example: date_format="%d/%m/%Y" for 31/12/2024, or "dayfirst" to accept the common day-first forms.',
    });
  }
  const rx = new RegExp(`${re}$`, 'i');
  const hasTime = keys.includes('H');
  return (text) => {
    const m = rx.exec(text.trim());
    if (!m) return undefined;
    const v: Record<string, string> = {};
    keys.forEach((k, i) => {
      v[k] = m[i + 1]!;
    });
    let month = v.m !== undefined ? Number(v.m) : 0;
    const name = (v.b ?? v.B)?.toLowerCase();
    if (name !== undefined) {
      month = (name.length === 3 ? MONTHS.indexOf(name) : MONTH_NAMES.indexOf(name)) + 1;
      if (month === 0) return undefined;
    }
    const year = v.Y !== undefined ? Number(v.Y) : fullYear(v.y!);
    const time = hasTime ? { h: Number(v.H), mi: Number(v.M ?? 0), s: Number(v.S ?? 0), frac: v.f } : undefined;
    return iso(year, month, Number(v.d), time);
  };
}

/** The parser for a date_format value: dayfirst / monthfirst / iso / a strptime pattern. */
export function dateParser(format: string): DateParser {
  const f = format.trim().toLowerCase();
  if (f === 'dayfirst' || f === 'day_first' || f === 'dmy') return ordered(true);
  if (f === 'monthfirst' || f === 'month_first' || f === 'mdy') return ordered(false);
  if (f === 'iso' || f === 'ymd') return (t) => (isoKind(t.trim()) !== 0 ? t.trim() : undefined);
  if (!format.includes('%')) {
    throw shedError('INVALID_PARAMETER', `'date_format' must be "dayfirst", "monthfirst", "iso" or a strptime pattern like "%d/%m/%Y"; got ${JSON.stringify(format)}.`, {
      details: { parameter: 'date_format', received: format },
      hint: 'Example: date_format="dayfirst" (31/12/2024) or date_format="%d.%m.%Y".',
    });
  }
  const parse = compilePattern(format);
  return (t) => parse(t) ?? (isoKind(t.trim()) !== 0 ? t.trim() : undefined);
}

export const dayFirstParser = (): DateParser => ordered(true);
export const monthFirstParser = (): DateParser => ordered(false);
