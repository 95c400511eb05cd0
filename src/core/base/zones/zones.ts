/**
 * Zones (SPEC section 4): where each zone lives on disk and what it allows. A zone's folders are
 * created on first use; its real root is computed once per call so the path resolver can compare
 * real paths.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../errors.js';
import type { Identity } from '../identity.js';
import type { Valves } from '../valves.js';
import { blockRules, type BlockRules } from '../blocked/rules.js';

export const ZONE_NAMES = ['uploads', 'storage', 'documents', 'group'] as const;
export type ZoneName = (typeof ZONE_NAMES)[number];

/** Which disk folders one quota covers: the user's three zones, or one group space. */
export interface QuotaScope {
  key: string;
  limitBytes: number;
  /**
   * Folder trees counted, by label: each zone's data root, and the repository of each versioned
   * zone (`historyLabel`): history takes disk space too, and a user who rewrites a file again and
   * again must not fill the disk at "nothing used".
   */
  trees: Record<string, string>;
}

const HISTORY = ' history';

/** The quota label of a versioned zone's repository ("Documents history"). */
function historyLabel(zoneLabel: string): string {
  return `${zoneLabel}${HISTORY}`;
}

/** The zone a label stands for, and whether it is that zone's history ("Documents history" → Documents, true). */
export function labelZone(label: string): { zone: string; history: boolean } {
  return label.endsWith(HISTORY) ? { zone: label.slice(0, -HISTORY.length), history: true } : { zone: label, history: false };
}

export interface Zone {
  name: ZoneName;
  /** What users see: Uploads, Storage, Documents, Group:<name>. */
  label: string;
  /** Real (symlink-free) absolute path of the zone's data root. */
  root: string;
  /** Folder holding editzone/ and locks/ (none for Uploads). */
  workBase: string | undefined;
  versioned: boolean;
  readonly: boolean;
  scope: QuotaScope;
  /** Group zones: the group and the storage base holding its access database. */
  group?: { id: string; name: string; base: string };
  /** Sensitive-file rules (valves blocked_patterns, allowed_extensions); absent when both are off. */
  blocked?: BlockRules;
}

export interface ZoneRequest {
  valves: Valves;
  user: Identity;
  convId: string;
  /** The group already resolved and membership-checked by the dispatcher (zone="group"). */
  group?: { id: string; name: string };
}

const MIB = 1024 * 1024;

export function userHome(valves: Valves, userId: string): string {
  return path.join(path.resolve(valves.storage_base_path), 'users', userId);
}

export function userScope(valves: Valves, userId: string): QuotaScope {
  const home = userHome(valves, userId);
  return {
    key: `user:${home}`,
    limitBytes: valves.quota_per_user_mb * MIB,
    trees: {
      Uploads: path.join(home, 'Uploads'),
      Storage: path.join(home, 'Storage', 'data'),
      Documents: path.join(home, 'Documents', 'data'),
      [historyLabel('Documents')]: path.join(home, 'Documents', 'git'),
    },
  };
}

/** Opens a zone, creating its folders on first use. */
export function openZone(req: ZoneRequest, name: ZoneName, group: string | undefined): Zone {
  if (name === 'group') {
    if (!group) {
      throw shedError('MISSING_PARAMETER', "zone='group' needs the group parameter: the name or id of the group.", {
        details: { parameter: 'group' },
        hint: 'Example: shed_tree(zone="group", group="team")',
      });
    }
    if (req.group === undefined) {
      throw shedError('GROUP_NOT_AVAILABLE', 'This function cannot open a group space.', { hint: 'Use zone="storage" or zone="documents".' });
    }
    return openGroupZone(req.valves, req.group);
  }
  const home = userHome(req.valves, req.user.id);
  const scope = userScope(req.valves, req.user.id);
  const layout = {
    uploads: { label: 'Uploads', root: path.join(home, 'Uploads', req.convId), workBase: undefined },
    storage: { label: 'Storage', root: scope.trees.Storage!, workBase: path.join(home, 'Storage') },
    documents: { label: 'Documents', root: scope.trees.Documents!, workBase: path.join(home, 'Documents') },
  }[name];
  fs.mkdirSync(layout.root, { recursive: true });
  return {
    name,
    label: layout.label,
    root: fs.realpathSync.native(layout.root), // in C: no lstat (and Stats object) per component
    workBase: layout.workBase,
    versioned: name === 'documents',
    readonly: name === 'uploads',
    scope,
    ...withBlockRules(req.valves),
  };
}

export function groupHome(valves: Valves, groupId: string): string {
  return path.join(path.resolve(valves.storage_base_path), 'groups', groupId);
}

export function groupScope(valves: Valves, group: { id: string; name: string }): QuotaScope {
  const home = groupHome(valves, group.id);
  const label = `Group:${group.name}`;
  return { key: `group:${home}`, limitBytes: valves.quota_per_group_mb * MIB, trees: { [label]: path.join(home, 'data'), [historyLabel(label)]: path.join(home, 'git') } };
}

/** A group space (versioned like Documents); the caller has checked membership. */
export function openGroupZone(valves: Valves, group: { id: string; name: string }): Zone {
  const home = groupHome(valves, group.id);
  const root = path.join(home, 'data');
  fs.mkdirSync(root, { recursive: true });
  return {
    name: 'group',
    label: `Group:${group.name}`,
    root: fs.realpathSync.native(root),
    workBase: home,
    versioned: true,
    readonly: false,
    scope: groupScope(valves, group),
    group: { id: group.id, name: group.name, base: path.resolve(valves.storage_base_path) },
    ...withBlockRules(valves),
  };
}

function withBlockRules(valves: Valves): { blocked?: BlockRules } {
  const blocked = blockRules(valves);
  return blocked ? { blocked } : {};
}
