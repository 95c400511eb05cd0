/**
 * Shared by the shed_group_* functions: resolving the group parameter (membership checked) and
 * opening its space.
 */
import { resolveGroup } from './access.js';
import { openGroupZone, type Zone } from '../../base/zones/zones.js';
import type { Identity } from '../../base/identity.js';
import type { Valves } from '../../base/valves.js';
import type { GroupDirectory, GroupInfo } from './directory.js';

export async function groupZone(ctx: { fn: string; user: Identity; valves: Valves; groups(): GroupDirectory }, raw: string | undefined): Promise<{ group: GroupInfo; zone: Zone }> {
  const group = await resolveGroup(ctx.groups(), raw, ctx.user, ctx.fn);
  return { group, zone: openGroupZone(ctx.valves, group) };
}

