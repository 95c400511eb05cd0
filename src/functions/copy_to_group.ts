/**
 * shed_copy_to_group: copies a file or folder from a personal zone into a group space. The caller's
 * right to replace an existing destination is checked BEFORE anything there changes; every copied
 * file gets an ownership record (caller, mode or the admin default).
 */
import path from 'node:path';
import { z } from 'zod';
import { shedError } from '../core/base/errors.js';
import { setRecords } from '../core/services/groups/access.js';
import { OWNERSHIP_MODES } from '../core/services/groups/accessdb.js';
import { ensureFileSize, ensureQuota } from '../core/services/quota/quota.js';
import { defineFunction } from '../registry/define.js';
import { renderCall } from '../core/base/text/format.js';
import { allowZoneInPath, messageParam } from '../registry/params.js';
import { copyInto, scanTree } from '../core/services/bridges/copy.js';
import { listSliced } from '../core/base/fs/list.js';
import { TimeSlice } from '../core/base/fs/slice.js';
import { locate, requireNotRoot } from '../core/base/files/located.js';
import { diskRel, ensureNoForeignLock } from '../core/base/files/entries.js';
import { requireNamesKept } from '../core/base/blocked/identity.js';
import { groupZone } from '../core/services/groups/zone.js';
import { forgetEntry, guardWrite, newFileMode } from '../core/services/groups/enforce.js';

export const shedCopyToGroup = defineFunction({
  name: 'shed_copy_to_group',
  category: 'bridges',
  summary: 'Personal zone -> group space (copy, commit).',
  description: 'Copy a file or folder from your zones into a group space; you own the copies.',
  params: {
    src_zone: z.enum(['uploads', 'storage', 'documents']).describe('Zone of the source'),
    src_path: z.string().min(1).describe('File or folder in src_zone'),
    group: z.string().describe('Group name or id'),
    dest_path: z.string().min(1).describe('Path in the group'),
    message: messageParam,
    mode: z.enum(OWNERSHIP_MODES).optional().describe('Who may change the copies'),
    overwrite: z.boolean().default(false).describe('Replace dest (if you may)'),
    allow_zone_in_path: allowZoneInPath,
  },
  example: { src_zone: 'storage', src_path: 'report.pdf', group: 'team', dest_path: 'report.pdf' },
  mutates: true,
  async handler(args, ctx) {
    const { group, zone } = await groupZone(ctx, args.group);
    const from = ctx.zone(args.src_zone, undefined);
    const src = locate(from, args.src_path, 'src_path', 'read', args.allow_zone_in_path);
    requireNotRoot(src, 'src_path');
    const dst = locate(zone, args.dest_path, 'dest_path', 'write', args.allow_zone_in_path);
    requireNotRoot(dst, 'dest_path');
    const st = src.stat;
    if (st === undefined) {
      throw shedError('FILE_NOT_FOUND', `src_path ${src.shown} does not exist.`, {
        details: { parameter: 'src_path', path: src.rel },
        hint: `Check the name with shed_tree(zone="${args.src_zone}").`,
      });
    }
    if (!st.isFile() && !st.isDirectory()) {
      throw shedError('NOT_A_FILE', `src_path ${src.shown} is not a regular file or folder.`, { details: { parameter: 'src_path', path: src.rel } });
    }
    const scan = await scanTree(src.abs, st);
    if (scan.folder) await requireNamesKept(from.blocked, from.root, diskRel(src), diskRel(dst), 'dest_path', args.dest_path);
    const existing = dst.stat;
    let replacedBytes = 0;
    if (existing !== undefined) {
      if (!args.overwrite) {
        throw shedError('FILE_EXISTS', `dest_path ${dst.shown} already exists.`, {
          details: { parameter: 'dest_path', path: dst.rel },
          hint: `To replace it: ${renderCall('shed_copy_to_group', { ...args, overwrite: true })}; otherwise choose another dest_path.`,
        });
      }
      if (existing.isDirectory() !== scan.folder) {
        throw shedError('FILE_EXISTS', `dest_path ${dst.shown} is a ${existing.isDirectory() ? 'folder' : 'file'} and src_path is not; overwrite only replaces the same kind.`, {
          details: { parameter: 'dest_path', path: dst.rel },
          hint: 'Choose another dest_path.',
        });
      }
      // Permission first: nothing at the destination changes unless the caller may change all of it.
      await guardWrite(ctx, dst, 'replace');
      ensureNoForeignLock(dst, existing.isDirectory(), { user_id: ctx.user.id, conv_id: ctx.convId }, ctx.valves.lock_max_age_hours);
      replacedBytes = (await scanTree(dst.abs, existing)).bytes;
    }
    if (scan.largest.size > 0) ensureFileSize(scan.largest.size, ctx.valves.max_file_size_mb, src.shown);
    await ensureQuota(zone.scope, scan.bytes - replacedBytes);
    await copyInto(src.abs, scan.folder, dst.abs, existing !== undefined);

    const rel = diskRel(dst);
    const mode = newFileMode(ctx);
    if (existing !== undefined) await forgetEntry(zone, rel);
    const base = zone.group!.base;
    // Every record of the copy in one write of the access database (not one whole-database rewrite per file).
    const rels = scan.folder ? (await scanFiles(dst.abs)).map((f) => `${rel}/${f}`) : [rel];
    await setRecords(base, group.id, rels, ctx.user.id, mode);
    return {
      data: { src_zone: args.src_zone, src_path: src.rel, group: group.name, dest_path: rel, mode, kind: scan.folder ? 'folder' : 'file', files: scan.files, replaced: existing !== undefined },
      message: `Copied ${src.shown} to ${dst.shown} (mode ${mode}${existing !== undefined ? ', replacing what was there' : ''}).`,
      change: { zone, paths: [rel], summary: `Add ${rel} from ${from.label}` },
    };
  },
});

/** The files of a copied folder (relative paths), listed within slices: a user decides how many there are. */
async function scanFiles(abs: string): Promise<string[]> {
  const out: string[] = [];
  const slice = new TimeSlice();
  const stack = [''];
  while (stack.length > 0) {
    const rel = stack.pop()!;
    for (const e of await listSliced(path.join(abs, rel), slice)) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      await slice.tick();
      if (e.isDirectory()) stack.push(child);
      else if (e.isFile()) out.push(child);
    }
  }
  return out;
}
