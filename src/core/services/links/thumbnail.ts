/**
 * Thumbnails for folder pages: a picture in a linked folder is shown at 40 CSS pixels beside its name,
 * and loading the original for that (a 12 MP photo is 5 MB) made a page of photos download every
 * photo whole. The page asks `?thumb=1` instead: the picture scaled to THUMB_SIDE pixels by
 * ImageMagick, confined like every converter (documents/confined.ts), the decoder named from the
 * file's own bytes (no coder sniffing), refused above DOC_LIMITS.imagePixels before decoding. The
 * entry's own link still serves the real file.
 *
 * Thumbnails are kept in memory by file identity and version (inode, size, modification time: a
 * changed file has another key), at
 * most CACHE_ENTRIES (a few KiB each), and at most MAX_RUNNING are made at once for the whole
 * process: a page of 500 photos, or a visitor asking for many, queues instead of starting 500
 * programs.
 */
import fs from 'node:fs';
import { runConverter, type Converter } from '../documents/confined.js';
import { imageFormat, imageSize } from '../documents/image.js';
import { DOC_LIMITS } from '../documents/limits.js';
import { parseValves, ValvesSchema } from '../../base/valves.js';
import { openChecked, type Target, type TargetOptions } from './serving.js';

/** Twice the 40 px the page shows: sharp on high-density screens. */
export const THUMB_SIDE = 80;
const CACHE_ENTRIES = 512;
const MAX_RUNNING = 2;
const CONVERT: Converter = { program: 'convert', pkg: 'imagemagick', reads: 'images' };

export interface Thumbnail {
  mime: 'image/jpeg' | 'image/png';
  bytes: Buffer;
}

const cache = new Map<string, Thumbnail>();
let made = 0;
let running = 0;

/** How many thumbnails this process has made (tests tell a cached answer from a new one). */
export function thumbnailsMade(): number {
  return made;
}
const waiting: Array<() => void> = [];

async function slot<T>(fn: () => Promise<T>): Promise<T> {
  if (running >= MAX_RUNNING) await new Promise<void>((resolve) => waiting.push(resolve));
  running++;
  try {
    return await fn();
  } finally {
    running--;
    waiting.shift()?.();
  }
}

/** The thumbnail of the picture a link target names, or undefined (not a picture, too large, not decodable). */
export async function linkThumbnail(target: Target, opts: TargetOptions): Promise<Thumbnail | undefined> {
  const fd = openChecked(target.abs, target.linkRoot);
  if (fd === undefined) return undefined;
  let key: string;
  let head: Buffer;
  try {
    const st = fs.fstatSync(fd);
    // Not the change time: staging the file for the converter hard-links it, which moves its ctime.
    key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
    head = Buffer.alloc(64);
    head = head.subarray(0, fs.readSync(fd, head, 0, head.length, 0));
  } finally {
    fs.closeSync(fd);
  }
  const hit = cache.get(key);
  if (hit !== undefined) return hit;
  const format = imageFormat(head);
  if (format === undefined) return undefined;
  const size = imageSize(target.abs, format);
  if (size === undefined || size.width === 0 || size.height === 0 || size.width * size.height > DOC_LIMITS.imagePixels) return undefined;
  const valves = parseValves(ValvesSchema, { ...(opts.valves?.() ?? {}), storage_base_path: opts.storageBase }, 'valve');
  const out: 'jpeg' | 'png' = format === 'jpeg' ? 'jpeg' : 'png';
  const r = await slot(() =>
    runConverter(valves, CONVERT, target.abs, `.${format === 'jpeg' ? 'jpg' : format}`, {
      args: (input) => [
        ...['-limit', 'memory', '256MiB', '-limit', 'map', '512MiB', '-limit', 'disk', '1GiB', '-limit', 'area', '128MP', '-limit', 'thread', '1'],
        // libjpeg decodes at 1/2..1/8 scale when told the size wanted: a 12 MP photo costs a fraction.
        ...(format === 'jpeg' ? ['-define', `jpeg:size=${THUMB_SIDE * 2}x${THUMB_SIDE * 2}`] : []),
        `${format}:${input}[0]`,
        '-auto-orient',
        '-thumbnail',
        `${THUMB_SIDE}x${THUMB_SIDE}>`,
        '-strip',
        ...(out === 'jpeg' ? ['-quality', '75'] : []),
        `${out}:-`,
      ],
      captureBytes: 512 * 1024,
      timeoutSec: valves.exec_timeout_default,
    }),
  ).catch(() => undefined);
  if (r === undefined || r.returncode !== 0 || r.stdout.bytes.length === 0 || r.stdout.total > r.stdout.bytes.length) return undefined;
  const thumb: Thumbnail = { mime: out === 'jpeg' ? 'image/jpeg' : 'image/png', bytes: Buffer.from(r.stdout.bytes) };
  made++;
  if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(key, thumb);
  return thumb;
}
