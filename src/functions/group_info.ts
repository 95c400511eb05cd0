import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { allRecords } from '../core/services/groups/access.js';
import { formatSize } from '../core/base/text/size.js';
import { defineFunction } from '../registry/define.js';
import { plural } from '../core/base/text/format.js';
import { groupZone } from '../core/services/groups/zone.js';
import { walkEntriesSliced } from '../core/base/fs/walk.js';

const MAX_FILES = 1000;

export const shedGroupInfo = defineFunction({
  name: 'shed_group_info',
  category: 'groups',
  summary: 'Members and files (owner, mode).',
  description: 'A group\'s members and files (size, owner, write mode).',
  params: {
    group: z.string().describe('Group name or id'),
  },
  example: { group: 'team' },
  async handler(args, ctx) {
    const { group, zone } = await groupZone(ctx, args.group);
    const members = await ctx.groups().members(group.id);
    const records = new Map((await allRecords(zone.group!.base, group.id)).map((r) => [r.path, r]));
    const files: { path: string; size: number; owner: string; mode: string }[] = [];
    let total = 0;
    let count = 0;
    // Sliced: a member can leave 30,000 files in one folder; one removed meanwhile is simply not listed.
    for await (const { full, entry } of walkEntriesSliced(zone.root)) {
      if (!entry.isFile()) continue;
      let size: number;
      try {
        size = fs.lstatSync(full).size;
      } catch {
        continue; // removed, or a folder on the way replaced by a file, since the listing
      }
      const child = path.relative(zone.root, full).split(path.sep).join('/');
      total += size;
      count++;
      const rec = records.get(child);
      if (files.length < MAX_FILES) files.push({ path: child, size, owner: rec?.owner ?? 'unknown', mode: rec?.mode ?? 'group' });
    }
    files.sort((a, b) => a.path.localeCompare(b.path));
    return {
      data: { group_id: group.id, name: group.name, description: group.description, members, member_count: members.length, files, total_files: count, total_size: total, total_size_human: formatSize(total), ...(count > files.length ? { truncated: true } : {}) },
      message: `Group ${group.name}: ${plural(members.length, 'member')}, ${plural(count, 'file')} (${formatSize(total)}).`,
    };
  },
});
