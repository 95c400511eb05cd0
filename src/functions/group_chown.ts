import { z } from 'zod';
import { getRecord, updateRecord } from '../core/services/groups/access.js';
import { shedError, showValue } from '../core/base/errors.js';
import { defineFunction } from '../registry/define.js';
import { allowZoneInPath, pathParam } from '../registry/params.js';
import { locate, requireNotRoot } from '../core/base/files/located.js';
import { diskRel } from '../core/base/files/entries.js';
import { groupZone } from '../core/services/groups/zone.js';
import { ID_RULE } from '../core/base/identity.js';

export const shedGroupChown = defineFunction({
  name: 'shed_group_chown',
  category: 'groups',
  summary: 'Give your file to another member.',
  description: 'Give a group file you own to another member of the group.',
  params: {
    group: z.string().describe('Group name or id'),
    path: pathParam('File in the group'),
    new_owner: z.string().describe('User id of a member'),
    allow_zone_in_path: allowZoneInPath,
  },
  example: { group: 'team', path: 'plan.md', new_owner: 'bob' },
  mutates: true,
  hints: { destructive: false, idempotent: true },
  async handler(args, ctx) {
    const { group, zone } = await groupZone(ctx, args.group);
    const target = locate(zone, args.path, 'path', 'read', args.allow_zone_in_path);
    requireNotRoot(target);
    const newOwner = args.new_owner.trim();
    if (!ID_RULE.test(newOwner)) {
      throw shedError('INVALID_OWNER', `new_owner must be a user id (1-128 characters from A-Z a-z 0-9 _ -); got ${showValue(args.new_owner)}.`, {
        details: { parameter: 'new_owner', received: args.new_owner },
        hint: `shed_group_info(group="${group.name}") lists the member ids.`,
      });
    }
    const rel = diskRel(target);
    const rec = await getRecord(zone.group!.base, group.id, rel);
    if (rec === undefined) {
      throw shedError('FILE_NOT_FOUND', `No ownership record for ${target.shown}: it has no owner to transfer.`, {
        details: { parameter: 'path', path: rel },
        hint: `shed_group_info(group="${group.name}") shows owners and modes.`,
      });
    }
    if (rec.owner !== ctx.user.id) {
      throw shedError('NOT_FILE_OWNER', `Only the owner '${rec.owner}' may give ${target.shown} away.`, { details: { path: rel, owner: rec.owner }, hint: `Ask '${rec.owner}'.` });
    }
    const members = await ctx.groups().members(group.id);
    if (!members.includes(newOwner)) {
      throw shedError('INVALID_OWNER', `'${newOwner}' is not a member of the group '${group.name}'.`, {
        details: { parameter: 'new_owner', received: newOwner, members: members.slice(0, 50) },
        hint: `Choose one of: ${members.slice(0, 10).join(', ')}.`,
      });
    }
    await updateRecord(zone.group!.base, group.id, rel, { owner: newOwner });
    return { data: { group: group.name, path: rel, old_owner: rec.owner, new_owner: newOwner }, message: `${target.shown} now belongs to ${newOwner}.` };
  },
});
