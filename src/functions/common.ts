/**
 * Small helpers shared by the file functions: resolving a path parameter in a zone, insisting on
 * a file or a folder, output limits, and the user-facing name of a path.
 */
import type fs from 'node:fs';
import nodeFs from 'node:fs';
import { shedError, showValue } from '../core/errors.js';
import { atomicWrite } from '../core/fs/atomic.js';
import { ensureNotLockedByOther, withFileLock } from '../core/locks/locks.js';
import { ensureFileSize, ensureQuota } from '../core/quota/quota.js';
import { resolvePath, type Intent, type ResolvedPath } from '../core/paths/resolve.js';
import type { Zone } from '../core/zones/zones.js';
import type { CallContext } from '../registry/define.js';
import { guardWrite, recordCreated } from './ownership.js';

export interface ZonedPath extends ResolvedPath {
  zone: Zone;
  /** What users see: "Storage/notes.txt". */
  shown: string;
}

export function locate(zone: Zone, input: string, param: string, intent: Intent, allowZoneInPath = false): ZonedPath {
  const resolved = resolvePath(zone, input, { param, intent, allowZoneInPath });
  return { ...resolved, zone, shown: shownPath(zone, resolved.rel) };
}

export function shownPath(zone: Zone, rel: string): string {
  return rel ? `${zone.label}/${rel}` : `${zone.label}/`;
}

export function notFound(p: ZonedPath, param = 'path'): Error {
  return shedError('FILE_NOT_FOUND', `${p.shown} does not exist.`, {
    details: { parameter: param, path: p.rel, zone: p.zone.label },
    hint: `Check the name with shed_tree(zone="${p.zone.name}"); paths are case-sensitive.`,
  });
}

/** The stat of an existing regular file, or a clear error. */
export function requireFile(p: ZonedPath, param = 'path'): fs.Stats {
  if (p.stat === undefined) throw notFound(p, param);
  if (p.stat.isDirectory()) {
    throw shedError('NOT_A_FILE', `${p.shown} is a folder, not a file.`, {
      details: { parameter: param, path: p.rel },
      hint: `List it with shed_tree(zone="${p.zone.name}", path="${p.rel || '.'}").`,
    });
  }
  if (!p.stat.isFile()) {
    throw shedError('NOT_A_FILE', `${p.shown} is not a regular file.`, { details: { parameter: param, path: p.rel } });
  }
  return p.stat;
}

export function requireFolder(p: ZonedPath, param = 'path'): fs.Stats {
  if (p.stat === undefined) throw notFound(p, param);
  if (!p.stat.isDirectory()) {
    throw shedError('NOT_A_DIRECTORY', `${p.shown} is a file, not a folder.`, {
      details: { parameter: param, path: p.rel },
      hint: 'Give the folder that contains it, or omit path for the zone root.',
    });
  }
  return p.stat;
}

/** Refuses the zone root where a file or entry is needed. */
export function requireNotRoot(p: ZonedPath, param = 'path'): void {
  if (p.rel !== '') return;
  throw shedError('INVALID_PATH', `${param} points at the root of ${p.zone.label}; name a file or folder inside it.`, {
    details: { parameter: param },
    hint: `Example: ${param}="notes.txt"`,
  });
}

/** Effective character limit: none given → default valve; 0 → absolute ceiling; else capped. */
export function outputLimit(ctx: CallContext, requested: number | undefined): number {
  const { max_output_default: def, max_output_absolute: abs } = ctx.valves;
  if (requested === undefined) return Math.min(def, abs);
  if (requested < 0) {
    throw shedError('INVALID_PARAMETER', `'max_output' must be 0 (the maximum) or a positive number of characters; got ${showValue(requested)}.`, {
      details: { parameter: 'max_output', received: requested },
      hint: 'Omit max_output for the default, or use e.g. max_output=20000.',
    });
  }
  return requested === 0 ? abs : Math.min(requested, abs);
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** True when the bytes look binary: a NUL byte in the first 8 KiB. */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8192).includes(0);
}

/**
 * Replaces a file's content after the two write checks: the resulting size against
 * max_file_size_mb, the net growth against the quota.
 */
export async function writeChecked(ctx: CallContext, target: ZonedPath, bytes: Uint8Array, oldSize: number): Promise<void> {
  // Group zones: the ownership mode is checked before anything changes; a new file gets its record.
  const created = target.zone.group !== undefined && !nodeFs.existsSync(target.abs);
  await guardWrite(ctx, target);
  ensureFileSize(bytes.length, ctx.valves.max_file_size_mb, target.shown);
  await ensureQuota(target.zone.scope, bytes.length - oldSize);
  atomicWrite(target.abs, bytes);
  if (created) await recordCreated(ctx, target);
}

/**
 * Runs a read-modify-write of one file under the lock rules: safe mode holds the file's lock for the
 * duration; unsafe mode only refuses a live lock of another conversation.
 */
export async function underLock<T>(ctx: CallContext, target: ZonedPath, safe: boolean, fn: () => Promise<T>): Promise<T> {
  const owner = { user_id: ctx.user.id, conv_id: ctx.convId };
  if (safe) return withFileLock(target.zone, target.rel, owner, ctx.valves.lock_max_age_hours, fn);
  ensureNotLockedByOther(target.zone, target.rel, owner, ctx.valves.lock_max_age_hours);
  return fn();
}
