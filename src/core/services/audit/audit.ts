/**
 * The audit log: one JSON line per call in {storage_base_path}/audit/audit.jsonl, append-only
 * (O_APPEND, so lines of several processes never interleave), rotated by size into
 * audit-<time>.jsonl files that are deleted after `audit_retention_days`.
 * It records who did what where and how it ended; never file contents, command arguments,
 * tokens or keys: only path parameters (as the caller gave them) and the command name.
 */
import fs from 'node:fs';
import path from 'node:path';
import { readText, writeBytes } from '../../base/fs/read.js';

export interface AuditEntry {
  time: string;
  user: string;
  conversation: string;
  function: string;
  zone?: string;
  group?: string;
  /** Path parameters of the call, as given (cut to 256 characters each). */
  paths?: string[];
  /** shed_exec / shed_lockedit_exec: the command name only. */
  command?: string;
  /** "OK" or the error code. */
  code: string;
  ms: number;
  /** Set when the call was refused for a reason an attack would trigger (escapes, forbidden arguments...). */
  flagged?: true;
}

/** Refusals worth an admin's attention: what escape attempts and privilege probes end as. */
const FLAGGED = new Set(['PATH_ESCAPE', 'PROTECTED_PATH', 'COMMAND_FORBIDDEN', 'ARGUMENT_FORBIDDEN', 'GROUP_ACCESS_DENIED', 'PERMISSION_DENIED', 'NOT_FILE_OWNER', 'BLOCKED_PATH']);

/** Parameters that name paths; everything else (contents, patterns, SQL, arguments) stays out of the log. */
const PATH_KEYS = ['path', 'src', 'dest', 'old_path', 'new_path', 'src_path', 'dest_path', 'dest_subdir', 'filename', 'stdout_file', 'stderr_file', 'output_csv', 'import_csv'];

const FILE = 'audit.jsonl';

export function auditDir(storageBase: string): string {
  return path.join(path.resolve(storageBase), 'audit');
}

export interface AuditSettings {
  storageBase: string;
  maxBytes: number;
  retentionDays: number;
}

/** Builds the entry of one call from its arguments and its envelope. */
export function auditEntry(fn: string, args: Record<string, unknown>, user: string, conversation: string, code: string, ms: number): AuditEntry {
  const entry: AuditEntry = { time: new Date().toISOString(), user, conversation, function: fn, code, ms: Math.round(ms * 10) / 10 };
  if (typeof args.zone === 'string') entry.zone = args.zone.slice(0, 32);
  if (typeof args.group === 'string' && args.group !== '') entry.group = args.group.slice(0, 128);
  const paths = PATH_KEYS.filter((k) => typeof args[k] === 'string' && args[k] !== '').map((k) => (args[k] as string).slice(0, 256));
  if (paths.length > 0) entry.paths = paths;
  if ((fn === 'shed_exec' || fn === 'shed_lockedit_exec') && typeof args.cmd === 'string') entry.command = args.cmd.slice(0, 64);
  if (FLAGGED.has(code)) entry.flagged = true;
  return entry;
}

/** Appends one line; rotates first when the file passed the size limit. Never throws (logging must not fail a call). */
export function appendAudit(settings: AuditSettings, entry: AuditEntry): void {
  const dir = auditDir(settings.storageBase);
  const file = path.join(dir, FILE);
  try {
    const size = fs.statSync(file, { throwIfNoEntry: false })?.size;
    if (size === undefined) fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    else if (size >= settings.maxBytes) rotate(dir, settings.retentionDays);
    writeBytes(file, `${JSON.stringify(entry)}\n`, { mode: 0o600, append: true });
  } catch {
    // A full or read-only disk must not turn every call into an error.
  }
}

function rotate(dir: string, retentionDays: number): void {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const current = path.join(dir, FILE);
  // link() never replaces an existing name (a rotation in the same millisecond takes the next
  // number); another process may have rotated the file a moment ago, then this one just appends.
  for (let n = 0; n < 100; n++) {
    try {
      fs.linkSync(current, path.join(dir, `audit-${stamp}-${String(n).padStart(2, '0')}.jsonl`));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      return;
    }
    fs.rmSync(current, { force: true });
    break;
  }
  pruneAudit(dir, retentionDays);
}

/** Deletes rotated files older than the retention (0 = keep forever); returns how many went. */
export function pruneAudit(dir: string, retentionDays: number, now = Date.now()): number {
  if (retentionDays <= 0) return 0;
  let removed = 0;
  for (const name of rotatedFiles(dir)) {
    const full = path.join(dir, name);
    const st = fs.statSync(full, { throwIfNoEntry: false });
    if (st !== undefined && now - st.mtimeMs > retentionDays * 86_400_000) {
      fs.rmSync(full, { force: true });
      removed++;
    }
  }
  return removed;
}

function rotatedFiles(dir: string): string[] {
  try {
    return fs.readdirSync(dir).filter((n) => /^audit-[\w-]+\.jsonl$/.test(n)).sort();
  } catch {
    return [];
  }
}

export interface AuditQuery {
  user?: string;
  function?: string;
  errorsOnly?: boolean;
  flaggedOnly?: boolean;
  limit?: number;
}

/** The newest matching entries, newest first, across the current and rotated files. */
export function readAudit(storageBase: string, query: AuditQuery = {}): AuditEntry[] {
  const dir = auditDir(storageBase);
  const limit = Math.max(1, Math.min(query.limit ?? 200, 5000));
  const out: AuditEntry[] = [];
  for (const name of [FILE, ...rotatedFiles(dir).reverse()]) {
    let text: string;
    try {
      text = readText(path.join(dir, name));
    } catch {
      continue;
    }
    const lines = text.split('\n');
    for (let i = lines.length - 1; i >= 0 && out.length < limit; i--) {
      const entry = parseLine(lines[i]!);
      if (entry !== undefined && matches(entry, query)) out.push(entry);
    }
    if (out.length >= limit) break;
  }
  return out;
}

function parseLine(line: string): AuditEntry | undefined {
  if (line.trim() === '') return undefined;
  try {
    const v = JSON.parse(line) as AuditEntry;
    return typeof v === 'object' && v !== null && typeof v.function === 'string' ? v : undefined;
  } catch {
    return undefined; // a torn last line after a crash
  }
}

function matches(e: AuditEntry, q: AuditQuery): boolean {
  if (q.user && e.user !== q.user) return false;
  if (q.function && e.function !== q.function) return false;
  if (q.errorsOnly && e.code === 'OK') return false;
  if (q.flaggedOnly && !e.flagged) return false;
  return true;
}
