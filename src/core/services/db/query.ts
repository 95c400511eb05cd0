/**
 * Runs exactly one SQL statement on an open database and collects what the LLM sees: column names,
 * rows as arrays (compact: no repeated keys), the number of rows and changes. Values are made JSON
 * safe: integers beyond 2^53 become strings, BLOBs become {blob: size, hex: first bytes}, and the
 * rows stop at a character budget so one huge cell cannot flood the context.
 */
import { ShedError, shedError } from '../../base/errors.js';
import { sqliteMessage, type BindValue, type SqlDb, type SqlStatement, type SqlValue } from './sqldb.js';
import { isTrivia } from '../../formats/sql/tokens.js';

export type { BindValue } from './sqldb.js';

/**
 * SQLite's memory allowance per call (page cache, sorts, strings): sql.js caps its heap at it; the
 * file engine makes it the longest value and adds it to its process's address-space cap. Past it a
 * statement fails with "out of memory" (RESOURCE_LIMIT).
 */
export const SQLITE_HEAP_MB = 512;

/** Rows counted past the returned ones to report a total; beyond this the total is "at least". */
const COUNT_CAP = 1_000_000;
/** BLOB bytes shown in hex. */
const BLOB_HEX_BYTES = 32;

export type Cell = string | number | null | { blob: number; hex: string };

export interface RunOptions {
  /** Rows to return at most. */
  limit: number;
  /** Character budget of the returned rows (JSON size). */
  budget: number;
  /**
   * The statement may change the database: its changes, last rowid and schema change are counted,
   * and it runs to its end. A read (false) may stop counting rows at COUNT_CAP.
   */
  write: boolean;
}

export interface RunResult {
  columns: string[];
  rows: Cell[][];
  /** Rows the statement produced in total (or at least, see totalIsLowerBound). */
  totalRows: number;
  totalIsLowerBound: boolean;
  truncated: 'limit' | 'size' | undefined;
  /** Rows inserted, updated or deleted. */
  changes: number;
  lastRowId: number | string | undefined;
  schemaChanged: boolean;
}

/** SQLite error as a ShedError that quotes SQLite and points at the likely fix. */
export function sqlError(db: SqlDb | undefined, err: unknown, sql: string): Error {
  const msg = sqliteMessage(err);
  const details: Record<string, unknown> = { sqlite_message: msg, query: sql.length > 500 ? `${sql.slice(0, 497)}...` : sql };
  let hint = 'Fix the SQL and call again; one statement per call, strings in single quotes, identifiers in double quotes, values through params=[...].';
  if (/no such table/i.test(msg) || /no such column/i.test(msg)) {
    const schema = db ? describeSchema(db) : '';
    if (schema) {
      details.schema = schema;
      hint = `The database has: ${schema}.`;
    } else {
      hint = 'The database has no tables yet: create one (CREATE TABLE ...) or import a CSV with import_csv=... and table=....';
    }
  } else if (/syntax error/i.test(msg)) {
    hint = 'Check the SQL near the quoted token; strings go in single quotes, names with spaces in double quotes.';
  } else if (/too many SQL variables|column index out of range|bind/i.test(msg)) {
    hint = 'Give exactly one value in params for each ? placeholder.';
  }
  return shedError('SQL_ERROR', `SQLite error: ${msg}`, { details, hint });
}

/** "sales(id, region, total); regions(code, name)": tables and their columns, cut to stay short. */
export function describeSchema(db: SqlDb): string {
  try {
    const tables = db.rows("SELECT name FROM sqlite_schema WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' ORDER BY name");
    const parts: string[] = [];
    for (const [name] of tables.slice(0, 20)) {
      const cols = db.rows(`SELECT name FROM pragma_table_info(${quoteLiteral(String(name))})`).map((r) => String(r[0]));
      parts.push(`${String(name)}(${cols.slice(0, 30).join(', ')}${cols.length > 30 ? ', ...' : ''})`);
    }
    if (tables.length > 20) parts.push(`... ${tables.length - 20} more`);
    return parts.join('; ');
  } catch {
    return '';
  }
}

function quoteLiteral(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/**
 * Prepares the only statement of `sql` and binds `params`. A second statement is refused (before
 * anything runs): SQLite itself finds where the first one ends, so trigger bodies with inner ';'
 * stay whole.
 */
export function prepareOne(db: SqlDb, sql: string, params: readonly BindValue[] | undefined): SqlStatement {
  let first: ReturnType<SqlDb['prepareFirst']>;
  try {
    first = db.prepareFirst(sql);
  } catch (err) {
    throw sqlError(db, err, sql);
  }
  if (first === undefined) {
    throw shedError('MISSING_PARAMETER', "'query' holds no SQL statement (only comments or semicolons).", {
      details: { parameter: 'query' },
      hint: 'Example: query="SELECT * FROM sales LIMIT 5"',
    });
  }
  const { stmt, rest } = first;
  if (!isTrivia(rest)) {
    stmt.free();
    throw shedError('INVALID_PARAMETER', "'query' holds more than one SQL statement; shed_sqlite runs exactly one statement per call.", {
      details: { parameter: 'query', first_statement: first.sql.slice(0, 200), remaining: rest.trim().slice(0, 200) },
      hint: 'Send each statement in its own shed_sqlite call (each call is its own transaction).',
    });
  }
  if (params && params.length > 0) {
    try {
      stmt.bind(params);
    } catch (err) {
      stmt.free();
      throw sqlError(db, err, sql);
    }
  }
  return stmt;
}

/** Steps the statement to the end, keeping the first rows within limit and budget. */
export function runStatement(db: SqlDb, stmt: SqlStatement, sql: string, opts: RunOptions): RunResult {
  const before = opts.write ? counters(db) : undefined;
  const columns = stmt.columns();
  const rows: Cell[][] = [];
  let used = 2;
  let total = 0;
  let lowerBound = false;
  let truncated: RunResult['truncated'];
  try {
    for (let values = stmt.step(); values !== undefined; values = stmt.step()) {
      total++;
      if (truncated === undefined) {
        if (rows.length >= opts.limit) {
          truncated = 'limit';
        } else {
          const row = renderRow(values, opts.budget - used);
          const size = JSON.stringify(row).length + 1;
          if (used + size > opts.budget && rows.length > 0) {
            truncated = 'size';
          } else {
            rows.push(row);
            used += size;
          }
        }
      }
      if (total >= COUNT_CAP && truncated !== undefined && columns.length > 0 && (before === undefined || counters(db).changes === before.changes)) {
        lowerBound = true;
        break;
      }
    }
  } catch (err) {
    throw sqlError(db, err, sql);
  } finally {
    stmt.free();
  }
  const after = before === undefined ? undefined : counters(db);
  const rowid = after?.rowid;
  return {
    columns,
    rows,
    totalRows: total,
    totalIsLowerBound: lowerBound,
    truncated,
    changes: after === undefined ? 0 : after.changes - before!.changes,
    lastRowId: typeof rowid === 'number' ? rowid : typeof rowid === 'bigint' ? safeInteger(rowid) : undefined,
    schemaChanged: after !== undefined && after.schema !== before!.schema,
  };
}

/**
 * The connection's change count, last rowid and schema version, in one query. A write's row count
 * may stop early only if it changed nothing (a write must run to its end).
 */
function counters(db: SqlDb): { changes: number; rowid: SqlValue | undefined; schema: SqlValue | undefined } {
  const [changes, rowid, schema] = db.rows('SELECT total_changes(), last_insert_rowid(), (SELECT schema_version FROM pragma_schema_version)')[0] ?? [];
  return { changes: Number(changes), rowid, schema };
}

function renderRow(values: SqlValue[], room: number): Cell[] {
  return values.map((v) => renderCell(v, Math.max(room, 200)));
}

export function renderCell(v: SqlValue, maxChars = Number.MAX_SAFE_INTEGER): Cell {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return safeInteger(v);
  if (typeof v === 'number') return Number.isFinite(v) ? v : String(v);
  if (typeof v === 'string') return v.length > maxChars ? `${v.slice(0, maxChars)}... [cut: ${v.length} characters in all; use substr() or output_csv]` : v;
  const bytes = v;
  return { blob: bytes.length, hex: Buffer.from(bytes.subarray(0, BLOB_HEX_BYTES)).toString('hex') + (bytes.length > BLOB_HEX_BYTES ? '...' : '') };
}

function safeInteger(v: bigint): number | string {
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
}

/** A row of a CSV import that SQLite refused (a constraint of an appended-to table). */
export function insertError(msg: unknown): Error {
  const text = typeof msg === 'string' ? msg : sqliteMessage(msg);
  return shedError('SQL_ERROR', `SQLite refused a row of the CSV: ${text}`, {
    details: { sqlite_message: text },
    hint: 'With if_exists="append" the existing table\'s constraints apply (NOT NULL, UNIQUE, CHECK); import into a new table or use if_exists="replace".',
  });
}

/** Turns SQLite's "out of memory" (or a value past its length limit) into RESOURCE_LIMIT; rethrows anything else. */
export function memoryGuard(err: unknown): never {
  const text = `${sqliteMessage(err)} ${err instanceof ShedError ? String(err.details?.sqlite_message ?? '') : ''}`;
  if (/out of memory|SQLITE_NOMEM|string or blob too big/i.test(text)) {
    throw shedError('RESOURCE_LIMIT', `The statement needed more than ${SQLITE_HEAP_MB} MB of memory and was stopped; nothing was changed.`, {
      details: { memory_limit_mb: SQLITE_HEAP_MB },
      hint: 'Return less per row or fewer rows: aggregate in SQL, add WHERE or LIMIT, or export with output_csv.',
    });
  }
  throw err;
}
