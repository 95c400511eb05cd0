/**
 * What the shed_lockedit_* functions (and shed_force_unlock) share: the zones they accept, how
 * the path parameter becomes the key of the lock and working copy (the file's real zone-relative
 * path, so an alias through a folder link locks the same file), and the calls their errors show.
 */
import type { Intent } from '../paths/resolve.js';
import type { LockOwner } from '../locks/locks.js';
import type { Zone, ZoneName } from '../zones/zones.js';
import type { Identity } from '../identity.js';
import { renderCall } from '../text/format.js';
import { locate, requireNotRoot, type ZonedPath } from './located.js';
import { diskRel } from './entries.js';

export const EDIT_ZONES: readonly ZoneName[] = ['storage', 'documents', 'group'];

export interface EditArgs {
  zone: ZoneName;
  path: string;
  group?: string | undefined;
  allow_zone_in_path: boolean;
}

export interface EditTarget {
  zone: Zone;
  target: ZonedPath;
  /** Lock and working-copy key: the real zone-relative path. */
  key: string;
  owner: LockOwner;
  names: { open: string; cancel: string; save: string; shown: string };
}

/** Resolves the path of a lockedit call (never outside the resolver) and names the follow-up calls. */
export function editTarget(ctx: { user: Identity; convId: string; zone(name: ZoneName, group: string | undefined): Zone }, args: EditArgs, intent: Intent): EditTarget {
  const zone = ctx.zone(args.zone, args.group);
  const target = locate(zone, args.path, 'path', intent, args.allow_zone_in_path);
  requireNotRoot(target);
  const key = diskRel(target);
  const base: Record<string, unknown> = { zone: args.zone, ...(args.group ? { group: args.group } : {}), path: target.rel };
  return {
    zone,
    target,
    key,
    owner: { user_id: ctx.user.id, conv_id: ctx.convId },
    names: {
      open: renderCall('shed_lockedit_open', base),
      cancel: renderCall('shed_lockedit_cancel', base),
      save: renderCall('shed_lockedit_save', base),
      shown: target.shown,
    },
  };
}
