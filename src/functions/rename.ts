import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { shedError } from '../core/base/errors.js';
import { isInside } from '../core/base/paths/resolve.js';
import { linkProblem } from '../core/base/paths/links.js';
import { walkEntriesSliced } from '../core/base/fs/walk.js';
import { requireNamesKept } from '../core/base/blocked/identity.js';
import type { ZoneName } from '../core/base/zones/zones.js';
import { defineFunction } from '../registry/define.js';
import { renderCall } from '../core/base/text/format.js';
import { allowZoneInPath, groupParam, messageParam, pathParam, zoneParam } from '../registry/params.js';
import { locate, notFound, requireNotRoot } from '../core/base/files/located.js';
import { diskRel, ensureNoForeignLock } from '../core/base/files/entries.js';
import { forgetEntry, guardWrite, moveEntry } from '../core/services/groups/enforce.js';
import { mkdirInheriting } from '../core/base/fs/owner.js';
import { assertFence } from '../core/base/locks/lease.js';

const ZONES: readonly ZoneName[] = ['storage', 'documents', 'group'];

export const shedRename = defineFunction({
  name: 'shed_rename',
  category: 'files',
  summary: 'Rename or move a file or folder inside one zone.',
  description: 'Rename or move a file or folder inside one zone. Between zones use shed_move_* / shed_copy_*.',
  params: {
    zone: zoneParam(ZONES),
    old_path: pathParam('Current path'),
    new_path: pathParam('New path'),
    group: groupParam,
    message: messageParam,
    allow_zone_in_path: allowZoneInPath,
    overwrite: z.boolean().default(false).describe('Replace an existing file'),
  },
  zones: { accepted: ZONES, writes: true },
  example: { zone: 'storage', old_path: 'draft.txt', new_path: 'archive/final.txt' },
  mutates: true,
  async handler(args, ctx) {
    const zone = ctx.zone(args.zone, args.group);
    // The source is taken like a delete (a link moves itself), the destination like a write.
    const src = locate(zone, args.old_path, 'old_path', 'delete', args.allow_zone_in_path);
    const dst = locate(zone, args.new_path, 'new_path', 'write', args.allow_zone_in_path);
    requireNotRoot(src, 'old_path');
    requireNotRoot(dst, 'new_path');
    const call = (newPath: string, extra: Record<string, unknown> = {}) =>
      renderCall('shed_rename', { zone: args.zone, old_path: src.rel, new_path: newPath, ...extra });

    if (src.rel === dst.rel || src.abs === dst.abs) {
      throw shedError('INVALID_PARAMETER', `'old_path' and 'new_path' name the same entry (${src.shown}); nothing to rename.`, {
        details: { parameter: 'new_path', received: args.new_path },
        hint: `Give a different new_path, e.g. ${call(`renamed-${path.posix.basename(src.rel)}`)}`,
      });
    }
    const srcStat = src.stat;
    if (srcStat === undefined) throw notFound(src, 'old_path');
    const isFolder = srcStat.isDirectory();
    if (isFolder && isInside(dst.abs, src.abs)) {
      throw shedError('INVALID_PATH', `Cannot move the folder ${src.shown} into itself (new_path ${dst.shown} is inside it).`, {
        details: { parameter: 'new_path', received: args.new_path, old_path: src.rel },
        hint: `Choose a new_path outside '${src.rel}', e.g. ${call(`${path.posix.basename(src.rel)}-moved`)}`,
      });
    }

    // Renaming a folder renames what is inside: a blocked entry there must keep a blocked name.
    if (isFolder) await requireNamesKept(zone.blocked, zone.root, diskRel(src), diskRel(dst), 'new_path', args.new_path);
    const owner = { user_id: ctx.user.id, conv_id: ctx.convId };
    ensureNoForeignLock(src, isFolder, owner, ctx.valves.lock_max_age_hours);
    await guardWrite(ctx, src, 'rename');

    let replaced = false;
    if (dst.stat !== undefined) {
      if (isFolder || dst.stat.isDirectory()) {
        const what = dst.stat.isDirectory() ? 'a folder' : 'a file';
        throw shedError('FILE_EXISTS', `new_path ${dst.shown} already exists (${what}); folders are never replaced and never replace anything.`, {
          details: { parameter: 'new_path', path: dst.rel, is_directory: dst.stat.isDirectory() },
          hint: dst.stat.isDirectory()
            ? `To put it inside that folder use ${call(`${dst.rel}/${path.posix.basename(src.rel)}`)}; or pick another new_path.`
            : `Pick another new_path, or delete the file first with shed_delete(zone="${args.zone}", path="${dst.rel}").`,
        });
      }
      if (!args.overwrite) {
        throw shedError('FILE_EXISTS', `new_path ${dst.shown} already exists.`, {
          details: { parameter: 'new_path', path: dst.rel },
          hint: `To replace that file: ${call(dst.rel, { overwrite: true })}; otherwise pick another new_path.`,
        });
      }
      ensureNoForeignLock(dst, false, owner, ctx.valves.lock_max_age_hours);
      await guardWrite(ctx, dst, 'replace');
      replaced = true;
    }

    // A relative link means something else once moved (d1/d2/L -> ../../x lands outside from the root).
    if (srcStat.isSymbolicLink()) refuseMovedLink(zone.root, dst.abs, dst.abs, src.shown, dst.shown, fs.readlinkSync(src.abs));
    mkdirInheriting(path.dirname(dst.abs));
    // rename(2) is atomic and replaces a file destination in one step.
    const fromRel = diskRel(src);
    assertFence();
    fs.renameSync(src.abs, dst.abs);
    if (isFolder) {
      // The links inside a moved folder are judged where they landed; if one would lead out, the move is undone.
      // Sliced: the folder may hold 30,000 entries.
      try {
        for await (const { full, entry } of walkEntriesSliced(dst.abs)) if (entry.isSymbolicLink()) refuseMovedLink(zone.root, full, dst.abs, src.shown, dst.shown);
      } catch (err) {
        fs.renameSync(dst.abs, src.abs);
        throw err;
      }
    }
    if (replaced) await forgetEntry(zone, diskRel(dst));
    await moveEntry(zone, fromRel, diskRel(dst));

    const kind = isFolder ? 'the folder ' : srcStat.isSymbolicLink() ? 'the link ' : '';
    return {
      data: { zone: zone.label, old_path: src.rel, new_path: dst.rel, was_directory: isFolder, replaced },
      message: `Renamed ${kind}${src.shown} to ${dst.shown}${replaced ? ' (the previous file there was replaced)' : ''}.`,
      ...(zone.versioned ? { change: { zone, paths: [diskRel(src), diskRel(dst)], summary: `Rename ${src.rel} -> ${dst.rel}` } } : {}),
    };
  },
});

/** PATH_ESCAPE if the link at `linkAbs` (after the move; text `target`, default what is on disk) breaks the one link rule. */
function refuseMovedLink(root: string, linkAbs: string, movedAbs: string, srcShown: string, dstShown: string, target?: string): void {
  const why = linkProblem(root, linkAbs, target);
  if (why === undefined) return;
  const inner = path.relative(movedAbs, linkAbs);
  const which = inner === '' ? 'the symbolic link' : `the symbolic link '${inner.split(path.sep).join('/')}' inside it`;
  throw shedError('PATH_ESCAPE', `old_path ${srcShown} cannot be moved to new_path ${dstShown}: there ${which} would be refused (${why}). Nothing was moved.`, {
    details: { parameter: 'old_path', link: inner.split(path.sep).join('/') || undefined },
    hint: 'Keep the link where it is, or delete it first with shed_delete and make the move again.',
  });
}
