/**
 * The sql.js engine behind the SqlDb interface: a database image in memory (see engine.ts and
 * dbfile.ts for how it is loaded and written back).
 */
import type { Database, SqlJsStatic, Statement } from 'sql.js';
import { BulkInserter } from './bulk.js';
import { currentRow } from './engine.js';
import type { BindValue, FirstStatement, RowInserter, SqlDb, SqlStatement, SqlValue } from './sqldb.js';

class SqlJsStatement implements SqlStatement {
  constructor(private readonly stmt: Statement) {}

  columns(): string[] {
    return this.stmt.getColumnNames();
  }

  bind(values: readonly BindValue[]): void {
    this.stmt.bind(values.map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v)));
  }

  step(): SqlValue[] | undefined {
    return this.stmt.step() ? (currentRow(this.stmt) as SqlValue[]) : undefined;
  }

  free(): void {
    this.stmt.free();
  }
}

export class SqlJsDb implements SqlDb {
  constructor(
    readonly db: Database,
    private readonly SQL: SqlJsStatic,
  ) {}

  prepareFirst(sql: string): FirstStatement | undefined {
    const it = this.db.iterateStatements(sql);
    const first = it.next();
    if (first.done) return undefined;
    return { stmt: new SqlJsStatement(first.value), sql: first.value.getSQL(), rest: it.getRemainingSQL() };
  }

  exec(sql: string): void {
    this.db.exec(sql);
  }

  rows(sql: string): SqlValue[][] {
    return (this.db.exec(sql)[0]?.values ?? []) as SqlValue[][];
  }

  inserter(sqlHead: string, width: number, rowsPerStatement: number): RowInserter {
    return new BulkInserter(this.SQL, this.db, sqlHead, width, rowsPerStatement);
  }

  close(): void {
    this.db.close();
  }
}
