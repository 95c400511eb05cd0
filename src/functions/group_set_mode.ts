import { z } from 'zod';
import { getRecord, updateRecord } from '../core/services/groups/access.js';
import { OWNERSHIP_MODES } from '../core/services/groups/accessdb.js';
import { shedError } from '../core/base/errors.js';
import { defineFunction } from '../registry/define.js';
import { allowZoneInPath, pathParam } from '../registry/params.js';
import { locate, requireNotRoot } from '../core/base/files/located.js';
import { diskRel } from '../core/base/files/entries.js';
import { groupZone } from '../core/services/groups/zone.js';

export const shedGroupSetMode = defineFunction({
  name: 'shed_group_set_mode',
  category: 'groups',
  summary: 'Set who may edit your file.',
  description: 'Set who may change a group file you own: owner, group (every member) or owner_ro (nobody).',
  params: {
    group: z.string().describe('Group name or id'),
    path: pathParam('File in the group'),
    mode: z.enum(OWNERSHIP_MODES).describe('Who may change it'),
    allow_zone_in_path: allowZoneInPath,
  },
  example: { group: 'team', path: 'plan.md', mode: 'owner' },
  mutates: true,
  hints: { destructive: false, idempotent: true },
  async handler(args, ctx) {
    const { group, zone } = await groupZone(ctx, args.group);
    const target = locate(zone, args.path, 'path', 'read', args.allow_zone_in_path);
    requireNotRoot(target);
    const rel = diskRel(target);
    const rec = await getRecord(zone.group!.base, group.id, rel);
    if (rec === undefined) {
      throw shedError('FILE_NOT_FOUND', `No ownership record for ${target.shown}: it has no owner (every member may change it).`, {
        details: { parameter: 'path', path: rel },
        hint: `shed_group_info(group="${group.name}") shows owners and modes; files made by shed_exec or copied in by others have none.`,
      });
    }
    if (rec.owner !== ctx.user.id) {
      throw shedError('NOT_FILE_OWNER', `Only the owner '${rec.owner}' may change the mode of ${target.shown}.`, {
        details: { path: rel, owner: rec.owner },
        hint: `Ask '${rec.owner}', or copy the file to a new name you will own.`,
      });
    }
    await updateRecord(zone.group!.base, group.id, rel, { mode: args.mode });
    return { data: { group: group.name, path: rel, old_mode: rec.mode, new_mode: args.mode }, message: `${target.shown}: mode ${rec.mode} -> ${args.mode}.` };
  },
});
