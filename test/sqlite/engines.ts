/**
 * The SQLite engines a test file runs its suite against: the file engine (node:sqlite) and sql.js
 * on Node 24 and 26, sql.js alone on Node 20. `useEngine` switches the process's engine for a
 * describe block (FILESHED_SQLITE_ENGINE, read at every call).
 */
import { afterAll, beforeAll } from 'vitest';
import { nodeSqlite } from '../../src/core/services/db/node/sqlite.js';

export type Engine = 'node:sqlite' | 'sql.js';

export const ENGINES: Engine[] = nodeSqlite() !== undefined ? ['node:sqlite', 'sql.js'] : ['sql.js'];

export function useEngine(engine: Engine): void {
  beforeAll(() => {
    if (engine === 'sql.js') process.env.FILESHED_SQLITE_ENGINE = 'sql.js';
    else delete process.env.FILESHED_SQLITE_ENGINE;
  });
  afterAll(() => {
    delete process.env.FILESHED_SQLITE_ENGINE;
  });
}
