import { z } from 'zod';
import { readRange } from '../core/base/fs/atomic.js';
import { ZONE_NAMES } from '../core/base/zones/zones.js';
import { defineFunction } from '../registry/define.js';
import { allowZoneInPath, groupParam, pathParam, zoneParam } from '../registry/params.js';
import { locate, requireFile } from '../core/base/files/located.js';
import { outputLimit, plural } from '../core/base/text/format.js';

const DEFAULT_LENGTH = 256;
const MAX_LENGTH = 4096;
const PER_LINE = 16;
/** Longest line: 8-digit offset, ': ', 39 hex columns, 2 spaces, 16 ASCII, newline. */
const LINE_CHARS = 10 + 39 + 2 + PER_LINE + 1;

/** One xxd-style line: `00000010: 4865 6c6c 6f0a ...  Hello.`, padded so the ASCII column aligns. */
function dumpLine(address: number, bytes: Uint8Array): string {
  let hex = '';
  let ascii = '';
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (i > 0 && i % 2 === 0) hex += ' ';
    hex += b.toString(16).padStart(2, '0');
    ascii += b >= 32 && b <= 126 ? String.fromCharCode(b) : '.';
  }
  return `${address.toString(16).padStart(8, '0')}: ${hex.padEnd(39)}  ${ascii}`;
}

export function hexdump(bytes: Uint8Array, startAddress: number): string {
  const lines: string[] = [];
  for (let i = 0; i < bytes.length; i += PER_LINE) lines.push(dumpLine(startAddress + i, bytes.subarray(i, i + PER_LINE)));
  return lines.join('\n');
}

export const shedHexdump = defineFunction({
  name: 'shed_hexdump',
  category: 'read',
  summary: 'xxd-style hex dump of a file (up to 4096 bytes per call).',
  description: 'Hex dump of part of any file: offset, 16 bytes in hex, ASCII. data.next_offset continues.',
  params: {
    zone: zoneParam(ZONE_NAMES),
    path: pathParam(),
    offset: z.number().int().min(0, { message: 'byte offsets start at 0; negative values are not allowed' }).default(0).describe('First byte (from 0)'),
    length: z.number().int().optional().describe('Bytes (default 256, max 4096)'),
    group: groupParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: ZONE_NAMES, writes: false },
  example: { zone: 'storage', path: 'image.png', offset: 0, length: 64 },
  async handler(args, ctx) {
    const target = locate(ctx.zone(args.zone, args.group), args.path, 'path', 'read', args.allow_zone_in_path);
    const size = requireFile(target).size;
    const asked = args.length ?? DEFAULT_LENGTH;
    let length = Math.min(Math.max(asked, 1), MAX_LENGTH);
    // Keep the dump within the output limit too (a whole line per 16 bytes).
    const fitting = Math.max(1, Math.floor(outputLimit(ctx, undefined) / LINE_CHARS)) * PER_LINE;
    length = Math.min(length, fitting);
    const base = { path: target.rel, zone: target.zone.label, offset: args.offset, file_size: size };
    if (args.offset >= size) {
      return {
        data: { ...base, length: 0, hexdump: '' },
        message: `Nothing to show: offset ${args.offset} is at or past the end of ${target.shown} (${plural(size, 'byte')}).${size > 0 ? ` Use an offset below ${size}.` : ''}`,
      };
    }
    const bytes = readRange(target.abs, args.offset, length);
    const end = args.offset + bytes.length;
    const data: Record<string, unknown> = { ...base, length: bytes.length, hexdump: hexdump(bytes, args.offset) };
    if (end < size) data.next_offset = end;
    const clamped = asked !== length ? ` (length ${asked} adjusted to ${length})` : '';
    const more = end < size ? ` ${plural(size - end, 'more byte')}: continue with offset=${end}.` : '';
    return { data, message: `Hex dump of ${target.shown}, bytes ${args.offset}-${end - 1} of ${size}${clamped}.${more}` };
  },
});
