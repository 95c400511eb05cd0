import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../core/base/errors.js';
import { atomicCopy, syncDirOffLoop } from '../core/base/fs/atomic.js';
import { inspectLock, lockFile, pruneEmpty, releaseLock } from '../core/base/locks/locks.js';
import { editzoneRoot, removeWorkingCopy, requireSession, sessionFor } from '../core/base/locks/session.js';
import { errnoCode } from '../core/base/paths/resolve.js';
import { ensureFileSize, ensureQuota } from '../core/services/quota/quota.js';
import { defineFunction } from '../registry/define.js';
import { allowZoneInPath, groupParam, messageParam, pathParam, zoneParam } from '../registry/params.js';
import { EDIT_ZONES, editTarget } from '../core/base/files/edit-target.js';
import { guardWrite } from '../core/services/groups/enforce.js';
import { assertFence } from '../core/base/locks/lease.js';

export const shedLockeditSave = defineFunction({
  name: 'shed_lockedit_save',
  category: 'edit',
  summary: 'Save the working copy; unlock.',
  description: 'Finish a locked edit: the working copy replaces the file, the lock is released.',
  params: {
    zone: zoneParam(EDIT_ZONES),
    path: pathParam('The file being edited'),
    group: groupParam,
    message: messageParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: EDIT_ZONES, writes: true },
  mutates: true,
  example: { zone: 'storage', path: 'report.md' },
  async handler(args, ctx) {
    const t = editTarget(ctx, args, 'write');
    const state = sessionFor(t.zone, t.key, t.owner);
    if (state.ours && state.copyStat === undefined) {
      // Interrupted after the file was written (or the copy vanished): nothing left to save; free the file.
      releaseLock(t.zone, t.key, state.lock!.token);
      throw shedError('NOT_IN_EDIT_MODE', `${t.target.shown} has no working copy to save (an earlier save may have completed before an interruption); its lock has been released.`, {
        details: { path: t.target.rel, lock_released: true },
        hint: `Check the file with shed_read(zone="${args.zone}", path="${t.target.rel}"); to edit it again: ${t.names.open}.`,
      });
    }
    const s = requireSession(t.zone, t.key, t.owner, t.names);
    // The working copy is server state (editzone/): only a regular file Fileshed wrote may replace the file.
    if (!s.copyStat!.isFile()) {
      throw shedError('IO_ERROR', `The working copy of ${t.target.shown} is not a regular file (it was changed outside Fileshed); nothing was saved.`, {
        details: { path: t.target.rel, reason: 'UNSAFE_SERVER_STATE' },
        hint: `Drop the edit with ${t.names.cancel} and open it again.`,
      });
    }
    const size = s.copyStat!.size;
    const oldSize = t.target.stat?.isFile() ? t.target.stat.size : 0;
    if (t.target.stat?.isDirectory()) {
      throw shedError('NOT_A_FILE', `${t.target.shown} is now a folder; the working copy cannot replace it.`, {
        details: { parameter: 'path', path: t.target.rel },
        hint: `Drop the edit with ${t.names.cancel}.`,
      });
    }
    // The mode may have changed since the edit was opened.
    await guardWrite(ctx, t.target, 'save');
    ensureFileSize(size, ctx.valves.max_file_size_mb, t.target.shown);
    await ensureQuota(t.zone.scope, size - oldSize);

    // Last check right before the write: the lock must still be this acquisition.
    const now = inspectLock(lockFile(t.zone, t.key)!);
    if (now.state !== 'held' || now.lock.token !== s.lock!.token) {
      throw shedError('NOT_LOCK_OWNER', `The lock of ${t.target.shown} changed while saving; nothing was written.`, { details: { path: t.target.rel }, hint: `Try ${t.names.save} again.` });
    }
    await moveInto(s.copy, t.target.abs);
    pruneEmpty(path.dirname(s.copy), editzoneRoot(t.zone));
    removeWorkingCopy(t.zone, ctx.convId, t.key); // nothing left normally; a copy fallback leaves the source
    releaseLock(t.zone, t.key, s.lock!.token);

    return {
      data: { zone: t.zone.label, path: t.target.rel, size, previous_size: oldSize, edit_mode: 'closed' },
      message: `Saved ${t.target.shown} (${size} bytes); the lock is released and edit mode is closed. To change it again, call ${t.names.open}.`,
      change: { zone: t.zone, paths: [t.key], summary: `Edit ${t.target.rel}` },
    };
  },
});

/**
 * Puts the working copy in place of the file in one atomic step: a rename (the copy lives on the
 * same disk), or, across disks, a copy to a temp file beside the file and a rename.
 */
async function moveInto(copy: string, dest: string): Promise<void> {
  const dir = path.dirname(dest);
  fs.mkdirSync(dir, { recursive: true });
  try {
    assertFence();
    fs.renameSync(copy, dest);
  } catch (err) {
    if (errnoCode(err) !== 'EXDEV') throw err;
    await atomicCopy(copy, dest);
  }
  await syncDirOffLoop(dir);
}
