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

export const ZONE_NAMES = ['uploads', 'storage', 'documents', 'group'] as const;
export type ZoneName = (typeof ZONE_NAMES)[number];

/** Which disk folders one quota covers: the user's three zones, or one group space. */
export interface QuotaScope {
  key: string;
  limitBytes: number;
  /** Folder trees counted, by zone label. */
  trees: Record<string, string>;
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
}

export interface ZoneRequest {
  valves: Valves;
  user: Identity;
  convId: string;
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
    },
  };
}

/** Opens a personal zone, creating its folders on first use. Group zones arrive with the groups issue. */
export function openZone(req: ZoneRequest, name: ZoneName, group: string | undefined): Zone {
  if (name === 'group') {
    if (!group) {
      throw shedError('MISSING_PARAMETER', "zone='group' needs the group parameter: the name or id of the group.", {
        details: { parameter: 'group' },
        hint: 'Example: shed_tree(zone="group", group="team")',
      });
    }
    throw shedError('GROUP_NOT_AVAILABLE', 'Group spaces are not available on this deployment yet.', {
      hint: 'Use zone="storage" or zone="documents" for personal files.',
    });
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
    root: fs.realpathSync(layout.root),
    workBase: layout.workBase,
    versioned: name === 'documents',
    readonly: name === 'uploads',
    scope,
  };
}
