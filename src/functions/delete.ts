import fs from 'node:fs';
import { ZONE_NAMES } from '../core/base/zones/zones.js';
import { defineFunction } from '../registry/define.js';
import { allowZoneInPath, groupParam, messageParam, pathParam, zoneParam } from '../registry/params.js';
import { locate, notFound, requireNotRoot } from '../core/base/files/located.js';
import { plural } from '../core/base/text/format.js';
import { diskRel, ensureNoForeignLock } from '../core/base/files/entries.js';
import { removeTree } from '../core/base/fs/remove-tree.js';
import { forgetEntry, guardWrite } from '../core/services/groups/enforce.js';

export const shedDelete = defineFunction({
  name: 'shed_delete',
  category: 'files',
  summary: 'Delete a file or a folder (with everything in it); the only change allowed in Uploads.',
  description: 'Delete a file, link or folder (with contents) in any zone. shed_undo takes it back.',
  params: {
    zone: zoneParam(ZONE_NAMES),
    path: pathParam('File or folder'),
    group: groupParam,
    message: messageParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: ZONE_NAMES, writes: true },
  example: { zone: 'storage', path: 'old/report.txt' },
  mutates: true,
  hints: { idempotent: true },
  async handler(args, ctx) {
    const zone = ctx.zone(args.zone, args.group);
    // 'delete' intent: a final symbolic link is the thing removed, wherever it points.
    const target = locate(zone, args.path, 'path', 'delete', args.allow_zone_in_path);
    requireNotRoot(target);
    const stat = target.stat;
    if (stat === undefined) throw notFound(target);
    const isFolder = stat.isDirectory();
    ensureNoForeignLock(target, isFolder, { user_id: ctx.user.id, conv_id: ctx.convId }, ctx.valves.lock_max_age_hours);
    await guardWrite(ctx, target, 'delete');

    let filesRemoved: number;
    if (isFolder) {
      // Links inside the folder are removed, never followed: a link to elsewhere is removed, not emptied.
      filesRemoved = await removeTree(target.abs);
    } else {
      filesRemoved = 1;
      fs.unlinkSync(target.abs);
    }

    await forgetEntry(zone, diskRel(target));

    let message: string;
    if (isFolder && filesRemoved === 0) {
      message = `Deleted the empty folder ${target.shown}.`;
    } else if (isFolder) {
      message = `Deleted the folder ${target.shown} and the ${plural(filesRemoved, 'file')} in it.`;
    } else if (stat.isSymbolicLink()) {
      message = `Deleted the link ${target.shown} (what it pointed to was not touched).`;
    } else {
      message = `Deleted ${target.shown}.`;
    }
    return {
      data: { zone: zone.label, path: target.rel, deleted: true, was_directory: isFolder, files_removed: filesRemoved },
      message,
      ...(zone.versioned ? { change: { zone, paths: [diskRel(target)], summary: `Delete ${target.rel}` } } : {}),
    };
  },
});
