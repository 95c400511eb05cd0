import { removeLock } from '../core/base/locks/locks.js';
import { allWorkingCopies, removeWorkingCopy } from '../core/base/locks/session.js';
import { defineFunction } from '../registry/define.js';
import { allowZoneInPath, groupParam, pathParam, zoneParam } from '../registry/params.js';
import { EDIT_ZONES, editTarget } from '../core/base/files/edit-target.js';

export const shedForceUnlock = defineFunction({
  name: 'shed_force_unlock',
  category: 'edit',
  summary: 'Remove an abandoned lock.',
  description: 'Remove a file\'s lock and all its working copies (unsaved edits are lost), e.g. of an abandoned edit.',
  params: {
    zone: zoneParam(EDIT_ZONES),
    path: pathParam('The locked file'),
    group: groupParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: EDIT_ZONES, writes: true },
  mutates: true,
  hints: { idempotent: true },
  example: { zone: 'storage', path: 'report.md' },
  async handler(args, ctx) {
    // 'delete' intent: the file may be gone or be a link by now; the lock is still found by its path.
    const t = editTarget(ctx, args, 'delete');
    const keys = t.key === t.target.rel ? [t.key] : [t.key, t.target.rel];
    let previous: Record<string, unknown> | undefined;
    let lockRemoved = false;
    let copies = 0;
    for (const key of keys) {
      const state = removeLock(t.zone, key);
      if (state.state === 'held') {
        lockRemoved = true;
        const mine = state.lock.user_id === ctx.user.id && state.lock.conv_id === ctx.convId;
        previous = { locked_at: state.lock.locked_at, held_by: mine ? 'this conversation' : state.lock.user_id === ctx.user.id ? 'another conversation' : 'another user' };
      } else if (state.state === 'corrupt') {
        lockRemoved = true;
        previous = { corrupt: true };
      }
      for (const conv of allWorkingCopies(t.zone, key)) {
        removeWorkingCopy(t.zone, conv, key);
        copies++;
      }
    }
    const data: Record<string, unknown> = { zone: t.zone.label, path: t.target.rel, lock_removed: lockRemoved, working_copies_removed: copies };
    if (previous) data.previous_lock = previous;
    const message =
      lockRemoved || copies > 0
        ? `Unlocked ${t.target.shown}: ${lockRemoved ? 'lock removed' : 'there was no lock'}, ${copies} working cop${copies === 1 ? 'y' : 'ies'} discarded. The file itself was not changed.`
        : `${t.target.shown} was not locked; nothing to do.`;
    return { data, message };
  },
});
