import fs from 'node:fs';
import { cleanLocks, cleanTempFiles, emptyCleaned } from '../core/locks/maintenance.js';
import { userScope } from '../core/zones/zones.js';
import { defineFunction } from '../registry/define.js';
import { plural } from '../core/text/format.js';

const HOUR = 3600_000;

export const shedMaintenance = defineFunction({
  name: 'shed_maintenance',
  category: 'info',
  summary: 'Clean stale locks and leftovers.',
  description: 'Remove expired or corrupt locks, orphan working copies and stale temp files.',
  params: {},
  example: {},
  mutates: true,
  async handler(_args, ctx) {
    const now = Date.now();
    const ages = { maxLockAgeHours: ctx.valves.lock_max_age_hours, scratchMs: (ctx.valves.exec_timeout_max + 120) * 1000, tempMs: HOUR, now };
    const out = emptyCleaned();
    for (const name of ['storage', 'documents'] as const) cleanLocks(ctx.zone(name, undefined), ages, out);
    // Temp files of every tree the user owns, Uploads of all conversations included (only existing trees).
    for (const [label, root] of Object.entries(userScope(ctx.valves, ctx.user.id).trees)) {
      if (fs.statSync(root, { throwIfNoEntry: false })?.isDirectory()) cleanTempFiles(label, root, ages, out);
    }
    const visible = out.expired_locks.length + out.corrupted_locks.length + out.orphan_editzones.length + out.temp_files.length;
    const total = visible + out.internal;
    return {
      data: {
        expired_locks: out.expired_locks,
        corrupted_locks: out.corrupted_locks,
        orphan_editzones: out.orphan_editzones,
        // Group ownership records arrive with group spaces; none to check yet.
        orphan_ownerships: [],
        temp_files: out.temp_files,
        internal_leftovers: out.internal,
        cleaned: total,
      },
      message:
        total === 0
          ? 'Maintenance complete: nothing to clean.'
          : `Maintenance complete: ${plural(total, 'item')} cleaned (${out.expired_locks.length} expired lock(s), ${out.corrupted_locks.length} corrupt lock(s), ${out.orphan_editzones.length} orphan working cop(ies), ${out.temp_files.length} temp file(s), ${out.internal} internal leftover(s)).`,
    };
  },
});
