import { z } from 'zod';
import { readRange } from '../core/base/fs/atomic.js';
import { ZONE_NAMES } from '../core/base/zones/zones.js';
import { defineFunction } from '../registry/define.js';
import { allowZoneInPath, groupParam, pathParam, zoneParam } from '../registry/params.js';
import { locate, requireFile } from '../core/base/files/located.js';
import { outputLimit, plural } from '../core/base/text/format.js';

/** Most bytes whose encoding fits in `chars` characters (hex: 2 per byte; base64: 4 per 3 bytes). */
function bytesFitting(chars: number, format: 'hex' | 'base64'): number {
  const n = format === 'hex' ? Math.floor(chars / 2) : Math.floor(chars / 4) * 3;
  return Math.max(1, n); // a pathological output valve must not stall paging at the same offset
}

export const shedReadBytes = defineFunction({
  name: 'shed_read_bytes',
  category: 'read',
  summary: 'Read raw bytes (hex or base64) from a byte offset.',
  description: 'Read bytes of any file as hex or base64, length bytes from offset. A cut read gives data.next_offset to continue.',
  params: {
    zone: zoneParam(ZONE_NAMES),
    path: pathParam(),
    output_format: z.enum(['hex', 'base64']).default('hex').describe('Encoding of the bytes'),
    offset: z.number().int().min(0, { message: 'byte offsets start at 0' }).default(0).describe('First byte (from 0)'),
    length: z.number().int().min(1, { message: 'read at least 1 byte' }).optional().describe('Bytes (default: to the end)'),
    group: groupParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: ZONE_NAMES, writes: false },
  example: { zone: 'storage', path: 'image.png', offset: 0, length: 16 },
  async handler(args, ctx) {
    const target = locate(ctx.zone(args.zone, args.group), args.path, 'path', 'read', args.allow_zone_in_path);
    const size = requireFile(target).size;
    const base = { path: target.rel, zone: target.zone.label, content_format: args.output_format, offset: args.offset, total_size: size };
    if (args.offset >= size) {
      return {
        data: { ...base, content: '', bytes_read: 0, truncated: false },
        message: `Nothing to read: offset ${args.offset} is at or past the end of ${target.shown} (${plural(size, 'byte')}).`,
      };
    }
    const wanted = Math.min(args.length ?? size - args.offset, size - args.offset);
    const cap = bytesFitting(outputLimit(ctx, undefined), args.output_format);
    const bytes = readRange(target.abs, args.offset, Math.min(wanted, cap));
    const truncated = bytes.length < wanted;
    const data: Record<string, unknown> = {
      ...base,
      content: bytes.toString(args.output_format),
      bytes_read: bytes.length,
      truncated,
    };
    const end = args.offset + bytes.length;
    if (end < size) data.next_offset = end;
    const range = `bytes ${args.offset}-${end - 1} of ${size}`;
    const message = truncated
      ? `Read ${range} of ${target.shown} as ${args.output_format}: TRUNCATED at ${plural(bytes.length, 'byte')} to stay within the output limit. Continue with offset=${end}.`
      : `Read ${plural(bytes.length, 'byte')} (${range}) of ${target.shown} as ${args.output_format}.`;
    return { data, message };
  },
});
