import { maintainUser, reportCount } from '../core/services/maintenance/maintain.js';
import { emptyReport, recoverUserHome } from '../core/services/recovery/recover.js';
import { userHome } from '../core/base/zones/zones.js';
import { defineFunction } from '../registry/define.js';
import { plural } from '../core/base/text/format.js';

export const shedMaintenance = defineFunction({
  name: 'shed_maintenance',
  category: 'info',
  summary: 'Clean stale locks and leftovers.',
  description: 'Remove expired or corrupt locks, orphan working copies and stale temp files.',
  params: {},
  example: {},
  mutates: true,
  async handler(_args, ctx) {
    const out = await maintainUser(ctx.valves, ctx.user.id);
    // Under this call's lock no other call of this user runs in any process: uncommitted Documents
    // changes are leftovers of a killed call. (Temp files keep the age rule of maintainUser.)
    const recovered = emptyReport();
    const home = userHome(ctx.valves, ctx.user.id);
    await recoverUserHome(home, ctx.user.id, home, recovered, false);
    const total = reportCount(out) + recovered.commits.length;
    return {
      data: {
        expired_locks: out.expired_locks,
        corrupted_locks: out.corrupted_locks,
        orphan_editzones: out.orphan_editzones,
        // Group ownership records arrive with group spaces; none to check yet.
        orphan_ownerships: [],
        temp_files: out.temp_files,
        expired_uploads: out.expired_uploads,
        recovered_commits: recovered.commits,
        internal_leftovers: out.internal,
        cleaned: total,
      },
      message:
        total === 0
          ? 'Maintenance complete: nothing to clean.'
          : `Maintenance complete: ${plural(total, 'item')} cleaned (${out.expired_locks.length} expired lock(s), ${out.corrupted_locks.length} corrupt lock(s), ${out.orphan_editzones.length} orphan working cop(ies), ${out.temp_files.length} temp file(s), ${out.expired_uploads.length} expired upload folder(s), ${out.internal} internal leftover(s)${recovered.commits.length ? `, ${recovered.commits.length} recovered commit(s) of changes an interrupted call left uncommitted` : ''}).`,
    };
  },
});
