/**
 * The decimal mark of a CSV import when the call does not give one (decimal omitted). European
 * files write 1.234,56 with ";" between fields; read with a decimal point those columns stay TEXT,
 * and SQLite's SUM over TEXT then reads each value's leading "1.234" silently: a wrong total, no
 * error. So the sample decides, and only when it is unambiguous:
 *
 * - a comma is the decimal mark when some column's values all read as decimal-comma numbers and at
 *   least one of them can only be read that way (a comma not followed by exactly three digits, or a
 *   dot before the comma: "7,5", "1.234,56");
 * - never for a ","-delimited file (a quoted "1,234" there is usually a thousands separator);
 * - never when another column holds numbers that only a decimal point reads ("3.14"): the marks
 *   are mixed, nothing is guessed, and the answer says so.
 */
import { T_REAL, valueMask, type ValueRules } from './values.js';

const POINT: ValueRules = { decimalComma: false, anyColumnDates: undefined };
const COMMA: ValueRules = { decimalComma: true, anyColumnDates: undefined };
/** A comma that cannot be a thousands separator: not followed by exactly 3 digits, or after a dot group. */
const ONLY_COMMA = /,(\d{0,2}|\d{4,})([eE][+-]?\d+)?$|\.\d{3},\d+$/;
const SAMPLE = 500;

export interface DecimalGuess {
  decimal: '.' | ',';
  /** Columns read as decimal-comma numbers (when ","), or that would be (when refused). */
  commaColumns: string[];
  /** Columns only a decimal point reads, when the marks are mixed. */
  pointColumns: string[];
  /** True when decimal-comma columns were seen but nothing was applied (mixed marks, or "," delimiter). */
  refused: boolean;
}

export function guessDecimal(names: readonly string[], sample: readonly (readonly string[])[], delimiter: string): DecimalGuess {
  const rows = sample.slice(0, SAMPLE);
  const commaColumns: string[] = [];
  const pointColumns: string[] = [];
  names.forEach((name, i) => {
    const values = rows.map((r) => (r[i] ?? '').trim()).filter((v) => v !== '');
    if (values.length === 0) return;
    const comma = values.every((v) => valueMask(v, COMMA) & T_REAL);
    const point = values.every((v) => valueMask(v, POINT) & T_REAL);
    if (comma && !point && values.some((v) => ONLY_COMMA.test(v))) commaColumns.push(name);
    else if (point && !comma) pointColumns.push(name);
  });
  if (commaColumns.length === 0) return { decimal: '.', commaColumns, pointColumns, refused: false };
  const refused = delimiter === ',' || pointColumns.length > 0;
  return { decimal: refused ? '.' : ',', commaColumns, pointColumns, refused };
}
