import { defineFunction } from '../registry/define.js';
import { plural } from '../core/base/text/format.js';

export const shedGroupList = defineFunction({
  name: 'shed_group_list',
  category: 'groups',
  summary: 'Your groups.',
  description: 'The groups you belong to (use one with zone="group", group="...").',
  params: {},
  example: {},
  async handler(_args, ctx) {
    const dir = ctx.groups();
    const groups = await dir.groupsOf(ctx.user.id);
    const out = [];
    for (const g of groups) out.push({ id: g.id, name: g.name, description: g.description, member_count: (await dir.members(g.id)).length });
    return {
      data: { groups: out, count: out.length },
      message: out.length === 0 ? 'You are not a member of any group.' : `You belong to ${plural(out.length, 'group')}: ${out.map((g) => g.name).join(', ')}.`,
    };
  },
});
