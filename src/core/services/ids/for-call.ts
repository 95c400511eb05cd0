/**
 * The kernel identity one command runs as (valve identity_separation): the caller's uid, their own
 * gid and no supplementary group, in a zone of their own made theirs first (zone-owner.ts); in a
 * group space the member's uid with the group's gid, the space's owners and modes set from its
 * ownership records first (group-owner.ts). Undefined: the server's own uid, as before.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { shedError } from '../../base/errors.js';
import type { Valves } from '../../base/valves.js';
import type { Zone } from '../../base/zones/zones.js';
import { groupGid, userIds } from './allocate.js';
import { claimGroupScratch, syncGroupSpace } from './group-owner.js';
import type { KernelIdentity } from './kernel-identity.js';
import { idRange } from './range.js';
import { separationReport } from './separation.js';
import { canSwitchIdentity } from './switch.js';
import { claimZone } from './zone-owner.js';

/** A personal zone not converted to its user's identity yet, met by a call that may not convert it (no call lock). */
export class UnconvertedZone extends Error {}

export async function callIdentity(valves: Valves, userId: string | undefined, zone: Zone, scratch?: string, mayConvert = true): Promise<KernelIdentity | undefined> {
  const setting = valves.identity_separation;
  if (setting === 'off' || userId === undefined) return undefined;
  if (zone.name === 'group' && zone.group === undefined) return undefined;
  if (!canSwitchIdentity()) {
    if (setting === 'auto') return undefined;
    throw shedError('SANDBOX_UNAVAILABLE', 'Commands are disabled: the admin requires each user\'s commands to run as their own kernel identity (identity_separation=required), but the server can switch neither uid nor gid (it needs root, or CAP_SETUID and CAP_SETGID).', {
      details: { identity_separation: setting },
      hint: 'An admin gives the server CAP_SETUID and CAP_SETGID (see docs/deployment.md), or sets identity_separation=auto.',
    });
  }
  let range;
  try {
    range = idRange(valves);
  } catch (err) {
    throw shedError('INVALID_VALVES', (err as Error).message, { details: { valve: 'identity_id_first' }, hint: 'An admin corrects identity_id_first / identity_id_count.' });
  }
  const base = path.resolve(valves.storage_base_path);
  // The base and the system temp folder (the call's HOME and TMPDIR are made there) must be passable.
  const passable = new Set<string>();
  const closed = closedAncestor(base, passable) ?? closedAncestor(path.join(os.tmpdir(), 'shed-call'), passable);
  if (closed !== undefined) {
    throw shedError('SANDBOX_UNAVAILABLE', `Commands are disabled: users' commands run as their own uid, which cannot pass ${closed} (a folder above the storage base or the temp folder that others may not search).`, {
      details: { folder: closed },
      hint: `An admin makes ${closed} passable (chmod o+x, e.g. chmod 711), moves storage_base_path, or sets identity_separation=off.`,
    });
  }
  const ids = await userIds(base, range, userId);
  if (zone.group !== undefined && scratch !== undefined) {
    // A locked edit of a group file: the member's uid in a scratch folder made theirs (the group's gid
    // only to pass the space's home; nothing of the space is reachable from the scratch folder).
    const gid = await groupGid(base, range, zone.group.id);
    await claimGroupScratch(base, path.dirname(path.dirname(scratch)), scratch, ids.uid, gid);
    return { uid: ids.uid, gid, groups: [gid] };
  }
  if (zone.group !== undefined) {
    // The member's uid; the group's gid as primary (what they make is the group's even outside a
    // setgid folder) and as the only supplementary group: their personal gid is not theirs here.
    const gid = await groupGid(base, range, zone.group.id);
    await syncGroupSpace(base, range, zone, gid);
    return { uid: ids.uid, gid, groups: [gid] };
  }
  if (!(await claimZone(base, userId, zone, ids, scratch, mayConvert))) throw new UnconvertedZone(zone.label);
  return { uid: ids.uid, gid: ids.gid, groups: [] };
}

/**
 * The first folder above `base` that another uid may not search (no o+x), if any. `passable`: the
 * folders this call already found passable (with all theirs above): the base and the temp folder
 * usually share /tmp and / , stat'ed once.
 */
function closedAncestor(base: string, passable: Set<string>): string | undefined {
  for (let dir = path.dirname(base); ; dir = path.dirname(dir)) {
    if (passable.has(dir)) return undefined;
    const st = fs.statSync(dir, { throwIfNoEntry: false });
    if (st && (st.mode & 0o001) === 0) return dir;
    passable.add(dir);
    if (path.dirname(dir) === dir) return undefined;
  }
}

/**
 * A server for several users (`unconfinedAllowed` false: `fileshed serve` without
 * --allow-unconfined) that separates users neither by identity nor by namespaces is one trust
 * domain: commands and scripts are refused there unless the admin accepts that (one_trust_domain).
 */
export function requireSeparation(valves: Valves, sandbox: string, unconfinedAllowed: boolean): void {
  if (unconfinedAllowed || valves.one_trust_domain) return;
  const report = separationReport(valves, sandbox);
  if (report.separation !== 'none') return;
  throw shedError('SANDBOX_UNAVAILABLE', `Commands and scripts are disabled: this server cannot keep its users apart (${report.reason}).`, {
    details: { separation: report.separation, identity_separation: valves.identity_separation, sandbox },
    hint: 'An admin gives the server CAP_SETUID and CAP_SETGID with identity_separation=auto (see docs/deployment.md), or makes bubblewrap work, or sets one_trust_domain=true when every user trusts the others.',
  });
}
