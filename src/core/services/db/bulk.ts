/**
 * Fast bulk inserts for CSV import. sql.js's Statement.bind converts every string with a JavaScript
 * UTF-8 loop and a malloc/free per value, which costs more than SQLite's own work for a million
 * rows. Here the text of a whole batch is UTF-8-encoded natively into one buffer, copied into the
 * wasm heap once, and bound in place (SQLITE_STATIC) through the sqlite3_* functions that sql.js
 * exports on its module object; NULLs come from clearing the bindings. Values are kept in typed
 * arrays, so a row allocates nothing.
 *
 * Those functions are not part of sql.js's documented API, so everything is checked when the
 * inserter is built (functions present, the statement handle found and verified with sqlite3_sql);
 * if any check fails the inserter falls back to Statement.run, which is slower but the same.
 */
import type { Database, SqlJsStatic, Statement } from 'sql.js';
import { shedError } from '../../base/errors.js';
import { insertError } from './query.js';
import type { BulkValue, RowInserter } from './sqldb.js';

interface RawApi {
  _malloc(n: number): number;
  _free(p: number): void;
  _sqlite3_bind_int(s: number, i: number, v: number): number;
  _sqlite3_bind_double(s: number, i: number, v: number): number;
  _sqlite3_bind_text(s: number, i: number, p: number, n: number, destructor: number): number;
  _sqlite3_clear_bindings(s: number): number;
  _sqlite3_step(s: number): number;
  _sqlite3_reset(s: number): number;
  _sqlite3_sql(s: number): number;
  _sqlite3_errmsg(db: number): number;
  writeArrayToMemory(bytes: Uint8Array, p: number): void;
  UTF8ToString(p: number): string;
}

const RAW_FUNCTIONS = [
  '_malloc', '_free', '_sqlite3_bind_int', '_sqlite3_bind_double', '_sqlite3_bind_text', '_sqlite3_clear_bindings',
  '_sqlite3_step', '_sqlite3_reset', '_sqlite3_sql', '_sqlite3_errmsg', 'writeArrayToMemory', 'UTF8ToString',
] as const;

const SQLITE_DONE = 101;
const K_NULL = 0;
const K_INT = 1;
const K_DOUBLE = 2;
const K_TEXT = 3;

function rawApi(SQL: SqlJsStatic): RawApi | undefined {
  const mod = SQL as unknown as Record<string, unknown>;
  return RAW_FUNCTIONS.every((f) => typeof mod[f] === 'function') ? (SQL as unknown as RawApi) : undefined;
}

/** The C handle behind a sql.js Statement, verified by asking SQLite for the statement's SQL. */
function statementHandle(api: RawApi, stmt: Statement, sql: string): number | undefined {
  for (const v of Object.values(stmt as unknown as Record<string, unknown>)) {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 4096) continue;
    try {
      if (api.UTF8ToString(api._sqlite3_sql(v)) === sql) return v;
    } catch {
      // not a handle
    }
  }
  return undefined;
}

/**
 * Inserts rows of `width` values with one multi-row INSERT per `rowsPerStatement` rows. Call
 * `value()` width times per row, then `endRow()`; `finish()` inserts the rest.
 */
export class BulkInserter implements RowInserter {
  private readonly slots: number;
  private readonly kind: Uint8Array;
  private readonly num: Float64Array;
  private readonly toff: Int32Array;
  private readonly tlen: Int32Array;
  private scratch = Buffer.allocUnsafe(1 << 16);
  private used = 0;
  private pos = 0;
  private rows = 0;
  private heap = 0;
  private heapSize = 0;
  private readonly main: { stmt: Statement; handle: number | undefined };

  constructor(
    private readonly SQL: SqlJsStatic,
    private readonly db: Database,
    private readonly sqlHead: string,
    private readonly width: number,
    private readonly rowsPerStatement: number,
  ) {
    this.slots = rowsPerStatement * width;
    this.kind = new Uint8Array(this.slots);
    this.num = new Float64Array(this.slots);
    this.toff = new Int32Array(this.slots);
    this.tlen = new Int32Array(this.slots);
    this.main = this.prepare(rowsPerStatement);
  }

  private sqlFor(rows: number): string {
    const one = `(${Array.from({ length: this.width }, () => '?').join(',')})`;
    return this.sqlHead + Array.from({ length: rows }, () => one).join(',');
  }

  private prepare(rows: number): { stmt: Statement; handle: number | undefined } {
    const sql = this.sqlFor(rows);
    const stmt = this.db.prepare(sql);
    const api = rawApi(this.SQL);
    return { stmt, handle: api === undefined ? undefined : statementHandle(api, stmt, sql) };
  }

  value(v: BulkValue): void {
    const i = this.pos++;
    if (v === null) {
      this.kind[i] = K_NULL;
    } else if (typeof v === 'number') {
      this.kind[i] = (v | 0) === v ? K_INT : K_DOUBLE;
      this.num[i] = v;
    } else {
      const need = this.used + v.length * 3;
      if (need > this.scratch.length) this.grow(need);
      const n = this.scratch.write(v, this.used);
      this.kind[i] = K_TEXT;
      this.toff[i] = this.used;
      this.tlen[i] = n;
      this.used += n;
    }
  }

  /** A text value given as UTF-8 bytes (already validated), copied without making a string. */
  bytes(src: Buffer, a: number, b: number): void {
    const i = this.pos++;
    const n = b - a;
    if (this.used + n > this.scratch.length) this.grow(this.used + n);
    const dst = this.scratch;
    const off = this.used;
    if (n < 24) for (let k = 0; k < n; k++) dst[off + k] = src[a + k]!;
    else src.copy(dst, off, a, b);
    this.kind[i] = K_TEXT;
    this.toff[i] = off;
    this.tlen[i] = n;
    this.used += n;
  }

  endRow(): void {
    this.rows++;
    if (this.rows === this.rowsPerStatement) this.flush(this.main);
  }

  /** Inserts the rows of an unfinished batch. */
  finish(): void {
    if (this.rows > 0) {
      const tail = this.prepare(this.rows);
      try {
        this.flush(tail);
      } finally {
        tail.stmt.free();
      }
    }
  }

  free(): void {
    this.main.stmt.free();
    if (this.heap !== 0) (this.SQL as unknown as RawApi)._free(this.heap);
    this.heap = 0;
  }

  private grow(need: number): void {
    let size = this.scratch.length * 2;
    while (size < need) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.scratch.copy(next, 0, 0, this.used);
    this.scratch = next;
  }

  private flush(target: { stmt: Statement; handle: number | undefined }): void {
    const n = this.pos;
    if (target.handle === undefined) {
      target.stmt.run(this.boxed(n));
    } else {
      this.flushRaw(target.handle, n);
    }
    this.pos = 0;
    this.rows = 0;
    this.used = 0;
  }

  private flushRaw(stmt: number, n: number): void {
    const api = this.SQL as unknown as RawApi;
    if (this.used > this.heapSize) {
      if (this.heap !== 0) api._free(this.heap);
      this.heapSize = Math.max(this.used, this.heapSize * 2, 1 << 16);
      this.heap = api._malloc(this.heapSize);
      if (this.heap === 0) throw shedError('INTERNAL_ERROR', 'SQLite ran out of memory during the import.');
    }
    if (this.used > 0) api.writeArrayToMemory(this.scratch.subarray(0, this.used), this.heap);
    api._sqlite3_clear_bindings(stmt);
    const { kind, num, toff, tlen, heap } = this;
    for (let i = 0; i < n; i++) {
      const k = kind[i];
      if (k === K_INT) api._sqlite3_bind_int(stmt, i + 1, num[i]!);
      else if (k === K_DOUBLE) api._sqlite3_bind_double(stmt, i + 1, num[i]!);
      else if (k === K_TEXT) api._sqlite3_bind_text(stmt, i + 1, heap + toff[i]!, tlen[i]!, 0);
    }
    const rc = api._sqlite3_step(stmt);
    api._sqlite3_reset(stmt);
    if (rc !== SQLITE_DONE) {
      const msg = api.UTF8ToString(api._sqlite3_errmsg((this.db as unknown as { db: number }).db));
      throw insertError(msg);
    }
  }

  /** The batch as plain values, for the Statement.run fallback. */
  private boxed(n: number): BulkValue[] {
    const out: BulkValue[] = new Array<BulkValue>(n);
    for (let i = 0; i < n; i++) {
      const k = this.kind[i];
      out[i] = k === K_NULL ? null : k === K_TEXT ? this.scratch.toString('utf8', this.toff[i], this.toff[i]! + this.tlen[i]!) : this.num[i]!;
    }
    return out;
  }
}
