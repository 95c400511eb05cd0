/**
 * Which PRAGMAs a statement may use, decided once for both walls: the file engine's authorizer
 * (node/authorizer.ts, SQLite itself refuses) and the statement tokenizer (sql-tokens.ts, the same
 * refusal with a teaching error on both engines). A PRAGMA that only reports is allowed; one that
 * sets something is allowed only when the setting is the database's own business (user_version,
 * foreign_keys ...), never when it would move the limits or the safety of the file (max_page_count,
 * journal_mode, synchronous, trusted_schema, heap limits, mmap, temp_store_directory ...).
 */

/** PRAGMAs that take an argument in parentheses and only report. */
export const PRAGMA_READS_WITH_ARG: ReadonlySet<string> = new Set([
  'table_info', 'table_xinfo', 'table_list', 'index_list', 'index_info', 'index_xinfo', 'foreign_key_list',
  'foreign_key_check', 'integrity_check', 'quick_check', 'pragma_list', 'function_list', 'module_list', 'collation_list',
]);

/** PRAGMAs a statement may set (`= value` or `(value)`): settings of the database or of this one call. */
export const PRAGMA_SETTABLE: ReadonlySet<string> = new Set([
  'application_id', 'user_version', 'foreign_keys', 'defer_foreign_keys', 'recursive_triggers', 'case_sensitive_like',
  'ignore_check_constraints', 'automatic_index', 'reverse_unordered_selects', 'legacy_alter_table', 'cell_size_check',
  'secure_delete', 'auto_vacuum', 'incremental_vacuum', 'optimize', 'analysis_limit', 'page_size', 'encoding',
  'wal_checkpoint',
]);

/** PRAGMAs refused even to read: they show the server's paths. */
export const PRAGMA_HIDDEN: ReadonlySet<string> = new Set(['database_list']);

/** Whether a PRAGMA `name` may run, given an argument (`= v` or `(v)`) or none. */
export function pragmaAllowed(name: string, hasArgument: boolean): boolean {
  const n = name.toLowerCase();
  if (PRAGMA_HIDDEN.has(n)) return false;
  return !hasArgument || PRAGMA_READS_WITH_ARG.has(n) || PRAGMA_SETTABLE.has(n);
}

/** SQL functions that may never be called (extension loading; the engines have it off as well). */
export const FORBIDDEN_FUNCTIONS: ReadonlySet<string> = new Set(['load_extension']);
