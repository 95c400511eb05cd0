/**
 * output_csv: streams every row of a query into a CSV file (RFC 4180 quoting, LF line ends, UTF-8
 * without BOM, a header row). The rows go to a temp file beside the target, which replaces the
 * target only when complete (fsync + rename), so a failure never leaves half a file.
 * NULL is an empty field, BLOBs are written as hex, integers exactly (no 2^53 rounding).
 */
import fs from 'node:fs';
import { ShedError, shedError } from '../../base/errors.js';
import { openAtomic } from '../../base/fs/atomic.js';
import { sqlError } from './query.js';
import type { SqlDb, SqlStatement, SqlValue } from './sqldb.js';

const FLUSH_BYTES = 1 << 20;

export interface ExportLimits {
  /** Largest file allowed (max_file_size_mb). */
  maxBytes: number;
  /** Bytes the quota still allows for this file (its old size included). */
  roomBytes: number;
  shown: string;
}

export function csvField(v: SqlValue): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : String(v);
  if (typeof v !== 'string') return Buffer.from(v).toString('hex');
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** Writes all rows of `stmt` (already bound) to `abs`; returns the number of data rows and bytes. */
export function exportCsv(db: SqlDb, stmt: SqlStatement, sql: string, abs: string, limits: ExportLimits): { rows: number; bytes: number; columns: string[] } {
  const out = openAtomic(abs, 0o644);
  const fd = out.fd;
  let rows = 0;
  let bytes = 0;
  let pending: string[] = [];
  let pendingLen = 0;
  const columns = stmt.columns();
  const flush = () => {
    if (pending.length === 0) return;
    const buf = Buffer.from(pending.join(''), 'utf8');
    pending = [];
    pendingLen = 0;
    bytes += buf.length;
    const cap = Math.min(limits.maxBytes, limits.roomBytes);
    if (bytes > cap) {
      const quota = limits.roomBytes < limits.maxBytes;
      throw shedError(quota ? 'QUOTA_EXCEEDED' : 'FILE_TOO_LARGE', `The CSV export to ${limits.shown} grew past ${quota ? 'the space left in the quota' : 'the largest file size allowed'} (${cap} bytes) after ${rows} rows; nothing was written.`, {
        details: { rows_written_before_stop: rows, limit_bytes: cap },
        hint: 'Export fewer rows or columns (WHERE ..., LIMIT ...), or free space with shed_delete.',
      });
    }
    let off = 0;
    while (off < buf.length) off += fs.writeSync(fd, buf, off, buf.length - off);
  };
  const add = (line: string) => {
    pending.push(line);
    pendingLen += line.length;
    if (pendingLen >= FLUSH_BYTES) flush();
  };
  try {
    add(`${columns.map(csvField).join(',')}\n`);
    try {
      for (let values = stmt.step(); values !== undefined; values = stmt.step()) {
        add(`${values.map(csvField).join(',')}\n`);
        rows++;
      }
    } catch (err) {
      throw err instanceof ShedError ? err : sqlError(db, err, sql);
    }
    flush();
  } catch (err) {
    out.abort();
    throw err;
  } finally {
    stmt.free();
  }
  out.commitSync(); // a pool job or the SQLite child: off the event loop already
  return { rows, bytes, columns };
}
