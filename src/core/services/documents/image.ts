/**
 * Images for multimodal models: PNG, JPEG, GIF and WebP, scaled to at most DOC_LIMITS.imageSide
 * pixels on the long side and kept under a byte cap (valve read_image_max_kb), re-encoded by
 * ImageMagick in the sandbox (confined.ts). The size is read from the file's header first: an
 * image declaring more than DOC_LIMITS.imagePixels is refused before any decoder sees it. The
 * decoder is named explicitly (png:, jpeg:, gif:, webp:), so ImageMagick never picks a coder by
 * sniffing (no SVG, MVG, PostScript or text "images"); only the first frame is read; orientation
 * is applied and metadata (EXIF, GPS) stripped.
 */
import fs from 'node:fs';
import { shedError } from '../../base/errors.js';
import type { Valves } from '../../base/valves.js';
import { runConverter, type Converter } from './confined.js';
import { DOC_LIMITS } from './limits.js';

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

const CONVERT: Converter = { program: 'convert', pkg: 'imagemagick', reads: 'images' };

export interface ShownImage {
  mime_type: string;
  width: number;
  height: number;
  original_width: number;
  original_height: number;
  bytes: number;
  /** The image as one data URI (what Open WebUI moves from a tool result to the model). */
  data_uri: string;
}

/** The format of an image from its first bytes, or undefined. */
export function imageFormat(head: Uint8Array): ImageFormat | undefined {
  const b = Buffer.from(head.buffer, head.byteOffset, head.length);
  if (b.length >= 8 && b.readUInt32BE(0) === 0x89504e47 && b.readUInt32BE(4) === 0x0d0a1a0a) return 'png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (b.length >= 6 && /^GIF8[79]a$/.test(b.toString('latin1', 0, 6))) return 'gif';
  if (b.length >= 12 && b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  return undefined;
}

/** Width and height from the header (JPEG: the first frame marker within the first MiB). */
export function imageSize(abs: string, format: ImageFormat): { width: number; height: number } | undefined {
  const fd = fs.openSync(abs, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    const b = Buffer.alloc(format === 'jpeg' ? 1024 * 1024 : 64);
    const n = fs.readSync(fd, b, 0, b.length, 0);
    const h = b.subarray(0, n);
    if (format === 'png') return h.length >= 24 ? { width: h.readUInt32BE(16), height: h.readUInt32BE(20) } : undefined;
    if (format === 'gif') return h.length >= 10 ? { width: h.readUInt16LE(6), height: h.readUInt16LE(8) } : undefined;
    if (format === 'webp') return webpSize(h);
    return jpegSize(h);
  } finally {
    fs.closeSync(fd);
  }
}

function webpSize(h: Buffer): { width: number; height: number } | undefined {
  if (h.length < 30) return undefined;
  const chunk = h.toString('latin1', 12, 16);
  if (chunk === 'VP8X') return { width: 1 + h.readUIntLE(24, 3), height: 1 + h.readUIntLE(27, 3) };
  if (chunk === 'VP8L') {
    const bits = h.readUInt32LE(21);
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff) };
  }
  if (chunk === 'VP8 ') return { width: h.readUInt16LE(26) & 0x3fff, height: h.readUInt16LE(28) & 0x3fff };
  return undefined;
}

function jpegSize(h: Buffer): { width: number; height: number } | undefined {
  let i = 2;
  while (i + 9 < h.length) {
    if (h[i] !== 0xff) return undefined;
    const marker = h[i + 1]!;
    if (marker === 0xff) {
      i++;
      continue;
    }
    const len = h.readUInt16BE(i + 2);
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return { height: h.readUInt16BE(i + 5), width: h.readUInt16BE(i + 7) };
    if (len < 2) return undefined;
    i += 2 + len;
  }
  return undefined;
}

function damaged(shown: string, why: string): Error {
  return shedError('INVALID_FORMAT', `${shown} could not be read as an image (${why}).`, {
    details: { reason: why },
    hint: 'The file may be damaged or not the image its name says: check it with shed_file_type.',
  });
}

/** The image scaled for a model, under `maxBytes`. */
export async function imageForModel(valves: Valves, abs: string, shown: string, format: ImageFormat, maxBytes: number): Promise<ShownImage> {
  const size = imageSize(abs, format);
  if (size === undefined || size.width === 0 || size.height === 0) throw damaged(shown, 'its header gives no size');
  if (size.width * size.height > DOC_LIMITS.imagePixels) {
    throw shedError('DOCUMENT_LIMIT', `${shown} declares ${size.width} x ${size.height} pixels (${Math.round((size.width * size.height) / 1e6)} megapixels); images above ${DOC_LIMITS.imagePixels / 1e6} megapixels are not decoded.`, {
      details: { width: size.width, height: size.height, limit_pixels: DOC_LIMITS.imagePixels },
      hint: 'Nothing was changed. A real photo is far smaller; this file may be crafted. shed_file_type shows what it is.',
    });
  }
  const attempts: Array<{ side: number; out: 'png' | 'jpeg'; quality: number }> = [
    { side: DOC_LIMITS.imageSide, out: format === 'jpeg' ? 'jpeg' : 'png', quality: 85 },
    { side: DOC_LIMITS.imageSide, out: 'jpeg', quality: 75 },
    { side: 1024, out: 'jpeg', quality: 70 },
    { side: 768, out: 'jpeg', quality: 60 },
  ];
  for (const a of attempts) {
    const r = await runConverter(valves, CONVERT, abs, `.${format === 'jpeg' ? 'jpg' : format}`, {
      args: (input) => [
        ...['-limit', 'memory', '256MiB', '-limit', 'map', '512MiB', '-limit', 'disk', '1GiB', '-limit', 'area', '128MP'],
        ...['-limit', 'width', '32KP', '-limit', 'height', '32KP', '-limit', 'thread', '1', '-limit', 'time', String(valves.exec_timeout_default)],
        `${format}:${input}[0]`,
        '-auto-orient',
        '-resize',
        `${a.side}x${a.side}>`,
        '-strip',
        ...(a.out === 'jpeg' ? ['-background', 'white', '-alpha', 'remove', '-alpha', 'off', '-sampling-factor', '4:2:0', '-quality', String(a.quality)] : []),
        `${a.out}:-`,
      ],
      captureBytes: maxBytes + 1,
      timeoutSec: valves.exec_timeout_default,
    });
    const out = r.stdout.bytes;
    if (r.returncode !== 0 || out.length === 0) {
      const why = r.stderr.bytes.toString('utf8').split('\n').find((l) => l.trim() !== '') ?? `convert exited with ${r.returncode}`;
      throw damaged(shown, why.replace(/^convert(-im6\.q16)?: /, '').slice(0, 200));
    }
    if (r.stdout.total > maxBytes) continue;
    const shownSize = imageFormat(out) === 'png' ? { width: out.readUInt32BE(16), height: out.readUInt32BE(20) } : jpegSize(out);
    if (shownSize === undefined) throw damaged(shown, 'the converter produced no image');
    const mime = a.out === 'png' ? 'image/png' : 'image/jpeg';
    return {
      mime_type: mime,
      width: shownSize.width,
      height: shownSize.height,
      original_width: size.width,
      original_height: size.height,
      bytes: out.length,
      data_uri: `data:${mime};base64,${out.toString('base64')}`,
    };
  }
  throw shedError('DOCUMENT_LIMIT', `${shown} stays above the image size limit of ${Math.round(maxBytes / 1024)} KiB even scaled down to 768 pixels.`, {
    details: { limit_kb: Math.round(maxBytes / 1024) },
    hint: 'An admin can raise the valve read_image_max_kb.',
  });
}
