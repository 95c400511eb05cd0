/**
 * The SQLite engine: sql.js (SQLite compiled to WebAssembly), loaded once per process. In the bundle
 * the wasm bytes are inlined (esbuild's binary loader); when running from source (tests) sql.js
 * finds the .wasm file beside its own script instead.
 *
 * sql.js keeps a database in memory: a call loads the file's bytes, works on them, and (for writes)
 * exports the whole database and replaces the file atomically (see dbfile.ts).
 */
import initSqlJs, { type Database, type SqlJsStatic, type SqlValue, type Statement } from 'sql.js';

let engine: Promise<SqlJsStatic> | undefined;

/**
 * The inlined wasm bytes. `require` (not `import`): esbuild resolves it at build time to the bytes
 * themselves, while a dynamic import would wrap the 700 KB array in a namespace object with one
 * getter per byte. From source there is nothing to resolve, and sql.js finds its .wasm file itself.
 */
function bundledWasm(): Uint8Array | undefined {
  try {
    const bytes: unknown = require('sql.js/dist/sql-wasm.wasm');
    return bytes instanceof Uint8Array ? bytes : undefined;
  } catch {
    return undefined;
  }
}

export function sqlEngine(): Promise<SqlJsStatic> {
  engine ??= (async () => {
    const wasm = bundledWasm();
    return initSqlJs(wasm ? { wasmBinary: wasm as unknown as ArrayBuffer } : {});
  })().catch((err: unknown) => {
    engine = undefined; // let a later call try again
    throw err;
  });
  return engine;
}

/**
 * Opens a database from a file's bytes (or a new empty one). The journal lives in memory: the file
 * on disk is only ever replaced whole, so a rollback journal on disk would protect nothing.
 *
 * `padTo` pre-sizes the in-memory file for a large import: sql.js keeps the database in a growable
 * buffer that is reallocated and copied every time it grows by 12.5%, which costs more than the
 * inserts themselves. Zero bytes after the last page are ignored by SQLite when the header records
 * the page count (checked), and export() copies only the real pages.
 */
export async function openDatabase(bytes: Uint8Array | undefined, padTo = 0): Promise<Database> {
  const SQL = await sqlEngine();
  let image = bytes && bytes.length > 0 ? bytes : undefined;
  if (padTo > 0) {
    image ??= await emptyImage();
    if (padTo > image.length && headerSizeValid(image)) {
      const padded = new Uint8Array(padTo);
      padded.set(image);
      image = padded;
    }
  }
  const db = new SQL.Database(image);
  try {
    db.run('PRAGMA journal_mode=MEMORY');
  } catch {
    // A database whose header says WAL keeps working in memory; this setting is only a speed-up.
  }
  return db;
}

let empty: Uint8Array | undefined;

/** A valid one-page empty database (a fresh sql.js database exports as 0 bytes until written). */
async function emptyImage(): Promise<Uint8Array> {
  if (empty === undefined) {
    const SQL = await sqlEngine();
    const db = new SQL.Database();
    db.run('VACUUM');
    empty = db.export();
    db.close();
  }
  return empty;
}

/** True when the header's page count is valid and matches the bytes (so trailing zeros are ignored). */
function headerSizeValid(b: Uint8Array): boolean {
  if (b.length < 100) return false;
  const u32 = (o: number) => ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
  const pageSize = b[16]! === 0 && b[17]! === 1 ? 65536 : (b[16]! << 8) | b[17]!;
  const pages = u32(28);
  return pages > 0 && u32(24) === u32(92) && pages * pageSize === b.length;
}

/** Runs a one-value query (SELECT total_changes(), PRAGMA schema_version ...). */
export function scalar(db: Database, sql: string): unknown {
  const res = db.exec(sql);
  return res[0]?.values[0]?.[0];
}

type RowGetter = (this: Statement, params: null, config: { useBigInt: boolean }) => (SqlValue | bigint)[];

/** The current row with integers as BigInt (exact beyond 2^53); the typings of sql.js lack the option. */
export function currentRow(stmt: Statement): (SqlValue | bigint)[] {
  return (stmt.get as unknown as RowGetter).call(stmt, null, { useBigInt: true });
}
