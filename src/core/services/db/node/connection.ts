/**
 * A database file opened in place with node:sqlite (the file engine), behind the SqlDb interface.
 *
 * Every connection: defensive mode (no writable_schema, no corrupting the file from SQL), no
 * extension loading, `trusted_schema` off (functions with side effects cannot hide in views or
 * triggers), a busy timeout (SQLite's own locking against other writers: other servers, a sqlite3
 * command), and a check that SQLite opened the file the resolver approved (a link swapped in
 * meanwhile is refused). Results mirror sql.js: foreign keys off and double-quoted strings accepted
 * (SQLite's defaults), integers read as bigint, JS integers bound as integers.
 */
import { isAscii } from 'node:buffer';
import { pathToFileURL } from 'node:url';
import { shedError } from '../../../base/errors.js';
import { insertError } from '../query.js';
import type { BindValue, BulkValue, FirstStatement, RowInserter, SqlDb, SqlStatement, SqlValue } from '../sqldb.js';
import { tokenize } from '../../../formats/sql/tokens.js';
import { statementAuthorizer, type StatementMode } from './authorizer.js';
import { nodeSqlite, type DatabaseSync, type StatementSync } from './sqlite.js';

export interface OpenOptions {
  /** Real path of the database file, as the resolver approved it. */
  abs: string;
  /** What users see, for errors. */
  shown: string;
  /** A write to a new path: the file may be created. */
  create: boolean;
  /** How long to wait for another connection's lock. */
  busyMs: number;
  /** Longest string or BLOB (SQLite's length limit): a statement may not build bigger values. */
  maxValueBytes: number;
}

export class NodeDb implements SqlDb {
  private constructor(
    readonly db: DatabaseSync,
    private readonly C: Record<string, number>,
  ) {}

  static open(o: OpenOptions): NodeDb {
    const sqlite = nodeSqlite();
    if (sqlite === undefined) throw shedError('INTERNAL_ERROR', 'node:sqlite is not available in this Node.js.');
    const url = pathToFileURL(o.abs);
    if (!o.create) url.search = '?mode=rw'; // never creates: a file deleted meanwhile is not made again
    const db = new sqlite.DatabaseSync(url, {
      timeout: o.busyMs,
      enableForeignKeyConstraints: false,
      enableDoubleQuotedStringLiterals: true,
      allowExtension: false,
      limits: { length: o.maxValueBytes },
    });
    try {
      db.enableDefensive(true);
      db.enableLoadExtension(false);
      if (db.location() !== o.abs) {
        throw shedError('PATH_ESCAPE', `${o.shown} was replaced by a link while it was being opened; nothing was done.`, {
          details: { path: o.shown },
          hint: 'Call again; if it keeps happening, check the file with shed_exec(cmd="ls", args=["-l", ...]).',
        });
      }
      db.exec('PRAGMA trusted_schema = OFF');
    } catch (err) {
      db.close();
      throw err;
    }
    return new NodeDb(db, sqlite.constants);
  }

  /** From now until `unguard`, SQLite asks the authorizer about everything (a user's statement). */
  guard(mode: StatementMode, vacuum: boolean): void {
    this.db.setAuthorizer(statementAuthorizer(this.C, mode, vacuum));
  }

  unguard(): void {
    this.db.setAuthorizer(null);
  }

  prepareFirst(sql: string): FirstStatement | undefined {
    let stmt: StatementSync;
    try {
      stmt = this.db.prepare(sql);
    } catch (err) {
      if (err instanceof Error && /contains no statements/i.test(err.message)) return undefined;
      throw err;
    }
    const first = stmt.sourceSQL;
    return { stmt: new NodeStatement(stmt), sql: first, rest: sql.slice(first.length) };
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  rows(sql: string): SqlValue[][] {
    const stmt = this.db.prepare(sql);
    stmt.setReturnArrays(true);
    stmt.setReadBigInts(true);
    return (stmt.all() as SqlValue[][]).map((row) => row.map((v) => (typeof v === 'bigint' && v >= MIN_SAFE && v <= MAX_SAFE ? Number(v) : v)));
  }

  inserter(sqlHead: string, width: number, rowsPerStatement: number): RowInserter {
    return new NodeInserter(this.db, sqlHead, width, rowsPerStatement);
  }

  close(): void {
    this.db.close();
  }
}

const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** A JS value as node:sqlite should bind it: integers as integers (node binds every number as REAL). */
function bindable(v: BindValue | BulkValue): string | number | bigint | null {
  if (typeof v === 'boolean') return v ? 1n : 0n;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  return v;
}

class NodeStatement implements SqlStatement {
  private args: unknown[] = [];
  private it: Iterator<unknown[]> | undefined;

  constructor(private readonly stmt: StatementSync) {
    stmt.setReturnArrays(true);
    stmt.setReadBigInts(true);
  }

  columns(): string[] {
    return this.stmt.columns().map((c) => c.name);
  }

  bind(values: readonly BindValue[]): void {
    this.args = bindArgs(this.stmt.sourceSQL, values.map(bindable));
  }

  step(): SqlValue[] | undefined {
    this.it ??= this.stmt.iterate(...this.args);
    const next = this.it.next();
    return next.done ? undefined : (next.value as SqlValue[]);
  }

  free(): void {
    this.it?.return?.(); // resets the statement: its locks are released now, not at garbage collection
    this.it = undefined;
  }
}

/**
 * The call's `params` bound as sql.js binds them: the i-th value to parameter number i, whatever
 * its form (`?`, `?NNN`, `:name`, `@name`, `$name`). node:sqlite binds plain values to the unnamed
 * parameters and named ones from an object, so named parameters get their value by name. SQLite
 * numbers a named parameter at its first appearance (the next free number), `?NNN` as written.
 */
function bindArgs(sql: string, values: unknown[]): unknown[] {
  const names: (string | undefined)[] = [];
  const seen = new Set<string>();
  let count = 0;
  for (const t of tokenize(sql)) {
    if (t.kind !== 'param') continue;
    if (t.text === '?') count++;
    else if (/^\?\d+$/.test(t.text)) count = Math.max(count, Number(t.text.slice(1)));
    else if (!seen.has(t.text)) {
      seen.add(t.text);
      names[++count] = t.text;
    }
  }
  if (values.length > count) throw new Error('column index out of range');
  if (seen.size === 0) return values;
  const named: Record<string, unknown> = {};
  const plain: unknown[] = [];
  for (let i = 1; i <= count; i++) {
    const v = values[i - 1] ?? null;
    if (names[i] !== undefined) named[names[i]!] = v;
    else plain.push(v);
  }
  return [named, ...plain];
}

/** Multi-row INSERTs for CSV import: one prepared statement per batch size, values bound by position. */
class NodeInserter implements RowInserter {
  private readonly values: unknown[];
  private pos = 0;
  private rows = 0;
  private readonly main: StatementSync;
  private block: Buffer | undefined;
  private blockText: string | undefined;

  constructor(
    private readonly db: DatabaseSync,
    private readonly sqlHead: string,
    private readonly width: number,
    private readonly rowsPerStatement: number,
  ) {
    this.values = new Array<unknown>(width * rowsPerStatement);
    this.main = db.prepare(this.sqlFor(rowsPerStatement));
  }

  private sqlFor(rows: number): string {
    const one = `(${Array.from({ length: this.width }, () => '?').join(',')})`;
    return this.sqlHead + Array.from({ length: rows }, () => one).join(',');
  }

  value(v: BulkValue): void {
    this.values[this.pos++] = bindable(v);
  }

  bytes(src: Buffer, a: number, b: number): void {
    if (src !== this.block) {
      // A new block of the CSV: when it is all ASCII (most files), decode it once and cut fields out
      // of that string (V8 slices share it) instead of decoding every field on its own.
      this.block = src;
      this.blockText = isAscii(src) ? src.toString('latin1') : undefined;
    }
    this.values[this.pos++] = this.blockText === undefined ? src.toString('utf8', a, b) : this.blockText.slice(a, b);
  }

  endRow(): void {
    if (++this.rows === this.rowsPerStatement) this.flush(this.main, this.values);
  }

  finish(): void {
    if (this.rows > 0) this.flush(this.db.prepare(this.sqlFor(this.rows)), this.values.slice(0, this.pos));
  }

  free(): void {
    // statements are finalized with the connection
  }

  private flush(stmt: StatementSync, values: unknown[]): void {
    try {
      stmt.run(...values);
    } catch (err) {
      throw insertError(err);
    }
    this.pos = 0;
    this.rows = 0;
  }
}
