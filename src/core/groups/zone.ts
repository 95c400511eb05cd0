/**
 * Shared by the shed_group_* functions: resolving the group parameter (membership checked) and
 * opening its space.
 */
import { resolveGroup } from './access.js';
import type { GroupInfo } from './directory.js';
import { openGroupZone, type Zone } from '../zones/zones.js';
import type { CallScope } from '../call.js';

export async function groupZone(ctx: CallScope, raw: string | undefined): Promise<{ group: GroupInfo; zone: Zone }> {
  const group = await resolveGroup(ctx.groups(), raw, ctx.user, ctx.fn);
  return { group, zone: openGroupZone(ctx.valves, group) };
}

