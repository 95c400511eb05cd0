import { entryTime, looksLikeZip, METHOD_NAMES, type ZipEntry } from '../core/formats/zip/directory.js';
import { readDirectory } from '../core/services/archive/central.js';
import { planExtraction } from '../core/services/archive/extract.js';
import { shedError } from '../core/base/errors.js';
import { readRange } from '../core/base/fs/atomic.js';
import { formatSize } from '../core/base/text/size.js';
import { ZONE_NAMES } from '../core/base/zones/zones.js';
import { defineFunction } from '../registry/define.js';
import { allowZoneInPath, groupParam, pathParam, zoneParam } from '../registry/params.js';
import { locate, requireFile } from '../core/base/files/located.js';
import { plural } from '../core/base/text/format.js';

const LISTED = 100;
const MIB = 1024 * 1024;

export const shedZipinfo = defineFunction({
  name: 'shed_zipinfo',
  category: 'archives',
  summary: 'List a ZIP archive and say whether shed_unzip accepts it.',
  description: 'List a .zip without extracting it; unzip_check says whether shed_unzip accepts it.',
  params: {
    zone: zoneParam(ZONE_NAMES),
    path: pathParam('The .zip file'),
    group: groupParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: ZONE_NAMES, writes: false },
  example: { zone: 'uploads', path: 'data.zip' },
  async handler(args, ctx) {
    const zone = ctx.zone(args.zone, args.group);
    const target = locate(zone, args.path, 'path', 'read', args.allow_zone_in_path);
    requireFile(target);
    if (!looksLikeZip(readRange(target.abs, 0, 4))) {
      throw shedError('INVALID_FORMAT', `${target.shown} is not a ZIP archive (it does not start with the ZIP signature).`, {
        details: { path: target.rel },
        hint: `Check what it is with shed_file_type(zone="${args.zone}", path="${target.rel}").`,
      });
    }
    const dir = await readDirectory(target.abs, target.shown);
    let files = 0;
    let dirs = 0;
    let total = 0;
    let compressed = 0;
    for (const e of dir.entries) {
      if (e.kind === 'dir') dirs++;
      else files++;
      total += e.size;
      compressed += e.compressedSize;
    }
    let check = 'ok';
    try {
      await planExtraction(
        dir,
        target.shown,
        {
          maxEntries: ctx.valves.zip_max_entries,
          maxTotalBytes: ctx.valves.zip_max_total_mb * MIB,
          maxRatio: ctx.valves.zip_max_ratio,
          maxFileBytes: ctx.valves.max_file_size_mb * MIB,
        },
        () => false,
      );
    } catch (err) {
      const e = err as { code?: string; message?: string };
      check = `refused (${e.code ?? 'error'}): ${(e.message ?? String(err)).replace(/ Nothing was extracted\.$/, '')}`;
    }
    const data: Record<string, unknown> = {
      path: target.rel,
      zone: zone.label,
      files_count: files,
      dirs_count: dirs,
      total_size: total,
      total_size_human: formatSize(total),
      compressed_size: compressed,
      compression_ratio: total > 0 ? `${((1 - compressed / total) * 100).toFixed(1)}%` : '0%',
      entries: dir.entries.slice(0, LISTED).map(describe),
      truncated: dir.entries.length > LISTED,
      unzip_check: check,
    };
    if (dir.comment) data.comment = dir.comment;
    return {
      data,
      message: `${target.shown}: ${plural(files, 'file')}, ${plural(dirs, 'folder')}, ${formatSize(total)} uncompressed (${formatSize(dir.fileSize)} on disk).${check === 'ok' ? '' : ` shed_unzip would refuse it: ${check}`}`,
    };
  },
});

function describe(e: ZipEntry): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: e.name,
    size: e.size,
    compressed: e.compressedSize,
    ratio: e.size > 0 ? `${((1 - e.compressedSize / e.size) * 100).toFixed(1)}%` : '0%',
    date: dateText(entryTime(e)),
    is_dir: e.kind === 'dir',
  };
  if (e.kind === 'symlink' || e.kind === 'device') out.type = e.kind;
  if (e.encrypted) out.encrypted = true;
  if (e.method !== 0 && e.method !== 8) out.method = METHOD_NAMES[e.method] ?? `#${e.method}`;
  return out;
}

function dateText(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}
