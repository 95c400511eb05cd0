import { shedError } from '../core/base/errors.js';
import { releaseLock, sameOwner } from '../core/base/locks/locks.js';
import { removeWorkingCopy, sessionFor } from '../core/base/locks/session.js';
import { defineFunction } from '../registry/define.js';
import { allowZoneInPath, groupParam, pathParam, zoneParam } from '../registry/params.js';
import { EDIT_ZONES, editTarget } from '../core/base/files/edit-target.js';

export const shedLockeditCancel = defineFunction({
  name: 'shed_lockedit_cancel',
  category: 'edit',
  summary: 'Discard the working copy; unlock.',
  description: 'Drop this conversation\'s locked edit: the file stays as it was, the lock is released.',
  params: {
    zone: zoneParam(EDIT_ZONES),
    path: pathParam('The file being edited'),
    group: groupParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: EDIT_ZONES, writes: true },
  mutates: true,
  example: { zone: 'storage', path: 'report.md' },
  async handler(args, ctx) {
    // 'delete' intent: cancelling must work whatever became of the file meanwhile (even a link now).
    const t = editTarget(ctx, args, 'delete');
    const s = sessionFor(t.zone, t.key, t.owner);
    const haveCopy = s.copyStat !== undefined;
    if (!s.ours && !haveCopy) {
      if (s.lock !== undefined && !sameOwner(s.lock, t.owner)) {
        throw shedError('NOT_LOCK_OWNER', `${t.target.shown} is locked by ${s.lock.user_id === t.owner.user_id ? 'another conversation' : 'another user'} since ${s.lock.locked_at}; only that conversation can cancel its edit.`, {
          details: { path: t.target.rel, locked_at: s.lock.locked_at },
          hint: `If that edit was abandoned: shed_force_unlock(zone="${args.zone}", path="${t.target.rel}").`,
        });
      }
      throw shedError('NOT_IN_EDIT_MODE', `${t.target.shown} is not open for editing in this conversation; there is nothing to cancel.`, {
        details: { path: t.target.rel },
        hint: `Open a locked edit with ${t.names.open}.`,
      });
    }
    removeWorkingCopy(t.zone, ctx.convId, t.key);
    const released = s.ours ? releaseLock(t.zone, t.key, s.lock!.token) : false;
    const lost = !s.ours; // the copy of a session whose lock was lost or taken over
    return {
      data: { zone: t.zone.label, path: t.target.rel, changes_discarded: haveCopy, lock_released: released, edit_mode: 'closed' },
      message: lost
        ? `Discarded the working copy of ${t.target.shown}; its lock had already been lost, so the file was not touched.`
        : `Cancelled the edit of ${t.target.shown}: changes discarded, lock released, the file is unchanged.`,
    };
  },
});
