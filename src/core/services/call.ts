/**
 * What the core knows of the call it serves: who calls, with which settings and arguments, through
 * which host, and how its zones open. The registry gives every handler a richer context (status
 * events, attached files, the function list) built on this one; the core asks for no more.
 */
import type { GroupDirectory } from './groups/directory.js';
import type { HostBridge } from './host-bridge.js';
import type { Identity } from '../base/identity.js';
import type { UserValves, Valves } from '../base/valves.js';
import type { Zone, ZoneName } from '../base/zones/zones.js';

export interface CallScope {
  /** The function being called (shed_*). */
  fn: string;
  valves: Valves;
  userValves: UserValves;
  /** The caller; functions with `needsUser: false` may run without one. */
  user: Identity;
  convId: string;
  host: HostBridge;
  /** The call's parsed arguments (shared write helpers read `mode` from here). */
  args: Readonly<Record<string, unknown>>;
  /** The group directory of this call (host-provided, else standalone). */
  groups(): GroupDirectory;
  /** Opens a zone under this function's zone policy (accepted zones, read-only rules). */
  zone(name: ZoneName, group: string | undefined): Zone;
}
