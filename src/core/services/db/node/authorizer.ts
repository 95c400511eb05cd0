/**
 * SQLite's authorizer for a user's statement on the file engine: SQLite asks it about every action
 * the statement compiles to (and about what it runs internally, such as VACUUM's temporary
 * database), so a refusal holds whatever the text looked like to the tokenizer.
 *
 * - No second file: ATTACH is refused (VACUUM INTO and the attach of a named file, `file:` URI or
 *   not, are ATTACH actions); the one exception is the nameless temporary database a plain VACUUM
 *   attaches, during a VACUUM only.
 * - No transaction control: each call is one transaction that the engine manages.
 * - No extension loading, and PRAGMAs per sql-policy.ts (nothing that moves the limits or the
 *   safety of the file, nothing that shows server paths).
 * - A read statement may change nothing (with `PRAGMA query_only` as a second lock).
 */
import { FORBIDDEN_FUNCTIONS, PRAGMA_READS_WITH_ARG, pragmaAllowed } from '../../../formats/sql/pragmas.js';
import type { AuthorizerFn } from './sqlite.js';

export type StatementMode = 'read' | 'write';

const WRITES = [
  'SQLITE_INSERT', 'SQLITE_UPDATE', 'SQLITE_DELETE', 'SQLITE_ALTER_TABLE', 'SQLITE_REINDEX', 'SQLITE_ANALYZE',
  'SQLITE_CREATE_INDEX', 'SQLITE_CREATE_TABLE', 'SQLITE_CREATE_TRIGGER', 'SQLITE_CREATE_VIEW', 'SQLITE_CREATE_VTABLE',
  'SQLITE_CREATE_TEMP_INDEX', 'SQLITE_CREATE_TEMP_TABLE', 'SQLITE_CREATE_TEMP_TRIGGER', 'SQLITE_CREATE_TEMP_VIEW',
  'SQLITE_DROP_INDEX', 'SQLITE_DROP_TABLE', 'SQLITE_DROP_TRIGGER', 'SQLITE_DROP_VIEW', 'SQLITE_DROP_VTABLE',
  'SQLITE_DROP_TEMP_INDEX', 'SQLITE_DROP_TEMP_TABLE', 'SQLITE_DROP_TEMP_TRIGGER', 'SQLITE_DROP_TEMP_VIEW',
];

/**
 * The authorizer for one statement. `vacuum`: the statement is a plain VACUUM (decided by the
 * tokenizer); it may then attach its nameless temporary database and open its own transaction.
 */
export function statementAuthorizer(C: Record<string, number>, mode: StatementMode, vacuum: boolean): AuthorizerFn {
  const OK = C.SQLITE_OK!;
  const DENY = C.SQLITE_DENY!;
  const writes = new Set(WRITES.map((name) => C[name]));
  const allowVacuum = vacuum && mode === 'write';
  return (action, arg1, arg2) => {
    switch (action) {
      case C.SQLITE_ATTACH:
        return allowVacuum && arg1 === '' ? OK : DENY;
      case C.SQLITE_DETACH:
        return allowVacuum ? OK : DENY;
      case C.SQLITE_TRANSACTION:
      case C.SQLITE_SAVEPOINT:
        return allowVacuum ? OK : DENY;
      case C.SQLITE_FUNCTION:
        return arg2 !== null && FORBIDDEN_FUNCTIONS.has(arg2.toLowerCase()) ? DENY : OK;
      case C.SQLITE_PRAGMA:
        if (!pragmaAllowed(arg1 ?? '', arg2 !== null)) return DENY;
        return mode === 'read' && arg2 !== null && !PRAGMA_READS_WITH_ARG.has((arg1 ?? '').toLowerCase()) ? DENY : OK;
      default:
        return mode === 'read' && writes.has(action) ? DENY : OK;
    }
  };
}
