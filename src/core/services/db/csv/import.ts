/**
 * CSV → SQLite table, streaming, in one transaction.
 *
 * Types in one pass (usually): the first SAMPLE_ROWS records decide each column's type, the table
 * is created and every record is converted and inserted as it streams by. If a later value does not
 * fit its column (an "abc" in an INTEGER column), the inserts are rolled back, the rest of the file
 * is only scanned to learn every column's final type, and a second pass inserts everything with
 * those types. So a clean file is read once, any file at most twice plus a partial pass, and stored
 * values are always exactly what the file said (no "007" turned into 7 by a too-early guess).
 * Likewise a UTF-8 guess that meets invalid bytes mid-file restarts the import as Windows-1252.
 *
 * Inserts go through a prepared multi-row INSERT (up to 500 rows per statement); memory holds one
 * block of text and one batch of rows besides the database itself.
 */
import { ShedError, shedError } from '../../../base/errors.js';
import { readRange } from '../../../base/fs/atomic.js';
import { scalar, sqliteMessage, type SqlDb } from '../sqldb.js';
import { quoteIdent } from '../../../formats/sql/tokens.js';
import { dateParser, dayFirstParser, guessOrder, monthFirstParser, type DateParser } from './dates.js';
import { decoderLabel, detectEncoding, type CsvEncoding } from '../../../formats/csv/encoding.js';
import { generatedNames, sanitizeHeaders } from '../../../formats/csv/headers.js';
import { DecodeError, RecordReader, type Batch } from './reader.js';
import { RowSink, startMask } from './sink.js';
import { showDelimiter, sniffDelimiter } from '../../../formats/csv/sniff.js';
import { guessDecimal, type DecimalGuess } from './decimal.js';
import { converter, T_ALL, typeOf, valueMask, type ColumnType, type Converter, type ValueRules } from './values.js';
import { formatSize } from '../../../base/text/size.js';

/** SQLite in this build holds at most 2000 columns per table (SQLITE_MAX_COLUMN). */
export const MAX_COLUMNS = 2000;
const SAMPLE_ROWS = 10_000;
const MAX_PARAMS = 32_000;

export type IfExists = 'fail' | 'replace' | 'append';

export interface ImportRequest {
  db: SqlDb;
  csvAbs: string;
  csvShown: string;
  table: string;
  ifExists: IfExists;
  delimiter: string | undefined;
  encoding: CsvEncoding | undefined;
  hasHeader: boolean;
  skipRows: number;
  /** undefined: decided from the sample (decimal.ts). */
  decimal: '.' | ',' | undefined;
  dateColumns: string[] | undefined;
  dateFormat: string | undefined;
  /** The database may not grow past this (max file size, or its size plus the quota room). */
  maxDbBytes: number;
  /** True when the quota (not max_file_size_mb) sets maxDbBytes: which error a stop reports. */
  quotaBound: boolean;
  /** Called after each block: bytes done, bytes total, rows so far. */
  progress(done: number, total: number, rows: number): Promise<void>;
}

export interface ImportReport {
  table: string;
  columns: string[];
  column_types: Record<string, ColumnType>;
  rows_imported: number;
  detected_encoding: string;
  detected_delimiter: string;
  /** Set when the call gave no decimal and the sample showed decimal-comma numbers. */
  detected_decimal?: ',' | 'mixed';
  decimal_comma_columns?: string[];
  renamed_columns?: Record<string, string>;
  generated_columns?: boolean;
  rows_padded?: number;
  rows_truncated?: number;
  first_ragged_row?: number;
  blank_lines_skipped?: number;
  date_columns?: Record<string, string>;
  unparsed_dates?: Record<string, number>;
  passes: number;
  suggestions?: string[];
}

interface Plan {
  names: string[];
  renamed: Record<string, string>;
  types: ColumnType[];
  forced: (DateParser | undefined)[];
  dateOrders: Record<string, string>;
}

class Restart {
  constructor(
    readonly reason: 'types' | 'encoding',
    readonly types?: ColumnType[],
  ) {}
}

export async function importCsv(req: ImportRequest): Promise<ImportReport> {
  const head = readRange(req.csvAbs, 0, 64 * 1024);
  if (head.length === 0) throw emptyCsv(req.csvShown);
  const detected = detectEncoding(head, req.encoding);
  let encoding = detected.encoding;
  const delimiter = req.delimiter ?? sniffDelimiter(skipSample(decodeSample(head.subarray(detected.bomBytes), encoding), req.skipRows));
  const rules: ValueRules = {
    decimalComma: req.decimal === ',',
    // (decimal omitted: the first pass's sample decides, and later passes keep that decision)
    anyColumnDates: req.dateFormat !== undefined && (req.dateColumns === undefined || req.dateColumns.length === 0) ? dateParser(req.dateFormat) : undefined,
  };
  if (rules.anyColumnDates === undefined && req.dateFormat !== undefined) dateParser(req.dateFormat); // validate early
  const existing = tableKind(req.db, req.table);
  if (existing !== undefined && req.ifExists === 'fail') {
    throw shedError('TABLE_EXISTS', `The database already has a ${existing} named '${req.table}'.`, {
      details: { parameter: 'table', table: req.table },
      hint: `Use if_exists="replace" to recreate it, if_exists="append" to add the rows, or another table=... name.`,
    });
  }
  if (existing === 'view') {
    throw shedError('TABLE_EXISTS', `'${req.table}' is a view in this database; a CSV can only be imported into a table.`, {
      details: { parameter: 'table', table: req.table },
      hint: 'Choose another table=... name.',
    });
  }

  let fixedTypes: ColumnType[] | undefined;
  const decimal: DecimalState = {};
  for (let attempt = 1; attempt <= 4; attempt++) {
    try {
      return await runPass(req, { encoding, bomBytes: encoding === detected.encoding ? detected.bomBytes : 0, delimiter, rules, fixedTypes, passes: attempt, decimal });
    } catch (err) {
      rollback(req.db);
      if (err instanceof Restart) {
        if (err.reason === 'encoding') {
          encoding = 'windows-1252';
          fixedTypes = undefined;
        } else {
          fixedTypes = err.types;
        }
        continue;
      }
      if (isFull(err)) throw roomError(req); // SQLite's own page limit (max_page_count) stopped it
      if (err instanceof DecodeError) {
        throw shedError('CSV_PARSE_ERROR', `The CSV file is not valid ${encoding} text (bad bytes near byte ${err.byteOffset}).`, {
          details: { parameter: 'encoding', encoding, byte_offset: err.byteOffset },
          hint: 'Give the right encoding, e.g. encoding="windows-1252" (Western European) or omit encoding to let it be detected.',
        });
      }
      throw err;
    }
  }
  throw shedError('CSV_PARSE_ERROR', 'The CSV import did not settle on column types after several passes.', {
    hint: 'Report this file to the admin; as a workaround import it with has_header=true into a table you create with TEXT columns and if_exists="append".',
  });
}

interface PassOptions {
  encoding: CsvEncoding;
  bomBytes: number;
  delimiter: string;
  rules: ValueRules;
  fixedTypes: ColumnType[] | undefined;
  passes: number;
  /** The decimal mark guessed from the first sample (when the call gave none); shared by every pass. */
  decimal: DecimalState;
}

interface DecimalState {
  guess?: DecimalGuess;
}

async function runPass(req: ImportRequest, o: PassOptions): Promise<ImportReport> {
  const { db } = req;
  const reader = new RecordReader(req.csvAbs, { encoding: o.encoding, bomBytes: o.bomBytes, delimiter: o.delimiter, skipRows: req.skipRows });
  const autoEncoding = req.encoding === undefined && o.encoding === 'utf-8';
  try {
    const next = async (raw: boolean): Promise<Batch | null> => {
      try {
        return await reader.next(raw);
      } catch (err) {
        if (err instanceof DecodeError && autoEncoding) throw new Restart('encoding');
        throw err;
      }
    };

    // 1. Header and sample (as string records).
    const sample: string[][] = [];
    let headerRow: string[] | undefined;
    let done = false;
    while (sample.length < SAMPLE_ROWS) {
      const batch = await next(false);
      if (batch === null) {
        done = true;
        break;
      }
      for (const r of batch.records ?? []) {
        if (req.hasHeader && headerRow === undefined) headerRow = r;
        else sample.push(r);
      }
    }
    if (headerRow === undefined && sample.length === 0) throw emptyCsv(req.csvShown);
    const width = headerRow?.length ?? sample[0]!.length;
    if (width > MAX_COLUMNS) {
      throw shedError('CSV_TOO_WIDE', `The CSV file has ${width} columns; a SQLite table holds at most ${MAX_COLUMNS}.`, {
        details: { columns: width, max_columns: MAX_COLUMNS, delimiter: showDelimiter(o.delimiter) },
        hint: 'Split the file into narrower files (e.g. with cut), or check that the delimiter is right.',
      });
    }
    if (req.decimal === undefined && o.decimal.guess === undefined) {
      const names = headerRow ? sanitizeHeaders(headerRow).names : generatedNames(width);
      o.decimal.guess = guessDecimal(names, sample, o.delimiter);
      o.rules.decimalComma = o.decimal.guess.decimal === ',';
    }
    const plan = makePlan(req, headerRow, width, sample, o);

    // 2. Table, then every record (IMMEDIATE: the write lock from the start, waiting for another writer).
    db.exec('BEGIN IMMEDIATE');
    const target = prepareTable(req, plan);
    const dateFailures = plan.forced.map(() => ({ count: 0 }));
    const convert: Converter[] = plan.types.map((t, i) => converter(t, o.rules, plan.forced[i], dateFailures[i]!));
    const inserter = db.inserter(
      `INSERT INTO ${quoteIdent(req.table)} (${target.columns.map(quoteIdent).join(',')}) VALUES `,
      width,
      Math.max(1, Math.min(500, Math.floor(MAX_PARAMS / width))),
    );
    const sink = new RowSink(plan.types, plan.forced, convert, o.rules, inserter, o.delimiter);
    try {
      for (const r of sample) sink.record(r);
      await req.progress(reader.bytesRead, reader.size, sink.counters.rows);
      let blocks = 0;
      while (!done) {
        const batch = await next(sink.canTakeBytes);
        if (batch === null) break;
        if (batch.bytes) sink.bytes(batch.bytes.buf, batch.bytes.start, batch.bytes.end);
        else for (const r of batch.records) sink.record(r);
        if (sink.masks === undefined && ++blocks % 8 === 0) ensureRoom(db, req);
        await req.progress(reader.bytesRead, reader.size, sink.counters.rows);
      }
      const masks = sink.masks;
      if (masks !== undefined) {
        if (o.fixedTypes !== undefined && o.passes >= 3) {
          // A type decided over the whole file still misfit: settle on TEXT for the columns in doubt.
          throw new Restart('types', plan.types.map((t, i) => (masks[i] === startMask(t) ? t : 'TEXT')));
        }
        throw new Restart('types', masks.map((m, i) => (plan.forced[i] !== undefined ? plan.types[i]! : typeOf(m, true))));
      }
      inserter.finish();
      ensureRoom(db, req);
      db.exec('COMMIT');
    } finally {
      inserter.free();
    }

    const counters = sink.counters;
    const report: ImportReport = {
      table: req.table,
      columns: plan.names,
      column_types: Object.fromEntries(plan.names.map((n, i) => [n, plan.types[i]!])),
      rows_imported: counters.rows,
      detected_encoding: o.encoding,
      detected_delimiter: showDelimiter(o.delimiter),
      passes: o.passes,
    };
    const guess = o.decimal.guess;
    if (guess !== undefined && guess.commaColumns.length > 0) {
      report.detected_decimal = guess.refused ? 'mixed' : ',';
      report.decimal_comma_columns = guess.commaColumns;
    }
    if (Object.keys(plan.renamed).length > 0) report.renamed_columns = plan.renamed;
    if (!req.hasHeader) report.generated_columns = true;
    if (counters.padded > 0) report.rows_padded = counters.padded;
    if (counters.truncated > 0) report.rows_truncated = counters.truncated;
    if (counters.firstRagged > 0) report.first_ragged_row = counters.firstRagged;
    const blank = reader.blankLines + counters.blank;
    if (blank > 0) report.blank_lines_skipped = blank;
    if (Object.keys(plan.dateOrders).length > 0) report.date_columns = plan.dateOrders;
    const unparsed = Object.fromEntries(plan.names.map((n, i) => [n, dateFailures[i]!.count]).filter(([, c]) => (c as number) > 0));
    if (Object.keys(unparsed).length > 0) report.unparsed_dates = unparsed as Record<string, number>;
    const suggestions = suggest(plan, sample, o.rules, req, guess);
    if (suggestions.length > 0) report.suggestions = suggestions;
    return report;
  } finally {
    reader.close();
  }
}

function makePlan(req: ImportRequest, headerRow: string[] | undefined, width: number, sample: string[][], o: PassOptions): Plan {
  const { names, renamed } = headerRow ? sanitizeHeaders(headerRow) : { names: generatedNames(width), renamed: {} };
  const forced: (DateParser | undefined)[] = names.map(() => undefined);
  const dateOrders: Record<string, string> = {};
  for (const wanted of req.dateColumns ?? []) {
    const idx = findColumn(names, headerRow, wanted);
    if (idx === -1) {
      throw shedError('INVALID_PARAMETER', `'date_columns' names ${JSON.stringify(wanted)}, which is not a column of the CSV.`, {
        details: { parameter: 'date_columns', received: req.dateColumns, columns: names },
        hint: `Columns are: ${names.slice(0, 40).join(', ')}.`,
      });
    }
    let parser: DateParser;
    let label: string;
    if (req.dateFormat !== undefined) {
      parser = dateParser(req.dateFormat);
      label = req.dateFormat;
    } else {
      const order = guessOrder(sample.map((r) => r[idx] ?? ''));
      parser = order === 'monthfirst' ? monthFirstParser() : dayFirstParser();
      label = order ?? 'dayfirst (assumed: the sample fits both orders)';
    }
    forced[idx] = parser;
    dateOrders[names[idx]!] = label;
  }
  let types: ColumnType[];
  if (o.fixedTypes !== undefined && o.fixedTypes.length === width) {
    types = o.fixedTypes;
  } else {
    const masks = names.map(() => T_ALL);
    const saw = names.map(() => false);
    for (const r of sample) {
      for (let i = 0; i < width; i++) {
        const v = r[i];
        if (v === undefined || v === '') continue;
        saw[i] = true;
        masks[i]! &= valueMask(v, o.rules);
      }
    }
    types = masks.map((m, i) => typeOf(m, saw[i]!));
  }
  for (let i = 0; i < width; i++) {
    if (forced[i] !== undefined) {
      const withTime = sample.some((r) => (forced[i]!(r[i] ?? '') ?? '').length > 10);
      types[i] = withTime ? 'DATETIME' : 'DATE';
    }
  }
  return { names, renamed, types, forced, dateOrders };
}

function findColumn(names: string[], header: string[] | undefined, wanted: string): number {
  const w = wanted.trim().toLowerCase();
  let i = names.findIndex((n) => n.toLowerCase() === w);
  if (i === -1 && header) i = header.findIndex((h) => h.trim().toLowerCase() === w);
  return i;
}

function tableKind(db: SqlDb, table: string): 'table' | 'view' | undefined {
  const kind = scalar(db, `SELECT type FROM sqlite_schema WHERE lower(name) = lower('${table.replace(/'/g, "''")}') AND type IN ('table','view')`);
  return kind === 'table' || kind === 'view' ? kind : undefined;
}

/** Creates (or for append, checks) the table; returns the columns to insert into, in CSV order. */
function prepareTable(req: ImportRequest, plan: Plan): { columns: string[] } {
  const { db } = req;
  const t = quoteIdent(req.table);
  const exists = tableKind(db, req.table) === 'table';
  if (exists && req.ifExists === 'append') {
    const tableCols = db.rows(`SELECT name FROM pragma_table_info('${req.table.replace(/'/g, "''")}')`).map((r) => String(r[0]));
    if (!req.hasHeader) {
      if (plan.names.length > tableCols.length) {
        throw shedError('INVALID_PARAMETER', `The CSV has ${plan.names.length} columns but table '${req.table}' has ${tableCols.length}; rows cannot be appended.`, {
          details: { parameter: 'if_exists', csv_columns: plan.names.length, table_columns: tableCols },
          hint: 'Use if_exists="replace", or import into a new table=... name.',
        });
      }
      return { columns: tableCols.slice(0, plan.names.length) };
    }
    const lower = new Map(tableCols.map((c) => [c.toLowerCase(), c]));
    const missing = plan.names.filter((n) => !lower.has(n.toLowerCase()));
    if (missing.length > 0) {
      throw shedError('INVALID_PARAMETER', `Columns ${missing.map((m) => `'${m}'`).join(', ')} of the CSV are not in table '${req.table}' (${tableCols.join(', ')}); rows cannot be appended.`, {
        details: { parameter: 'if_exists', missing_columns: missing, table_columns: tableCols },
        hint: 'Use if_exists="replace" to recreate the table from the CSV, or import into a new table=... name.',
      });
    }
    return { columns: plan.names.map((n) => lower.get(n.toLowerCase())!) };
  }
  if (exists) db.exec(`DROP TABLE ${t}`);
  const cols = plan.names.map((n, i) => `${quoteIdent(n)} ${plan.types[i]}`).join(', ');
  try {
    db.exec(`CREATE TABLE ${t} (${cols})`);
  } catch (err) {
    throw shedError('SQL_ERROR', `SQLite could not create table '${req.table}': ${sqliteMessage(err)}`, { hint: 'Choose another table=... name.' });
  }
  return { columns: plan.names };
}

function ensureRoom(db: SqlDb, req: ImportRequest): void {
  const bytes = Number(scalar(db, 'PRAGMA page_count')) * Number(scalar(db, 'PRAGMA page_size'));
  if (bytes > req.maxDbBytes) throw roomError(req);
}

function roomError(req: ImportRequest): ShedError {
  return shedError(req.quotaBound ? 'QUOTA_EXCEEDED' : 'FILE_TOO_LARGE', `The database would grow past ${formatSize(req.maxDbBytes)} (${req.quotaBound ? 'its size plus the room left in the quota' : 'max_file_size_mb'}); the import was stopped and nothing was written.`, {
    details: { limit_bytes: req.maxDbBytes },
    hint: 'Free space with shed_delete, import a smaller file (split it with cut/split), or ask the admin for a larger limit.',
  });
}

/** SQLite's "database or disk is full": the page limit set from the quota and max_file_size_mb. */
function isFull(err: unknown): boolean {
  const msg = err instanceof ShedError ? String(err.details?.sqlite_message ?? '') : sqliteMessage(err);
  return /database or disk is full/i.test(msg);
}

function rollback(db: SqlDb): void {
  try {
    db.exec('ROLLBACK');
  } catch {
    // no transaction open
  }
}

function emptyCsv(shown: string): Error {
  return shedError('CSV_EMPTY', `${shown} is empty: there is no header and no data to import.`, {
    details: { path: shown },
    hint: 'Check the file with shed_read; a CSV needs at least a header line (or one data line with has_header=false).',
  });
}

function decodeSample(bytes: Uint8Array, encoding: CsvEncoding): string {
  return new TextDecoder(decoderLabel(encoding)).decode(bytes);
}

function skipSample(text: string, skip: number): string {
  let from = 0;
  for (let i = 0; i < skip && from < text.length; i++) {
    const nl = text.indexOf('\n', from);
    from = nl === -1 ? text.length : nl + 1;
  }
  return text.slice(from);
}

/** Hints for TEXT columns that would have been numbers or dates with other options. */
function suggest(plan: Plan, sample: string[][], rules: ValueRules, req: ImportRequest, guess: DecimalGuess | undefined): string[] {
  const out: string[] = [];
  if (guess?.refused) {
    const why = guess.pointColumns.length > 0
      ? `other columns (${guess.pointColumns.map((c) => `'${c}'`).join(', ')}) hold numbers with a decimal point`
      : 'the fields are separated by commas, where "1,234" is often a thousands separator';
    out.push(`The decimal mark was not guessed: columns ${guess.commaColumns.map((c) => `'${c}'`).join(', ')} look like numbers with a decimal comma (1.234,56) but ${why}; they are TEXT, and SUM over them would be wrong.`);
  }
  plan.types.forEach((t, i) => {
    if (t !== 'TEXT' || plan.forced[i] !== undefined) return;
    const values = sample.map((r) => r[i] ?? '').filter((v) => v !== '').slice(0, 200);
    if (values.length === 0) return;
    const name = plan.names[i]!;
    if (!rules.decimalComma && values.every((v) => valueMask(v, { decimalComma: true, anyColumnDates: undefined }) & 2) && values.some((v) => v.includes(','))) {
      out.push(`Column '${name}' looks like numbers with a decimal comma: re-import with decimal="," and if_exists="replace" to store them as numbers.`);
      return;
    }
    if (req.dateFormat === undefined) {
      const day = dayFirstParser();
      if (values.every((v) => day(v) !== undefined) || values.every((v) => monthFirstParser()(v) !== undefined)) {
        out.push(`Column '${name}' looks like dates: re-import with date_columns=["${name}"] (and date_format="dayfirst" or "monthfirst") and if_exists="replace" to store ISO dates.`);
      }
    }
  });
  return out.slice(0, 5);
}
