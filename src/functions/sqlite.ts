import { z } from 'zod';
import type { ImportReport } from '../core/services/db/csv/import.js';
import { ENCODING_NAMES, normalizeEncoding } from '../core/formats/csv/encoding.js';
import { foreignJournal, type DbTarget } from '../core/services/db/dbfile.js';
import { activeEngine, exportRows, importCsvFile, readStatement, writeStatement } from '../core/services/db/run.js';
import type { BindValue, RunResult } from '../core/services/db/query.js';
import { analyzeSql, type SqlAnalysis } from '../core/formats/sql/tokens.js';
import { shedError, showValue } from '../core/base/errors.js';
import { ensureNotLockedByOther } from '../core/base/locks/locks.js';
import { scopeTotal } from '../core/services/quota/quota.js';
import { formatSize } from '../core/base/text/size.js';
import { ZONE_NAMES, type Zone } from '../core/base/zones/zones.js';
import { defineFunction, type CallContext, type HandlerResult } from '../registry/define.js';
import { outputLimit, plural, renderCall } from '../core/base/text/format.js';
import { allowZoneInPath, groupParam, pathParam, zoneParam } from '../registry/params.js';
import { locate, notFound, requireFile, requireNotRoot, type ZonedPath } from '../core/base/files/located.js';
import { guardWrite, recordCreated } from '../core/services/groups/enforce.js';

const TABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MIB = 1024 * 1024;

const params = {
  zone: zoneParam(ZONE_NAMES),
  path: pathParam('Database file'),
  query: z.string().optional().describe('One SQL statement'),
  params: z
    .array(z.union([z.string(), z.number(), z.boolean(), z.null()]))
    .optional()
    .describe('Values of the ? placeholders'),
  limit: z.number().int().min(0).optional().describe('Rows to return (default 10)'),
  output_csv: z.string().optional().describe('Write all rows to this CSV file'),
  import_csv: z.string().optional().describe('CSV file to import'),
  table: z.string().optional().describe('Table to create or fill'),
  if_exists: z.enum(['fail', 'replace', 'append']).default('fail').describe('If the table exists'),
  delimiter: z.string().optional().describe('CSV delimiter (default: detected)'),
  encoding: z.string().optional().describe('CSV encoding (default: detected)'),
  has_header: z.boolean().default(true).describe('First line names the columns'),
  skip_rows: z.number().int().min(0).default(0).describe('Lines to skip before the header'),
  decimal: z.enum(['.', ',']).optional().describe('Decimal mark (default: detected)'),
  date_columns: z.array(z.string()).optional().describe('Date columns (stored YYYY-MM-DD)'),
  date_format: z.string().optional().describe('"dayfirst", "monthfirst" or e.g. "%d.%m.%Y"'),
  group: groupParam,
  allow_zone_in_path: allowZoneInPath,
};

type Args = z.output<z.ZodObject<typeof params>>;

export const shedSqlite = defineFunction({
  name: 'shed_sqlite',
  category: 'data',
  summary: 'Run one SQL statement on a SQLite file, or import a CSV into a table.',
  description: 'Run ONE SQL statement on a SQLite file (? values in params; SELECT returns limit rows, output_csv saves all), or import a CSV (import_csv, table).',
  params,
  zones: { accepted: ZONE_NAMES, writes: false },
  example: { zone: 'storage', path: 'sales.db', query: 'SELECT * FROM sales WHERE region = ?', params: ['North'] },
  paramHints: {
    table: 'Table names use letters, digits and _ only, e.g. table="sales_2024".',
    limit: 'limit=0 returns up to the admin maximum; use output_csv for more.',
  },
  // Reads run beside a writer (SQLite's own locking); writes, imports and exports take the call lock.
  mutates: (args) => args.import_csv !== undefined || args.output_csv !== undefined || !analyzeSql(typeof args.query === 'string' ? args.query : '').read,
  hostArgs: ['__event_emitter__'],
  async handler(args, ctx) {
    const zone = ctx.zone(args.zone, args.group);
    const query = args.query?.trim() ? args.query : undefined;
    if (query !== undefined && args.import_csv !== undefined) {
      throw shedError('INVALID_PARAMETER', "Give either 'query' or 'import_csv', not both: a call either runs SQL or imports a CSV.", {
        details: { parameter: 'import_csv' },
        hint: `First import: ${renderCall('shed_sqlite', { zone: args.zone, path: args.path, import_csv: args.import_csv, table: args.table ?? 'data' })}, then query in a second call.`,
      });
    }
    if (args.import_csv !== undefined) return importMode(args, ctx, zone);
    if (query === undefined) {
      throw shedError('MISSING_PARAMETER', "shed_sqlite needs either 'query' (SQL to run) or 'import_csv' (a CSV file to import with table=...).", {
        details: { parameter: 'query' },
        hint: `Example: ${renderCall('shed_sqlite', { zone: args.zone, path: args.path, query: "SELECT name FROM sqlite_schema WHERE type='table'" })}`,
      });
    }
    return queryMode(args, ctx, zone, query);
  },
});

function dbTarget(p: ZonedPath): DbTarget {
  return { zone: p.zone, abs: p.abs, rel: p.rel, shown: p.shown };
}

// ---------------------------------------------------------------------------------------------
// Query mode

async function queryMode(args: Args, ctx: CallContext, zone: Zone, query: string): Promise<HandlerResult> {
  const sql = analyzeSql(query);
  if (sql.forbidden !== undefined) throw forbiddenSql(sql.forbidden);
  if (sql.transaction) {
    throw shedError('INVALID_PARAMETER', `'query' is a transaction statement (${sql.verb}); each shed_sqlite call already runs as one transaction that is saved when it succeeds.`, {
      details: { parameter: 'query', received: query },
      hint: 'Send the statements themselves, one per call.',
    });
  }
  if (!sql.read) {
    if (zone.readonly) {
      throw shedError('ZONE_FORBIDDEN', `Write operations are not allowed in ${zone.label}: '${sql.verb || 'this statement'}' would change the database.`, {
        details: { zone: zone.label, query_type: sql.verb },
        hint: `Move the database first: shed_move_uploads_to_storage(src="${args.path}", dest="${args.path}"), then run it with zone="storage".`,
      });
    }
    if (ctx.valves.sqlite_readonly) {
      throw shedError('COMMAND_FORBIDDEN', `The admin made SQLite read-only: only SELECT, WITH ... SELECT, EXPLAIN and PRAGMA reads run; '${sql.verb || 'this statement'}' would change the database.`, {
        details: { parameter: 'query', query_type: sql.verb },
        hint: 'Only read queries are possible on this deployment.',
      });
    }
  }
  checkPlaceholders(sql, args.params, query);
  if (args.output_csv !== undefined && !sql.read) {
    throw shedError('INVALID_PARAMETER', "'output_csv' exports the rows of a read query (SELECT ...); this statement changes the database.", {
      details: { parameter: 'output_csv' },
      hint: 'Run the change first, then export with a SELECT and output_csv=....',
    });
  }
  const target = locate(zone, args.path, 'path', sql.read ? 'read' : 'write', args.allow_zone_in_path);
  requireNotRoot(target);
  if (sql.read) {
    requireFile(target);
    return args.output_csv !== undefined ? exportMode(args, ctx, zone, target, query) : readQuery(args, ctx, target, query, sql);
  }
  if (target.stat !== undefined) requireFile(target);
  return writeQuery(args, ctx, target, query, sql);
}

function forbiddenSql(forbidden: string): Error {
  const pragma = /^pragma/i.test(forbidden);
  return shedError('COMMAND_FORBIDDEN', `SQL '${forbidden}' is not allowed: ${pragma ? 'this PRAGMA would change the limits or the safety of the database file, or show server paths' : 'databases may not attach other files or load extensions'}.`, {
    details: { parameter: 'query', forbidden },
    hint: /^attach|^detach/i.test(forbidden)
      ? `Work on one database per call. If '${forbidden}' is a column or table name, quote it: "${forbidden}".`
      : pragma
        ? 'PRAGMAs that report (table_info, index_list, integrity_check ...) and database settings (user_version, foreign_keys ...) work; journal, cache, memory and size settings belong to the admin.'
        : 'Use the built-in SQL functions only.',
  });
}

function checkPlaceholders(sql: SqlAnalysis, values: BindValue[] | undefined, query: string): void {
  if (sql.placeholders.other) return; // named or numbered: SQLite decides
  const given = values?.length ?? 0;
  if (given === sql.placeholders.plain) return;
  throw shedError('INVALID_PARAMETER', `'query' has ${plural(sql.placeholders.plain, '? placeholder')} but 'params' has ${plural(given, 'value')}.`, {
    details: { parameter: 'params', placeholders: sql.placeholders.plain, received: values ?? [] },
    hint:
      sql.placeholders.plain === 0
        ? 'Remove params, or put ? where each value goes, e.g. query="SELECT * FROM t WHERE id = ?", params=[5].'
        : `Give one value per ?, in order, e.g. params=${JSON.stringify(Array.from({ length: sql.placeholders.plain }, (_, i) => (i === 0 ? 'value' : i)))}. Query: ${query.slice(0, 200)}`,
  });
}

function rowLimit(args: Args, ctx: CallContext, sql: SqlAnalysis): { limit: number; capped: boolean } {
  const cap = ctx.valves.sqlite_max_rows;
  if (args.limit === undefined) return { limit: sql.hasLimit ? cap : Math.min(ctx.valves.sqlite_default_limit, cap), capped: false };
  if (args.limit === 0) return { limit: cap, capped: false };
  return { limit: Math.min(args.limit, cap), capped: args.limit > cap };
}

/** sql.js reads the main file only: changes another program holds in its -wal are not seen. */
function warningFor(target: ZonedPath): string | undefined {
  if (activeEngine() !== 'sql.js') return undefined; // the file engine reads through the -wal
  const journal = foreignJournal(target.abs);
  return journal === undefined
    ? undefined
    : `${target.rel}${journal} exists beside the database (another program has it open); changes it holds are not visible here until it is checkpointed.`;
}

async function readQuery(args: Args, ctx: CallContext, target: ZonedPath, query: string, sql: SqlAnalysis): Promise<HandlerResult> {
  const { limit, capped } = rowLimit(args, ctx, sql);
  const budget = outputLimit(ctx, undefined);
  const res = await readStatement(dbTarget(target), { query, params: args.params, limit, budget }, { timeoutSeconds: ctx.valves.sqlite_timeout_seconds });
  const data = resultData(target, query, res);
  const warning = warningFor(target);
  if (warning) data.warning = warning;
  if (capped) data.limit_capped_at = ctx.valves.sqlite_max_rows;
  return { data, message: readMessage(res, ctx, args) };
}

function resultData(target: ZonedPath, query: string, res: RunResult): Record<string, unknown> {
  const data: Record<string, unknown> = {
    path: target.rel,
    zone: target.zone.label,
    query,
    columns: res.columns,
    rows: res.rows,
    row_count: res.rows.length,
  };
  if (res.truncated !== undefined) {
    data.truncated = true;
    data.truncated_by = res.truncated === 'limit' ? 'row limit' : 'output size';
    data[res.totalIsLowerBound ? 'total_rows_at_least' : 'total_rows'] = res.totalRows;
  }
  return data;
}

function readMessage(res: RunResult, ctx: CallContext, args: Args): string {
  if (res.columns.length === 0) return 'The statement ran and returned no columns.';
  if (res.truncated === undefined) return `${plural(res.rows.length, 'row')} returned.`;
  const total = `${res.totalIsLowerBound ? 'at least ' : ''}${res.totalRows}`;
  const why = res.truncated === 'limit' ? `the row limit (${res.rows.length})` : `the output size limit (${ctx.valves.max_output_default} characters)`;
  const call = renderCall('shed_sqlite', { zone: args.zone, path: args.path, query: (args.query ?? '').slice(0, 120), output_csv: 'result.csv' });
  return `Showing ${res.rows.length} of ${total} rows: cut at ${why}. For more rows set limit=N (up to ${ctx.valves.sqlite_max_rows}), page with LIMIT/OFFSET, or export them all: ${call}`;
}

async function exportMode(args: Args, ctx: CallContext, zone: Zone, target: ZonedPath, query: string): Promise<HandlerResult> {
  if (zone.readonly) {
    throw shedError('ZONE_READONLY', `output_csv cannot write into ${zone.label}, which is read-only.`, {
      details: { parameter: 'output_csv', zone: zone.label },
      hint: `Move the database first: shed_move_uploads_to_storage(src="${args.path}", dest="${args.path}"), then export with zone="storage".`,
    });
  }
  const out = locate(zone, args.output_csv!, 'output_csv', 'write', args.allow_zone_in_path);
  requireNotRoot(out, 'output_csv');
  if (out.abs === target.abs) {
    throw shedError('INVALID_PARAMETER', "'output_csv' names the database itself; it would be overwritten.", {
      details: { parameter: 'output_csv', received: args.output_csv, suggested: `${stripExt(out.rel)}.csv` },
    });
  }
  if (out.stat?.isDirectory()) {
    throw shedError('INVALID_PARAMETER', `'output_csv' ${out.shown} is a folder; give a file name.`, {
      details: { parameter: 'output_csv', received: args.output_csv, suggested: `${out.rel}/result.csv` },
    });
  }
  ensureNotLockedByOther(zone, out.rel, { user_id: ctx.user.id, conv_id: ctx.convId }, ctx.valves.lock_max_age_hours);
  const oldSize = out.stat?.isFile() ? out.stat.size : 0;
  await guardWrite(ctx, out);
  const room = Math.max(0, zone.scope.limitBytes - (await scopeTotal(zone.scope))) + oldSize;
  const result = await exportRows(
    dbTarget(target),
    { query, params: args.params, outAbs: out.abs, maxBytes: ctx.valves.max_file_size_mb * MIB, roomBytes: room, outShown: out.shown },
    { timeoutSeconds: ctx.valves.sqlite_timeout_seconds },
  );
  if (out.stat === undefined) await recordCreated(ctx, out);
  const data: Record<string, unknown> = {
    path: target.rel,
    zone: zone.label,
    query,
    output_csv: out.rel,
    rows_exported: result.rows,
    columns: result.columns,
    size: result.bytes,
    format: 'CSV, RFC 4180 quoting, comma-separated, LF line ends, UTF-8, header row',
  };
  if (oldSize > 0 || out.stat !== undefined) data.replaced = true;
  const res: HandlerResult = {
    data,
    message: `Exported ${plural(result.rows, 'row')} (${formatSize(result.bytes)}) to ${out.shown}.`,
  };
  if (zone.versioned) res.change = { zone, paths: [out.rel], summary: `Export query results to ${out.rel}` };
  return res;
}

function stripExt(rel: string): string {
  return rel.replace(/\.[^./]*$/, '');
}

async function writeQuery(args: Args, ctx: CallContext, target: ZonedPath, query: string, sql: SqlAnalysis): Promise<HandlerResult> {
  ensureNotLockedByOther(target.zone, target.rel, { user_id: ctx.user.id, conv_id: ctx.convId }, ctx.valves.lock_max_age_hours);
  const { limit } = rowLimit(args, ctx, sql);
  const budget = outputLimit(ctx, undefined);
  const dml = ['INSERT', 'UPDATE', 'DELETE', 'REPLACE'].includes(sql.verb);
  const vacuum = sql.verb === 'VACUUM' && !sql.tokens.some((t) => t.kind === 'word' && t.value === 'INTO');
  await guardWrite(ctx, target);
  const outcome = await writeStatement(
    dbTarget(target),
    { query, params: args.params, limit, budget },
    { dml, vacuum },
    { maxFileSizeMb: ctx.valves.max_file_size_mb, journalMode: ctx.valves.sqlite_journal_mode },
    { timeoutSeconds: ctx.valves.sqlite_timeout_seconds },
  );
  if (outcome.created) await recordCreated(ctx, target);
  const res = outcome.result;
  const data: Record<string, unknown> = { path: target.rel, zone: target.zone.label, query, rows_affected: res.changes };
  if (dml && sql.verb !== 'DELETE' && res.changes > 0 && res.lastRowId !== undefined) data.last_row_id = res.lastRowId;
  if (res.columns.length > 0) Object.assign(data, { columns: res.columns, rows: res.rows, row_count: res.rows.length });
  if (outcome.created) data.created = true;
  data.size = outcome.sizeAfter;
  const verb = sql.verb || 'Statement';
  const what = dml ? `${verb} changed ${plural(res.changes, 'row')}` : `${verb} done`;
  const message = outcome.written
    ? `${what}; ${outcome.created ? 'created' : 'saved'} ${target.shown} (${formatSize(outcome.sizeAfter)}).`
    : `${what}; nothing changed, ${target.shown} was left as it was.`;
  const result: HandlerResult = { data, message };
  if (outcome.written && target.zone.versioned) result.change = { zone: target.zone, paths: [target.rel], summary: `SQL ${verb} on ${target.rel}` };
  return result;
}

// ---------------------------------------------------------------------------------------------
// CSV import mode

async function importMode(args: Args, ctx: CallContext, zone: Zone): Promise<HandlerResult> {
  const csvInput = args.import_csv!;
  if (args.table === undefined || args.table.trim() === '') {
    throw shedError('MISSING_PARAMETER', "import_csv needs 'table': the name of the table to create or fill.", {
      details: { parameter: 'table' },
      hint: `Example: ${renderCall('shed_sqlite', { zone: args.zone, path: args.path, import_csv: csvInput, table: suggestTable(csvInput) })}`,
    });
  }
  const table = args.table.trim();
  if (!TABLE_NAME.test(table) || /^sqlite_/i.test(table)) {
    throw shedError('INVALID_PARAMETER', `'table' ${showValue(args.table)} is not a valid table name: use letters, digits and _ only, not starting with a digit (and not starting with sqlite_).`, {
      details: { parameter: 'table', received: args.table, suggested: safeTableName(table) },
      hint: `For example table="${safeTableName(table)}".`,
    });
  }
  if (ctx.valves.sqlite_readonly) {
    throw shedError('COMMAND_FORBIDDEN', 'The admin made SQLite read-only: a CSV import would write a database.', {
      details: { parameter: 'import_csv' },
      hint: 'Only read queries are possible on this deployment.',
    });
  }
  if (zone.readonly) {
    throw shedError('ZONE_FORBIDDEN', `CSV import writes a database, which is not allowed in ${zone.label}.`, {
      details: { zone: zone.label },
      hint: `Move the CSV first: shed_move_uploads_to_storage(src="${csvInput}", dest="${csvInput}"), then import with zone="storage".`,
    });
  }
  const encoding = args.encoding === undefined ? undefined : normalizeEncoding(args.encoding);
  if (args.encoding !== undefined && encoding === undefined) {
    throw shedError('INVALID_PARAMETER', `'encoding' ${showValue(args.encoding)} is not supported; use one of ${ENCODING_NAMES.join(', ')} (or omit it to detect).`, {
      details: { parameter: 'encoding', received: args.encoding, suggested: 'utf-8' },
    });
  }
  const delimiter = parseDelimiter(args.delimiter);
  const csv = locate(zone, csvInput, 'import_csv', 'read', args.allow_zone_in_path);
  if (csv.stat === undefined) throw notFound(csv, 'import_csv');
  requireFile(csv, 'import_csv');
  const target = locate(zone, args.path, 'path', 'write', args.allow_zone_in_path);
  requireNotRoot(target);
  if (target.stat !== undefined) requireFile(target);
  if (target.abs === csv.abs) {
    throw shedError('INVALID_PARAMETER', "'path' (the database) and 'import_csv' name the same file.", {
      details: { parameter: 'path', received: args.path, suggested: `${stripExt(csv.rel)}.db` },
    });
  }
  ensureNotLockedByOther(zone, target.rel, { user_id: ctx.user.id, conv_id: ctx.convId }, ctx.valves.lock_max_age_hours);

  const started = Date.now();
  let lastEmit = 0;
  await ctx.emit(`Importing ${csv.shown} into table ${table}...`);
  // A typed table takes about 1.1-1.2 times the CSV's bytes: sql.js pre-sizes its in-memory database for that.
  const growthHint = Math.ceil((csv.stat!.size * 5) / 4) + 65536;
  await guardWrite(ctx, target);
  const outcome = await importCsvFile(
    dbTarget(target),
    {
      csvAbs: csv.abs,
      csvShown: csv.shown,
      table,
      ifExists: args.if_exists,
      delimiter,
      encoding,
      hasHeader: args.has_header,
      skipRows: args.skip_rows,
      decimal: args.decimal,
      dateColumns: args.date_columns,
      dateFormat: args.date_format?.trim() ? args.date_format : undefined,
    },
    { maxFileSizeMb: ctx.valves.max_file_size_mb, journalMode: ctx.valves.sqlite_journal_mode, growthHint },
    {
      timeoutSeconds: ctx.valves.sqlite_timeout_seconds,
      onProgress: (done, total, rows) => {
        const now = Date.now();
        if (now - lastEmit < 2000) return;
        lastEmit = now;
        const pct = total > 0 ? Math.min(100, Math.round((done / total) * 100)) : 100;
        void ctx.emit(`Importing ${csv.shown}: ${rows.toLocaleString('en-US')} rows (${pct}%)`);
      },
    },
  );
  if (outcome.created) await recordCreated(ctx, target);
  const report: ImportReport = outcome.result;
  await ctx.emit(`Imported ${report.rows_imported.toLocaleString('en-US')} rows into ${table}`, true);
  const data: Record<string, unknown> = {
    db_path: target.rel,
    csv_path: csv.rel,
    zone: zone.label,
    table,
    if_exists: args.if_exists,
    columns: report.columns,
    rows_imported: report.rows_imported,
    import_info: { ...report, table: undefined, columns: undefined, rows_imported: undefined, seconds: Math.round((Date.now() - started) / 100) / 10 },
    db_size: outcome.sizeAfter,
  };
  const notes: string[] = [];
  if (report.rows_padded || report.rows_truncated) {
    notes.push(`${plural((report.rows_padded ?? 0) + (report.rows_truncated ?? 0), 'row')} had a different number of fields than the header (padded with NULL or cut; first at data row ${report.first_ragged_row})`);
  }
  if (report.rows_imported === 0) notes.push('the file has a header but no data rows: the table is empty');
  if (report.detected_decimal === ',') {
    const cols = report.decimal_comma_columns ?? [];
    notes.push(`a decimal comma was detected (1.234,56 read as 1234.56) in ${cols.map((c) => `'${c}'`).join(', ')}; if that is wrong, re-import with decimal="." and if_exists="replace"`);
  }
  // Every suggestion, not only the first: each names a column whose values would otherwise be misread.
  for (const s of report.suggestions ?? []) notes.push(s.replace(/\.$/, ''));
  const types = Object.entries(report.column_types)
    .slice(0, 12)
    .map(([c, t]) => `${c} ${t}`)
    .join(', ');
  const message = `Imported ${plural(report.rows_imported, 'row')} from ${csv.shown} into table '${table}' of ${target.shown} (${types}${report.columns.length > 12 ? ', ...' : ''}).${notes.length ? ` Note: ${notes.join('; ')}.` : ''}`;
  const result: HandlerResult = { data, message };
  if (zone.versioned) result.change = { zone, paths: [target.rel], summary: `Import ${csv.rel} into table ${table} of ${target.rel}` };
  return result;
}

function parseDelimiter(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  const named: Record<string, string> = { '\\t': '\t', tab: '\t', comma: ',', semicolon: ';', pipe: '|', space: ' ' };
  const d = named[raw.toLowerCase()] ?? raw;
  if (d.length !== 1 || d === '"' || d === '\n' || d === '\r') {
    throw shedError('INVALID_PARAMETER', `'delimiter' must be one character such as "," ";" "\\t" (tab) or "|"; got ${showValue(raw)}.`, {
      details: { parameter: 'delimiter', received: raw, suggested: ';' },
      hint: 'Omit delimiter to detect it.',
    });
  }
  return d;
}

function suggestTable(csvPath: string): string {
  const base = csvPath.split('/').pop() ?? 'data';
  return safeTableName(base.replace(/\.[^.]*$/, '')) || 'data';
}

function safeTableName(raw: string): string {
  let t = raw.replace(/[^A-Za-z0-9_]+/g, '_').replace(/^_+|_+$/g, '');
  if (t === '') t = 'data';
  if (/^[0-9]/.test(t)) t = `t_${t}`;
  if (/^sqlite_/i.test(t)) t = `t_${t}`;
  return t;
}
