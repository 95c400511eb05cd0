import { z } from 'zod';
import { shedError } from '../core/base/errors.js';
import { readBytes } from '../core/base/fs/read.js';
import { defineFunction } from '../registry/define.js';
import { allowZoneInPath, groupParam, messageParam, pathParam, zoneParam } from '../registry/params.js';
import { locate, notFound, requireNotRoot } from '../core/base/files/located.js';
import { plural } from '../core/base/text/format.js';
import { underLock, writeChecked } from '../core/services/write.js';
import { existingFileSize } from './patch_bytes.js';

const WRITE_ZONES = ['storage', 'documents', 'group'] as const;
const CR = 13;
const LF = 10;

export type EolStyle = 'unix' | 'dos' | 'mac' | 'mixed' | 'none';

export interface EolCounts {
  crlf: number;
  lf: number;
  cr: number;
}

/** Counts CRLF pairs, lone LFs and lone CRs in bytes or UTF-16 code units. */
export function countEols(units: ArrayLike<number>): EolCounts {
  const counts = { crlf: 0, lf: 0, cr: 0 };
  for (let i = 0; i < units.length; i++) {
    const u = units[i];
    if (u === CR) {
      if (units[i + 1] === LF) {
        counts.crlf++;
        i++;
      } else counts.cr++;
    } else if (u === LF) counts.lf++;
  }
  return counts;
}

export function eolStyle(c: EolCounts): EolStyle {
  const kinds = [c.crlf > 0, c.lf > 0, c.cr > 0].filter(Boolean).length;
  if (kinds === 0) return 'none';
  if (kinds > 1) return 'mixed';
  return c.crlf > 0 ? 'dos' : c.lf > 0 ? 'unix' : 'mac';
}

/** Rewrites every line ending (CRLF, LF, CR) as `eol`. */
function convert(bytes: Buffer, eol: 'unix' | 'dos'): Buffer {
  const out = Buffer.alloc(eol === 'dos' ? bytes.length * 2 : bytes.length);
  let o = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === CR || b === LF) {
      if (b === CR && bytes[i + 1] === LF) i++;
      if (eol === 'dos') out[o++] = CR;
      out[o++] = LF;
    } else out[o++] = b;
  }
  return out.subarray(0, o);
}

const TARGETS = { unix: 'unix', lf: 'unix', dos: 'dos', crlf: 'dos', windows: 'dos' } as const;

export const shedConvertEol = defineFunction({
  name: 'shed_convert_eol',
  category: 'files',
  summary: 'Convert the line endings of a text file to Unix (LF) or Windows/DOS (CRLF).',
  description: 'Convert the line endings of a text file to unix (LF) or dos (CRLF).',
  params: {
    zone: zoneParam(WRITE_ZONES),
    path: pathParam(),
    to: z.enum(['unix', 'lf', 'dos', 'crlf', 'windows']).default('unix').describe('Target line endings'),
    group: groupParam,
    message: messageParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: WRITE_ZONES, writes: true },
  example: { zone: 'storage', path: 'script.sh', to: 'unix' },
  paramHints: { to: 'Use to="unix" for LF line endings or to="dos" for CRLF (Windows).' },
  mutates: true,
  hints: { idempotent: true },
  async handler(args, ctx) {
    const zone = ctx.zone(args.zone, args.group);
    const target = locate(zone, args.path, 'path', 'write', args.allow_zone_in_path);
    requireNotRoot(target);
    const before = existingFileSize(target);
    if (before === undefined) throw notFound(target);
    const bytes = readBytes(target.abs);
    if (bytes.includes(0)) {
      throw shedError('INVALID_FORMAT', `${target.shown} looks binary (it contains NUL bytes); line endings are only converted in text files.`, {
        details: { path: target.rel, size: bytes.length },
        hint: `Check what it is with shed_file_type(zone="${zone.name}", path="${target.rel}"). UTF-16 text files are not supported.`,
      });
    }
    const wanted = TARGETS[args.to];
    const counts = countEols(bytes);
    const original = eolStyle(counts);
    const converted = wanted === 'unix' ? counts.crlf + counts.cr : counts.lf + counts.cr;
    const data: Record<string, unknown> = {
      path: target.rel,
      zone: zone.label,
      original_format: original,
      new_format: wanted,
      changed: converted > 0,
      lines_converted: converted,
    };
    if (converted === 0) {
      data.file_size = bytes.length;
      const why = original === 'none' ? 'it has no line endings' : `it already uses ${wanted} line endings`;
      return { data, message: `${target.shown} was not changed: ${why}.` };
    }
    const out = convert(bytes, wanted);
    await underLock(ctx, target, false, () => writeChecked(ctx, target, out, bytes.length));
    data.file_size = out.length;
    return {
      data,
      message: `Converted ${plural(converted, 'line ending')} of ${target.shown} from ${original} to ${wanted} (${wanted === 'unix' ? 'LF' : 'CRLF'}).`,
      ...(zone.versioned ? { change: { zone, paths: [target.rel], summary: `Convert EOL to ${wanted}: ${target.rel}` } } : {}),
    };
  },
});
