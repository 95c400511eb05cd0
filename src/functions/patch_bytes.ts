import { z } from 'zod';
import { shedError, showValue } from '../core/base/errors.js';
import { readBytes } from '../core/base/fs/read.js';
import { formatSize } from '../core/base/text/size.js';
import { defineFunction } from '../registry/define.js';
import { plural, renderCall } from '../core/base/text/format.js';
import { allowZoneInPath, groupParam, messageParam, modeParam, pathParam, unlisted, zoneParam } from '../registry/params.js';
import { locate, notFound, requireNotRoot, type ZonedPath } from '../core/base/files/located.js';
import { underLock, writeChecked } from '../core/services/write.js';

const WRITE_ZONES = ['storage', 'documents', 'group'] as const;
const EXAMPLE = { zone: 'storage', path: 'image.png', content: '89504e470d0a1a0a', content_format: 'hex', overwrite: true };

/**
 * The size of the regular file a modifying call will rewrite, or undefined when nothing is there.
 * (The resolver already refuses writes through a final symbolic link.)
 */
export function existingFileSize(target: ZonedPath): number | undefined {
  const st = target.stat;
  if (st === undefined) return undefined;
  if (st.isDirectory()) {
    throw shedError('NOT_A_FILE', `${target.shown} is a folder, not a file.`, {
      details: { parameter: 'path', path: target.rel },
      hint: `Name a file inside it, e.g. path="${target.rel}/data.bin"; list it with shed_tree(zone="${target.zone.name}", path="${target.rel}").`,
    });
  }
  if (!st.isFile()) throw shedError('NOT_A_FILE', `${target.shown} is not a regular file.`, { details: { parameter: 'path', path: target.rel } });
  return st.size;
}

function badContent(format: 'hex' | 'base64', why: string, content: string): Error {
  const sample = format === 'hex' ? '48656c6c6f' : 'SGVsbG8=';
  return shedError('INVALID_PARAMETER', `'content' is not valid ${format}: ${why}; got ${showValue(content)}.`, {
    details: { parameter: 'content', content_format: format },
    hint: `Example: ${renderCall('shed_patch_bytes', { zone: 'storage', path: 'data.bin', content: sample, content_format: format })} (the bytes of "Hello"). For plain text use content_format="raw".`,
  });
}

/** Hex: whitespace and `0x` prefixes of byte groups ("0x89 0x50") are ignored. */
export function decodeHex(content: string): Buffer {
  const clean = content.replace(/(?<![0-9a-fA-F])0x/gi, '').replace(/\s+/g, '');
  const bad = /[^0-9a-fA-F]/.exec(clean);
  if (bad) throw badContent('hex', `'${bad[0]}' is not a hex digit (0-9, a-f)`, content);
  if (clean.length % 2 !== 0) throw badContent('hex', `it has an odd number of hex digits (${clean.length}); each byte needs two`, content);
  return Buffer.from(clean, 'hex');
}

/** Base64: standard or URL-safe alphabet, padding optional, whitespace ignored. */
export function decodeBase64(content: string): Buffer {
  const clean = content.replace(/\s+/g, '');
  const bad = /[^A-Za-z0-9+/\-_=]/.exec(clean);
  if (bad) throw badContent('base64', `'${bad[0]}' is not a base64 character`, content);
  const body = clean.replace(/=+$/, '');
  if (body.includes('=')) throw badContent('base64', "'=' may only appear at the end", content);
  const padding = clean.length - body.length;
  if (body.length % 4 === 1 || padding > 2 || (padding > 0 && clean.length % 4 !== 0)) {
    throw badContent('base64', 'its length does not fit base64 (a character is missing or extra)', content);
  }
  return Buffer.from(body.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

function decodeContent(content: string, format: 'hex' | 'base64' | 'raw'): Buffer {
  if (format === 'hex') return decodeHex(content);
  if (format === 'base64') return decodeBase64(content);
  return Buffer.from(content, 'utf8');
}

function positionError(code: 'MISSING_PARAMETER' | 'INVALID_PARAMETER', param: 'offset' | 'length', message: string, args: { zone: string; path: string; offset?: number | undefined }, position: string): Error {
  const example =
    position === 'replace'
      ? { zone: args.zone, path: args.path, content: 'ff', position: 'replace', offset: 0, length: 1 }
      : { zone: args.zone, path: args.path, content: 'ff', position: 'at', offset: 0 };
  const received = param === 'offset' ? args.offset : undefined;
  return shedError(code, message, { details: { parameter: param, ...(received === undefined ? {} : { received }) }, hint: `Example: ${renderCall('shed_patch_bytes', example)}` });
}

interface Plan {
  result: Buffer;
  created: boolean;
  removed: number;
}

/** Builds the new file content from the old one; `old` is undefined when the file does not exist. */
function plan(old: Buffer | undefined, bytes: Buffer, position: string, offset: number | undefined, length: number | undefined, missing: () => Error): Plan {
  if (position === 'overwrite') return { result: bytes, created: old === undefined, removed: old?.length ?? 0 };
  if (old === undefined) {
    // A missing file can be created only where the position makes sense for an empty file.
    if (position === 'start' || position === 'end' || (position === 'at' && offset === 0)) return { result: bytes, created: true, removed: 0 };
    throw missing();
  }
  if (position === 'start') return { result: Buffer.concat([bytes, old]), created: false, removed: 0 };
  if (position === 'end') return { result: Buffer.concat([old, bytes]), created: false, removed: 0 };
  const at = offset!;
  const removed = position === 'replace' ? Math.min(length!, old.length - at) : 0;
  return { result: Buffer.concat([old.subarray(0, at), bytes, old.subarray(at + removed)]), created: false, removed };
}

export const shedPatchBytes = defineFunction({
  name: 'shed_patch_bytes',
  category: 'write',
  summary: 'Write binary data (hex, base64, text) at a byte offset, or append/overwrite.',
  description: 'Write bytes into a file: end, start, at (insert at offset) or replace (length bytes at offset); overwrite=true replaces the file.',
  params: {
    zone: zoneParam(WRITE_ZONES),
    path: pathParam(),
    content: z.string().describe('Bytes, e.g. hex "89504e47"'),
    content_format: z.enum(['hex', 'base64', 'raw']).default('hex').describe('Encoding of content'),
    position: z.enum(['start', 'end', 'at', 'replace']).default('end').describe('Where to write'),
    offset: z.number().int().min(0, { message: 'byte offsets start at 0' }).optional().describe('Byte offset for at/replace'),
    length: z.number().int().min(0, { message: 'length cannot be negative' }).optional().describe('Bytes to replace'),
    overwrite: z.boolean().default(false).describe('Replace the whole file'),
    safe: unlisted(z.boolean().default(true).describe('true: lock the file during the write; false: write even while this conversation has a locked edit open on it.')),
    group: groupParam,
    message: messageParam,
    mode: modeParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: WRITE_ZONES, writes: true },
  example: EXAMPLE,
  paramHints: {
    content: 'With content_format="hex" use two hex digits per byte, e.g. "48656c6c6f"; use content_format="raw" for plain text.',
    position: 'Use "end", "start", "at" (with offset) or "replace" (with offset and length).',
  },
  overwriteIgnores: ['position', 'offset', 'length'],
  mutates: true,
  async handler(args, ctx) {
    const zone = ctx.zone(args.zone, args.group);
    const bytes = decodeContent(args.content, args.content_format);
    const position = args.overwrite ? 'overwrite' : args.position;
    if (position === 'at' || position === 'replace') {
      if (args.offset === undefined) throw positionError('MISSING_PARAMETER', 'offset', `position="${position}" needs 'offset', the byte offset to write at (0 = first byte).`, args, position);
      if (position === 'replace' && args.length === undefined) {
        throw positionError('MISSING_PARAMETER', 'length', `position="replace" needs 'length', the number of bytes to replace at offset ${args.offset}.`, args, position);
      }
    }
    const target = locate(zone, args.path, 'path', 'write', args.allow_zone_in_path);
    requireNotRoot(target);

    const write = async () => {
      const before = existingFileSize(target);
      const old = before === undefined ? undefined : readBytes(target.abs);
      if (old !== undefined && (position === 'at' || position === 'replace') && args.offset! > old.length) {
        throw positionError('INVALID_PARAMETER', 'offset', `Offset ${args.offset} beyond file size (${old.length}) of ${target.shown}; use an offset from 0 to ${old.length}.`, args, position);
      }
      const p = plan(old, bytes, position, args.offset, args.length, () => notFound(target));
      await writeChecked(ctx, target, p.result, before ?? 0);
      return p;
    };
    const done = await underLock(ctx, target, args.safe, write);

    return result(args, target, position, bytes.length, done);
  },
});

function result(
  args: { content_format: string; offset?: number | undefined; safe: boolean },
  target: ZonedPath,
  position: string,
  written: number,
  done: Plan,
) {
  const data: Record<string, unknown> = {
    path: target.rel,
    zone: target.zone.label,
    position,
    bytes_written: written,
    file_size: done.result.length,
    created: done.created,
    safe_mode: args.safe,
    content_format: args.content_format,
  };
  if (position === 'at' || position === 'replace') data.offset = args.offset;
  if (position === 'replace') data.bytes_replaced = done.removed;
  const verb = done.created ? 'created' : position === 'overwrite' ? 'overwritten' : 'patched';
  const where =
    done.created || position === 'overwrite' ? ' to' : position === 'at' || position === 'replace' ? ` at offset ${args.offset} of` : ` at the ${position} of`;
  return {
    data,
    message: `File ${verb}: ${plural(written, 'byte')} written${where} ${target.shown} (now ${formatSize(done.result.length)}).`,
    ...(target.zone.versioned ? { change: { zone: target.zone, paths: [target.rel], summary: `Patch bytes ${target.rel}: ${position}` } } : {}),
  };
}
