import { blockedPattern, blockReason } from '../core/base/blocked/rules.js';
import path from 'node:path';
import { z } from 'zod';
import { looksLikeZip } from '../core/formats/zip/directory.js';
import { readDirectory } from '../core/services/archive/central.js';
import { runExtract } from '../core/services/archive/jobs.js';
import { checkCount, makeTempDir, placeExtracted, planExtraction, type UnzipLimits } from '../core/services/archive/extract.js';
import { readRange } from '../core/base/fs/atomic.js';
import { removeEntry } from '../core/base/fs/remove-tree.js';
import { shedError, showValue } from '../core/base/errors.js';
import { ensureNotLockedByOther } from '../core/base/locks/locks.js';
import { isProtected } from '../core/base/paths/resolve.js';
import { ensureQuota } from '../core/services/quota/quota.js';
import { formatSize } from '../core/base/text/size.js';
import { openZone, ZONE_NAMES, type Zone, type ZoneName } from '../core/base/zones/zones.js';
import { defineFunction, type CallContext } from '../registry/define.js';
import { plural, renderCall } from '../core/base/text/format.js';
import { allowZoneInPath, messageParam, pathParam, zoneParam } from '../registry/params.js';
import { locate, requireFile, shownPath, type ZonedPath } from '../core/base/files/located.js';

const DEST_ZONES: readonly ZoneName[] = ['storage', 'documents'];
const SRC_ZONES: readonly ZoneName[] = ['uploads', 'storage', 'documents'];
const MIB = 1024 * 1024;
const LISTED = 50;

export const shedUnzip = defineFunction({
  name: 'shed_unzip',
  category: 'archives',
  summary: 'Extract a ZIP into Storage or Documents (checked for zip bombs, unsafe names).',
  description: 'Extract a .zip from src_zone into dest; an unsafe archive is refused whole.',
  params: {
    zone: zoneParam(DEST_ZONES).describe('Zone to extract into'),
    src: pathParam('.zip file in src_zone'),
    dest: z.string().optional().describe('Folder (default: the archive\'s folder)'),
    src_zone: z.enum(ZONE_NAMES).optional().describe('Zone of the archive (default: zone)'),
    overwrite: z.boolean().default(false).describe('Replace existing files'),
    message: messageParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: DEST_ZONES, writes: true },
  example: { zone: 'storage', src: 'data.zip', dest: 'data', src_zone: 'uploads' },
  mutates: true,
  hostArgs: ['__event_emitter__'],
  async handler(args, ctx) {
    const destZone = ctx.zone(args.zone, undefined);
    const srcZone = sourceZone(ctx, args.src_zone, args.zone, destZone);
    const src = locate(srcZone, args.src, 'src', 'read', args.allow_zone_in_path);
    requireFile(src, 'src');
    if (!looksLikeZip(readRange(src.abs, 0, 4))) {
      throw shedError('INVALID_FORMAT', `${src.shown} is not a ZIP archive (it does not start with the ZIP signature).`, {
        details: { parameter: 'src', path: src.rel },
        hint: `Check what it is with shed_file_type(zone="${srcZone.name}", path="${src.rel}"); .tar/.gz archives open with shed_exec(cmd="tar", ...).`,
      });
    }
    const destInput = args.dest?.trim() ? args.dest : path.posix.dirname(src.rel) === '.' ? '' : path.posix.dirname(src.rel);
    const dest = locate(destZone, destInput, 'dest', 'write', args.allow_zone_in_path);
    if (dest.stat !== undefined && !dest.stat.isDirectory()) {
      throw shedError('NOT_A_DIRECTORY', `'dest' ${dest.shown} is a file; give a folder to extract into.`, {
        details: { parameter: 'dest', received: destInput, suggested: `${dest.rel.replace(/\.[^./]*$/, '')}_files` },
      });
    }
    const limits: UnzipLimits = {
      maxEntries: ctx.valves.zip_max_entries,
      maxTotalBytes: ctx.valves.zip_max_total_mb * MIB,
      maxRatio: ctx.valves.zip_max_ratio,
      maxFileBytes: ctx.valves.max_file_size_mb * MIB,
    };
    const dir = await readDirectory(src.abs, src.shown, (count) => checkCount(src.shown, count, limits));
    const join = (rel: string) => (dest.rel ? (rel ? `${dest.rel}/${rel}` : dest.rel) : rel);
    const planned = await planExtraction(dir, src.shown, limits, (rel) => isProtected(destZone, join(rel)));
    // Entries with blocked names (valves blocked_patterns, allowed_extensions) are not written, as no function writes such a path.
    const rules = destZone.blocked;
    const plan = rules
      ? { ...planned, files: planned.files.filter((f) => blockReason(rules, join(f.rel), 'file') === undefined), dirs: planned.dirs.filter((d) => blockedPattern(rules, join(d)) === undefined) }
      : planned;
    const leftOut = planned.files.length - plan.files.length;
    await ensureQuota(destZone.scope, plan.totalSize);

    await ctx.emit(`Extracting ${plural(plan.files.length, 'file')} from ${src.shown}...`);
    const temp = makeTempDir(destZone.workBase!);
    let placement: Awaited<ReturnType<typeof placeExtracted>>;
    try {
      // Inflating runs on the worker pool: a 10,000-file archive does not stall other users.
      await runExtract(src.abs, src.shown, plan, temp, {
        timeoutSeconds: ctx.valves.exec_timeout_max,
        onProgress: (done, total) => ctx.emit(`Extracting ${src.shown}: ${done}/${total} files`),
      });
      const owner = { user_id: ctx.user.id, conv_id: ctx.convId };
      placement = await placeExtracted(temp, dest.abs, (rel) => shownPath(destZone, join(rel)), args.overwrite, (rel) =>
        ensureNotLockedByOther(destZone, join(rel), owner, ctx.valves.lock_max_age_hours),
      );
    } finally {
      await removeEntry(temp); // what was not placed: a user-shaped tree, removed off the event loop
    }
    await ctx.emit(`Extracted ${src.shown}`, true);
    const out = result(args, src, srcZone, dest, destZone, plan, placement);
    if (leftOut > 0) {
      out.data.blocked_left_out = leftOut;
      out.message += ` Left out ${plural(leftOut, 'file')} whose names are blocked (admin settings blocked_patterns, allowed_extensions).`;
    }
    return out;
  },
});

function sourceZone(ctx: CallContext, wanted: ZoneName | undefined, destName: ZoneName, destZone: Zone): Zone {
  if (wanted === undefined || wanted === destName) return destZone;
  if (!SRC_ZONES.includes(wanted)) {
    throw shedError('ZONE_FORBIDDEN', `'src_zone' ${showValue(wanted)} is not accepted; the archive must be in ${SRC_ZONES.join(', ')}.`, {
      details: { parameter: 'src_zone', received: wanted, accepted: SRC_ZONES },
      hint: `Copy the archive to your zone first, then: ${renderCall('shed_unzip', { zone: destName, src: 'data.zip', src_zone: 'storage' })}`,
    });
  }
  return openZone({ valves: ctx.valves, user: ctx.user, convId: ctx.convId }, wanted, undefined);
}

function result(
  args: { zone: string; src: string; message?: string | undefined },
  src: ZonedPath,
  srcZone: Zone,
  dest: ZonedPath,
  destZone: Zone,
  plan: Awaited<ReturnType<typeof planExtraction>>,
  placement: Awaited<ReturnType<typeof placeExtracted>>,
) {
  const join = (rel: string) => (dest.rel ? `${dest.rel}/${rel}` : rel);
  const files = plan.files.map((f) => join(f.rel));
  const data: Record<string, unknown> = {
    source: src.rel,
    source_zone: srcZone.label,
    destination: dest.rel || '.',
    destination_zone: destZone.label,
    files_count: plan.files.length,
    folders_count: plan.dirs.length,
    total_size: plan.totalSize,
    files: files.slice(0, LISTED),
    truncated: files.length > LISTED,
  };
  if (placement.replaced.length > 0) data.replaced_count = placement.replaced.length;
  const from = srcZone === destZone ? src.rel : `${srcZone.label}:${src.rel}`;
  const message = `Extracted ${plural(plan.files.length, 'file')} (${formatSize(plan.totalSize)}) from ${src.shown} into ${shownPath(destZone, dest.rel)}${placement.replaced.length ? `, replacing ${plural(placement.replaced.length, 'existing file')}` : ''}.`;
  const out: { data: Record<string, unknown>; message: string; change?: { zone: Zone; paths: string[]; summary: string } } = { data, message };
  if (destZone.versioned && placement.moved.length > 0) {
    out.change = { zone: destZone, paths: placement.moved.map(join), summary: `Extracted ${from} to ${dest.rel || 'the zone root'}` };
  }
  return out;
}
