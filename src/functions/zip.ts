import path from 'node:path';
import { z } from 'zod';
import { collect } from '../core/services/archive/create.js';
import { runWriteZip } from '../core/services/archive/jobs.js';
import { shedError } from '../core/base/errors.js';
import { ensureNotLockedByOther } from '../core/base/locks/locks.js';
import { scopeTotal } from '../core/services/quota/quota.js';
import { formatSize } from '../core/base/text/size.js';
import type { ZoneName } from '../core/base/zones/zones.js';
import { blockedState } from '../core/base/blocked/identity.js';
import { defineFunction } from '../registry/define.js';
import { plural, renderCall } from '../core/base/text/format.js';
import { allowZoneInPath, messageParam, pathParam, zoneParam } from '../registry/params.js';
import { locate, notFound, requireNotRoot } from '../core/base/files/located.js';

const ZONES: readonly ZoneName[] = ['storage', 'documents'];
const MIB = 1024 * 1024;

export const shedZip = defineFunction({
  name: 'shed_zip',
  category: 'archives',
  summary: 'Create a ZIP archive of a file or folder (dotfiles included) inside the same zone.',
  description: 'Zip a file or folder (src="." zips the whole zone).',
  params: {
    zone: zoneParam(ZONES),
    src: pathParam('File or folder'),
    dest: z.string().optional().describe('Archive path (default: src.zip)'),
    include_empty_dirs: z.boolean().default(false).describe('Keep empty folders'),
    overwrite: z.boolean().default(false).describe('Replace dest'),
    message: messageParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: ZONES, writes: true },
  example: { zone: 'storage', src: 'reports', dest: 'reports.zip' },
  mutates: true,
  hostArgs: ['__event_emitter__'],
  async handler(args, ctx) {
    const zone = ctx.zone(args.zone, undefined);
    const src = locate(zone, args.src, 'src', 'read', args.allow_zone_in_path);
    if (src.stat === undefined) throw notFound(src, 'src');
    const isRoot = src.rel === '';
    if (!src.stat.isFile() && !src.stat.isDirectory()) {
      throw shedError('INVALID_PARAMETER', `'src' ${src.shown} is neither a file nor a folder.`, { details: { parameter: 'src', received: args.src } });
    }
    let destInput = args.dest?.trim() || (isRoot ? `${zone.name}.zip` : `${src.rel}.zip`);
    if (!/\.zip$/i.test(destInput)) destInput += '.zip';
    const dest = locate(zone, destInput, 'dest', 'write', args.allow_zone_in_path);
    requireNotRoot(dest, 'dest');
    if (dest.abs === src.abs) {
      throw shedError('INVALID_PARAMETER', "'dest' is the file being archived.", {
        details: { parameter: 'dest', received: args.dest, suggested: `${dest.rel.replace(/\.zip$/i, '')}-archive.zip` },
      });
    }
    if (dest.stat !== undefined) {
      if (dest.stat.isDirectory()) {
        throw shedError('FILE_EXISTS', `'dest' ${dest.shown} is a folder.`, {
          details: { parameter: 'dest', received: destInput, suggested: `${dest.rel}/${path.posix.basename(src.rel || zone.name)}.zip` },
          hint: 'Give a file name ending in .zip.',
        });
      }
      if (!args.overwrite) {
        throw shedError('FILE_EXISTS', `The archive ${dest.shown} already exists.`, {
          details: { parameter: 'dest', path: dest.rel },
          hint: `Replace it: ${renderCall('shed_zip', { zone: args.zone, src: args.src, dest: dest.rel, overwrite: true })}, or choose another dest.`,
        });
      }
    }
    ensureNotLockedByOther(zone, dest.rel, { user_id: ctx.user.id, conv_id: ctx.convId }, ctx.valves.lock_max_age_hours);

    const prefix = isRoot ? '' : path.posix.basename(src.rel);
    // Blocked files (valve blocked_patterns) never go into an archive: its bytes could be read back.
    // Judged over the whole zone: a link inside the folder may lead to a blocked file elsewhere, and a
    // hard link inside it is a blocked file under another name.
    const blocked = zone.blocked && src.stat?.isDirectory() ? (await blockedState(zone.blocked, zone.root)).found : undefined;
    const within = (rel: string) => isRoot || rel === src.rel || rel.startsWith(`${src.rel}/`);
    const blockedAbs = blocked ? [...blocked.files, ...blocked.dirs, ...blocked.inside].map((rel) => path.join(zone.root, rel)) : [];
    const leftOut = blocked ? [...blocked.files, ...blocked.dirs].filter(within).length : 0;
    const found = await collect(src.abs, prefix, {
      zoneRoot: zone.root,
      exclude: new Set([dest.abs, ...blockedAbs]),
      includeEmptyDirs: args.include_empty_dirs,
    });
    const oldSize = dest.stat?.isFile() ? dest.stat.size : 0;
    const maxFile = ctx.valves.max_file_size_mb * MIB;
    const room = Math.max(0, zone.scope.limitBytes - (await scopeTotal(zone.scope))) + oldSize;
    await ctx.emit(`Zipping ${plural(found.files, 'file')} from ${src.shown}...`);
    // Deflating runs on the worker pool: zipping a big folder does not stall other users.
    const { size, inputBytes } = await runWriteZip(found.items, dest.abs, { maxBytes: Math.min(maxFile, room), quotaBound: room < maxFile, shown: dest.shown }, {
      timeoutSeconds: ctx.valves.exec_timeout_max,
      onProgress: (done, total) => ctx.emit(`Zipping ${src.shown}: ${done}/${total} entries`),
    });
    await ctx.emit(`Created ${dest.shown}`, true);

    const data: Record<string, unknown> = {
      source: src.rel || '.',
      zone: zone.label,
      zip_path: dest.rel,
      files_count: found.files,
      size_bytes: size,
      size_human: formatSize(size),
      total_uncompressed: inputBytes,
    };
    if (found.emptyDirs > 0) data.empty_dirs_count = found.emptyDirs;
    if (found.skipped.length > 0) {
      data.skipped = found.skipped.slice(0, 50);
      data.skipped_count = found.skipped.length;
    }
    if (oldSize > 0 || dest.stat !== undefined) data.replaced = true;
    if (leftOut > 0) data.blocked_left_out = leftOut;
    const notes =
      (found.skipped.length > 0 ? ` Skipped ${plural(found.skipped.length, 'link or special file')} (see data.skipped).` : '') +
      (leftOut > 0 ? ` Left out ${leftOut} blocked file(s) or folder(s) (admin setting blocked_patterns).` : '');
    return {
      data,
      message: `Created ${dest.shown} (${formatSize(size)}) with ${plural(found.files, 'file')}${found.emptyDirs ? ` and ${plural(found.emptyDirs, 'empty folder')}` : ''} from ${src.shown}.${notes}`,
      ...(zone.versioned ? { change: { zone, paths: [dest.rel], summary: `Create ZIP ${dest.rel}` } } : {}),
    };
  },
});
