/**
 * Which wall keeps one user's commands from another's and from the server, beside the sandbox
 * (SPEC section 8, "Each user is a kernel identity"), for /healthz, shed_parameters, the admin page
 * and `fileshed doctor`:
 * - `identity`: each user's commands run as their own uid (valve identity_separation, a server that
 *   can switch, an id range its user namespace maps); file permissions and process credentials hold;
 * - `namespaces`: the server's uid, but each command in namespaces of its own (bwrap: mount, PID,
 *   user, IPC): other users' files and processes are absent;
 * - `none`: the server's uid and the server's namespaces (landlock, validated): one trust domain,
 *   held apart by the Landlock ruleset and the filter alone.
 */
import type { Valves } from '../../base/valves.js';
import { idRange, rangeMapped } from './range.js';
import { canSwitchIdentity } from './switch.js';

export type Separation = 'identity' | 'namespaces' | 'none';

export interface SeparationReport {
  separation: Separation;
  /** The valve as set. */
  identity_separation: Valves['identity_separation'];
  /** Root, or CAP_SETUID and CAP_SETGID. */
  can_switch: boolean;
  /** Whether this user namespace maps the whole id range (null: unknown, or the valves are invalid). */
  range_mapped: boolean | null;
  /** Why, in a sentence. */
  reason: string;
}

/** `sandbox`: the mode commands run under (sandboxReport().active). */
export function separationReport(valves: Valves, sandbox: string): SeparationReport {
  const canSwitch = canSwitchIdentity();
  let mapped: boolean | null = null;
  try {
    mapped = rangeMapped(idRange(valves)) ?? null;
  } catch {
    mapped = null;
  }
  const base = { identity_separation: valves.identity_separation, can_switch: canSwitch, range_mapped: mapped };
  if (valves.identity_separation !== 'off' && canSwitch && mapped !== false) {
    return { separation: 'identity', ...base, reason: "each user's commands run as their own uid and gid; their zones are closed to every other uid; in a group space the member's uid with the group's gid, ownership as file modes in sticky folders" };
  }
  const why =
    valves.identity_separation === 'off'
      ? 'identity_separation is off'
      : !canSwitch
        ? 'the server can switch neither uid nor gid (it needs root, or CAP_SETUID and CAP_SETGID)'
        : `this user namespace does not map identity_id_first..+identity_id_count`;
  if (sandbox === 'bwrap') return { separation: 'namespaces', ...base, reason: `${why}: commands run as the server's uid, each in namespaces of its own (bubblewrap)` };
  return { separation: 'none', ...base, reason: `${why}: every command runs as the server's uid, in its namespaces: one trust domain held apart by the sandbox alone` };
}
