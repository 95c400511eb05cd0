import fs from 'node:fs';
import { atomicCopy, readRange } from '../core/base/fs/atomic.js';
import { acquireLock, isEditLock, releaseLock, sameOwner, type Acquired } from '../core/base/locks/locks.js';
import { ensureCopyRoom } from '../core/services/quota/working-copies.js';
import { removeWorkingCopy, sessionFor } from '../core/base/locks/session.js';
import { defineFunction } from '../registry/define.js';
import { looksBinary, outputLimit, renderCall } from '../core/base/text/format.js';
import { allowZoneInPath, groupParam, pathParam, zoneParam } from '../registry/params.js';
import { requireFile } from '../core/base/files/located.js';
import { EDIT_ZONES, editTarget } from '../core/base/files/edit-target.js';
import { guardWrite } from '../core/services/groups/enforce.js';

export const shedLockeditOpen = defineFunction({
  name: 'shed_lockedit_open',
  category: 'edit',
  summary: 'Lock a file; get a working copy.',
  description: 'Lock a file and get a working copy: change it with shed_lockedit_overwrite or shed_lockedit_exec, then shed_lockedit_save or shed_lockedit_cancel.',
  params: {
    zone: zoneParam(EDIT_ZONES),
    path: pathParam('File to edit'),
    group: groupParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: EDIT_ZONES, writes: true },
  mutates: true,
  hints: { destructive: false },
  example: { zone: 'storage', path: 'report.md' },
  async handler(args, ctx) {
    const t = editTarget(ctx, args, 'write');
    requireFile(t.target);
    await guardWrite(ctx, t.target, 'edit');
    const maxAge = ctx.valves.lock_max_age_hours;
    const got = await acquireLock(t.zone, t.key, t.owner, maxAge, 'edit');
    const previous = got.tookOver?.previous;
    // The session whose lock went stale is over: its working copy can never be saved.
    if (previous && isEditLock(previous) && !sameOwner(previous, t.owner)) removeWorkingCopy(t.zone, previous.conv_id, t.key);
    const before = sessionFor(t.zone, t.key, t.owner);
    let continued = false;
    if (got.reentered && before.copyStat?.isFile()) {
      continued = true; // the same conversation opens again: keep its unsaved changes
    } else {
      try {
        await ensureCopyRoom(t.zone.scope, fs.statSync(t.target.abs).size);
        await copyIn(t.target.abs, before.copy);
      } catch (err) {
        if (!got.reentered) releaseLock(t.zone, t.key, got.lock.token);
        throw err;
      }
    }
    const copyStat = fs.statSync(before.copy);
    const view = preview(before.copy, copyStat.size, outputLimit(ctx, undefined));
    const data: Record<string, unknown> = {
      zone: t.zone.label,
      path: t.target.rel,
      size: copyStat.size,
      is_binary: view.binary,
      content: view.content,
      truncated: view.truncated,
      locked_at: got.lock.locked_at,
      continued,
    };
    const notes: string[] = [];
    if (got.tookOver) {
      data.stale_lock_taken_over = staleNote(got, ctx.user.id);
      notes.push(`A stale lock (${got.tookOver.why}) was taken over.`);
    }
    if (continued) notes.push('It was already open in this conversation: the working copy keeps your unsaved changes.');
    if (view.truncated) {
      const more = renderCall('shed_lockedit_exec', { zone: args.zone, ...(args.group ? { group: args.group } : {}), path: t.target.rel, cmd: 'sed', args: ['-n', '100,200p', '.'] });
      notes.push(`Content truncated to ${view.content.length} characters; see more with ${more}.`);
    }
    if (view.binary) notes.push('The file is binary: content is not shown; change it with shed_lockedit_exec.');
    return {
      data,
      message: `Opened ${t.target.shown} for editing (${copyStat.size} bytes, locked for this conversation). Finish with shed_lockedit_save or shed_lockedit_cancel.${notes.length ? ` ${notes.join(' ')}` : ''}`,
    };
  },
});

/** Copies the file to the working copy through a temp file, so a copy is whole or absent. */
async function copyIn(src: string, copy: string): Promise<void> {
  fs.rmSync(copy, { recursive: true, force: true }); // an old copy of a lost session
  await atomicCopy(src, copy);
}

function preview(abs: string, size: number, limit: number): { content: string; truncated: boolean; binary: boolean } {
  const bytes = readRange(abs, 0, Math.min(size, limit * 4 + 4));
  if (looksBinary(bytes)) return { content: '', truncated: false, binary: true };
  const text = new TextDecoder('utf-8').decode(bytes);
  if (text.length <= limit && bytes.length === size) return { content: text, truncated: false, binary: false };
  return { content: text.slice(0, limit), truncated: true, binary: false };
}

function staleNote(got: Acquired, userId: string): Record<string, unknown> {
  const prev = got.tookOver!.previous;
  return {
    reason: got.tookOver!.why,
    ...(prev ? { locked_at: prev.locked_at, held_by: prev.user_id === userId ? 'another conversation' : 'another user' } : {}),
  };
}
