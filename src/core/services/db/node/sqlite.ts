/**
 * The runtime's own SQLite (`node:sqlite`, Node >= 22.13; Node 24 and 26 are the LTS lines that
 * have everything used here). Loaded with process.getBuiltinModule, never with an import: Node 20
 * has no such module (a static import would throw when the bundle loads) and gets sql.js instead.
 * The project's @types/node describes Node 20, so the few members used are typed here.
 */

export type AuthorizerFn = (action: number, arg1: string | null, arg2: string | null, dbName: string | null, trigger: string | null) => number;

export interface StatementSync {
  readonly sourceSQL: string;
  columns(): { name: string }[];
  iterate(...params: unknown[]): IterableIterator<unknown[]>;
  all(...params: unknown[]): unknown[][];
  get(...params: unknown[]): unknown;
  run(...params: unknown[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  setReturnArrays(on: boolean): void;
  setReadBigInts(on: boolean): void;
}

export interface DatabaseSync {
  prepare(sql: string): StatementSync;
  exec(sql: string): void;
  close(): void;
  location(): string | null;
  setAuthorizer(fn: AuthorizerFn | null): void;
  enableDefensive(on: boolean): void;
  enableLoadExtension(on: boolean): void;
}

export interface DatabaseOptions {
  readOnly?: boolean;
  timeout?: number;
  enableForeignKeyConstraints?: boolean;
  enableDoubleQuotedStringLiterals?: boolean;
  allowExtension?: boolean;
  /** SQLite's run-time limits (sqlite3_limit); `length`: longest string or BLOB. */
  limits?: { length?: number };
}

export interface NodeSqlite {
  DatabaseSync: new (path: string | URL, options?: DatabaseOptions) => DatabaseSync;
  constants: Record<string, number>;
}

let loaded: NodeSqlite | null | undefined;

/** node:sqlite with the authorizer and defensive mode, or undefined (Node 20, older 22.x). */
export function nodeSqlite(): NodeSqlite | undefined {
  if (loaded === undefined) {
    const get = (process as unknown as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
    const mod = get?.call(process, 'node:sqlite') as NodeSqlite | undefined;
    const proto = mod?.DatabaseSync?.prototype as Partial<DatabaseSync> | undefined;
    loaded = proto && typeof proto.setAuthorizer === 'function' && typeof proto.enableDefensive === 'function' && mod?.constants ? mod : null;
  }
  return loaded ?? undefined;
}
