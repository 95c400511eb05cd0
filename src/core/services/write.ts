/**
 * The one write path of the file functions: ownership, size and quota checks, then an atomic
 * replace; and the lock rule every read-modify-write follows.
 */
import nodeFs from 'node:fs';
import { atomicWrite } from '../base/fs/atomic.js';
import { ensureNotLockedByOther, withFileLock } from '../base/locks/locks.js';
import { ensureFileSize, ensureQuota } from './quota/quota.js';
import type { CallScope } from './call.js';
import { guardWrite, recordCreated } from './groups/enforce.js';
import type { ZonedPath } from '../base/files/located.js';

/**
 * Replaces a file's content after the two write checks: the resulting size against
 * max_file_size_mb, the net growth against the quota.
 */
export async function writeChecked(ctx: CallScope, target: ZonedPath, bytes: Uint8Array, oldSize: number): Promise<void> {
  // Group zones: the ownership mode is checked before anything changes; a new file gets its record.
  const created = target.zone.group !== undefined && !nodeFs.existsSync(target.abs);
  await guardWrite(ctx, target);
  ensureFileSize(bytes.length, ctx.valves.max_file_size_mb, target.shown);
  await ensureQuota(target.zone.scope, bytes.length - oldSize);
  await atomicWrite(target.abs, bytes);
  if (created) await recordCreated(ctx, target);
}

/**
 * Runs a read-modify-write of one file under the lock rules: safe mode holds the file's lock for the
 * duration; unsafe mode only refuses a live lock of another conversation.
 */
export async function underLock<T>(ctx: CallScope, target: ZonedPath, safe: boolean, fn: () => Promise<T>): Promise<T> {
  const owner = { user_id: ctx.user.id, conv_id: ctx.convId };
  if (safe) return withFileLock(target.zone, target.rel, owner, ctx.valves.lock_max_age_hours, fn);
  ensureNotLockedByOther(target.zone, target.rel, owner, ctx.valves.lock_max_age_hours);
  return fn();
}
