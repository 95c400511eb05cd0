/** Three users, two groups: team = alice + bob, lab = alice + carol. carol is not in team. */
import fs from 'node:fs';
import path from 'node:path';
import { makeShed, mod, type Shed } from '../helpers/shed.js';

export async function groupShed(valves: Record<string, unknown> = {}): Promise<Shed & { groupPath(rel?: string, id?: string): string }> {
  const s = makeShed(valves);
  await mod.admin.groups.add(s.base, 'team', 'Team', 'the team');
  await mod.admin.groups.add(s.base, 'lab', 'Lab');
  for (const u of ['alice', 'bob']) await mod.admin.groups.addMember(s.base, 'team', u);
  for (const u of ['alice', 'carol']) await mod.admin.groups.addMember(s.base, 'lab', u);
  return Object.assign(s, { groupPath: (rel = '', id = 'team') => path.join(s.base, 'groups', id, 'data', rel) });
}

export const read = (p: string) => (fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : undefined);
