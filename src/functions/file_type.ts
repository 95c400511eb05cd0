import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { readRange } from '../core/base/fs/atomic.js';
import { formatSize } from '../core/base/text/size.js';
import { ZONE_NAMES } from '../core/base/zones/zones.js';
import { defineFunction } from '../registry/define.js';
import { allowZoneInPath, groupParam, zoneParam } from '../registry/params.js';
import { locate, notFound } from '../core/base/files/located.js';
import { mimeOfExtension } from '../core/formats/mime.js';
import { countEols, eolStyle } from './convert_eol.js';

/** Bytes inspected: enough for tar's magic (offset 257), a few ZIP headers and a text sample. */
const HEAD = 8192;


interface Kind {
  mime: string;
  description: string;
}

const ascii = (b: Buffer, at: number, text: string) => b.length >= at + text.length && b.toString('latin1', at, at + text.length) === text;
const bytesAt = (b: Buffer, at: number, ...v: number[]) => b.length >= at + v.length && v.every((x, i) => b[at + i] === x);

/** Formats recognised by their first bytes, tried in order. */
const MAGIC: Array<[test: (b: Buffer) => boolean, kind: (b: Buffer) => Kind]> = [
  [(b) => bytesAt(b, 0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a), (b) => ({ mime: 'image/png', description: `PNG image${b.length >= 24 && ascii(b, 12, 'IHDR') ? `, ${b.readUInt32BE(16)} x ${b.readUInt32BE(20)}` : ''}` })],
  [(b) => bytesAt(b, 0, 0xff, 0xd8, 0xff), () => ({ mime: 'image/jpeg', description: 'JPEG image' })],
  [(b) => ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a'), (b) => ({ mime: 'image/gif', description: `GIF image${b.length >= 10 ? `, ${b.readUInt16LE(6)} x ${b.readUInt16LE(8)}` : ''}` })],
  [(b) => ascii(b, 0, '%PDF-'), (b) => ({ mime: 'application/pdf', description: `PDF document, version ${b.toString('latin1', 5, 8)}` })],
  [(b) => ascii(b, 0, 'PK\x03\x04'), zipKind],
  [(b) => ascii(b, 0, 'PK\x05\x06'), () => ({ mime: 'application/zip', description: 'ZIP archive (empty)' })],
  [(b) => bytesAt(b, 0, 0x1f, 0x8b), () => ({ mime: 'application/gzip', description: 'gzip compressed data' })],
  [(b) => ascii(b, 0, 'BZh'), () => ({ mime: 'application/x-bzip2', description: 'bzip2 compressed data' })],
  [(b) => bytesAt(b, 0, 0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00), () => ({ mime: 'application/x-xz', description: 'XZ compressed data' })],
  [(b) => bytesAt(b, 0, 0x28, 0xb5, 0x2f, 0xfd), () => ({ mime: 'application/zstd', description: 'Zstandard compressed data' })],
  [(b) => bytesAt(b, 0, 0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c), () => ({ mime: 'application/x-7z-compressed', description: '7-Zip archive' })],
  [(b) => ascii(b, 0, 'Rar!\x1a\x07'), () => ({ mime: 'application/vnd.rar', description: 'RAR archive' })],
  [(b) => ascii(b, 257, 'ustar'), () => ({ mime: 'application/x-tar', description: 'tar archive' })],
  [(b) => ascii(b, 0, '\x7fELF'), elfKind],
  [(b) => ascii(b, 0, 'MZ') && b.length >= 64, () => ({ mime: 'application/vnd.microsoft.portable-executable', description: 'DOS/Windows executable' })],
  [(b) => bytesAt(b, 0, 0xca, 0xfe, 0xba, 0xbe), () => ({ mime: 'application/java-vm', description: 'Java class file or Mach-O universal binary' })],
  [(b) => bytesAt(b, 0, 0xcf, 0xfa, 0xed, 0xfe) || bytesAt(b, 0, 0xce, 0xfa, 0xed, 0xfe), () => ({ mime: 'application/x-mach-binary', description: 'Mach-O executable' })],
  [(b) => bytesAt(b, 0, 0x00, 0x61, 0x73, 0x6d), () => ({ mime: 'application/wasm', description: 'WebAssembly module' })],
  [(b) => ascii(b, 0, 'SQLite format 3\x00'), () => ({ mime: 'application/vnd.sqlite3', description: 'SQLite 3 database' })],
  [(b) => bytesAt(b, 0, 0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1), () => ({ mime: 'application/x-ole-storage', description: 'Microsoft OLE2 compound file (old Office .doc/.xls/.ppt, .msi)' })],
  [(b) => ascii(b, 0, 'ID3') || (b[0] === 0xff && [0xfb, 0xf3, 0xf2, 0xfa].includes(b[1] ?? 0)), () => ({ mime: 'audio/mpeg', description: 'MP3 audio' })],
  [(b) => b[0] === 0xff && (b[1] === 0xf1 || b[1] === 0xf9), () => ({ mime: 'audio/aac', description: 'AAC audio (ADTS)' })],
  [(b) => ascii(b, 4, 'ftyp'), ftypKind],
  [(b) => ascii(b, 0, 'OggS'), (b) => (b.includes('theora') ? { mime: 'video/ogg', description: 'Ogg video' } : { mime: 'audio/ogg', description: 'Ogg audio' })],
  [(b) => ascii(b, 0, 'RIFF') && ascii(b, 8, 'WAVE'), () => ({ mime: 'audio/wav', description: 'WAV audio' })],
  [(b) => ascii(b, 0, 'RIFF') && ascii(b, 8, 'AVI '), () => ({ mime: 'video/x-msvideo', description: 'AVI video' })],
  [(b) => ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP'), () => ({ mime: 'image/webp', description: 'WebP image' })],
  [(b) => ascii(b, 0, 'RIFF'), () => ({ mime: 'application/octet-stream', description: 'RIFF container' })],
  [(b) => ascii(b, 0, 'fLaC'), () => ({ mime: 'audio/flac', description: 'FLAC audio' })],
  [(b) => ascii(b, 0, 'MThd'), () => ({ mime: 'audio/midi', description: 'MIDI audio' })],
  [(b) => bytesAt(b, 0, 0x1a, 0x45, 0xdf, 0xa3), (b) => (b.includes('webm') ? { mime: 'video/webm', description: 'WebM video' } : { mime: 'video/x-matroska', description: 'Matroska video' })],
  [(b) => ascii(b, 0, 'II*\x00') || ascii(b, 0, 'MM\x00*'), () => ({ mime: 'image/tiff', description: 'TIFF image' })],
  // "BM" alone is too weak (text can start with it): also require a known DIB header size.
  [(b) => ascii(b, 0, 'BM') && b.length >= 18 && [12, 40, 52, 56, 64, 108, 124].includes(b.readUInt32LE(14)), () => ({ mime: 'image/bmp', description: 'BMP image' })],
  [(b) => (bytesAt(b, 0, 0, 0, 1, 0) || bytesAt(b, 0, 0, 0, 2, 0)) && b.length >= 6 && b.readUInt16LE(4) > 0, (b) => ({ mime: 'image/x-icon', description: b[2] === 1 ? 'Windows icon' : 'Windows cursor' })],
  [(b) => ascii(b, 0, '8BPS'), () => ({ mime: 'image/vnd.adobe.photoshop', description: 'Photoshop image' })],
  [(b) => ascii(b, 0, 'wOFF'), () => ({ mime: 'font/woff', description: 'WOFF font' })],
  [(b) => ascii(b, 0, 'wOF2'), () => ({ mime: 'font/woff2', description: 'WOFF2 font' })],
  [(b) => ascii(b, 0, 'OTTO'), () => ({ mime: 'font/otf', description: 'OpenType font' })],
  [(b) => bytesAt(b, 0, 0, 1, 0, 0, 0), () => ({ mime: 'font/ttf', description: 'TrueType font' })],
  [(b) => ascii(b, 0, '%!PS'), () => ({ mime: 'application/postscript', description: 'PostScript document' })],
  [(b) => ascii(b, 0, '#!'), scriptKind],
];

/** Names of the first entries of a ZIP, read from the local headers inside the sample. */
function zipNames(b: Buffer): string[] {
  const names: string[] = [];
  let at = 0;
  while (names.length < 16 && ascii(b, at, 'PK\x03\x04') && at + 30 <= b.length) {
    const flags = b.readUInt16LE(at + 6);
    const compressed = b.readUInt32LE(at + 18);
    const nameLen = b.readUInt16LE(at + 26);
    const extraLen = b.readUInt16LE(at + 28);
    if (at + 30 + nameLen > b.length) break;
    names.push(b.toString('utf8', at + 30, at + 30 + nameLen));
    if (flags & 0x08) break; // sizes live after the data: the next header cannot be located cheaply
    at += 30 + nameLen + extraLen + compressed;
  }
  return names;
}

function zipKind(b: Buffer): Kind {
  const names = zipNames(b);
  const has = (prefix: string) => names.some((n) => n.startsWith(prefix));
  if (names[0] === 'mimetype') {
    // ODF and EPUB store their MIME type uncompressed right after the first header.
    const start = 30 + 'mimetype'.length + b.readUInt16LE(28);
    const mime = b.toString('latin1', start, start + b.readUInt32LE(18)).trim();
    if (/^application\/[\w.+-]+$/.test(mime)) {
      return { mime, description: mime === 'application/epub+zip' ? 'EPUB e-book (ZIP container)' : `OpenDocument file (${mime.split('.').pop()})` };
    }
  }
  if (has('word/')) return { mime: mimeOfExtension('docx')!, description: 'Microsoft Word document (DOCX)' };
  if (has('xl/')) return { mime: mimeOfExtension('xlsx')!, description: 'Microsoft Excel spreadsheet (XLSX)' };
  if (has('ppt/')) return { mime: mimeOfExtension('pptx')!, description: 'Microsoft PowerPoint presentation (PPTX)' };
  if (has('AndroidManifest.xml')) return { mime: mimeOfExtension('apk')!, description: 'Android package (APK)' };
  if (has('META-INF/')) return { mime: mimeOfExtension('jar')!, description: 'Java archive (JAR)' };
  const office = has('[Content_Types].xml') ? ' (an Office Open XML document: DOCX, XLSX or PPTX)' : ' (may also be DOCX, XLSX, PPTX, ODT, JAR...)';
  return { mime: 'application/zip', description: `ZIP archive${office}` };
}

function elfKind(b: Buffer): Kind {
  const bits = b[4] === 2 ? '64-bit' : '32-bit';
  const type = b.length >= 18 ? (b[5] === 2 ? b.readUInt16BE(16) : b.readUInt16LE(16)) : 0;
  const what = { 1: 'relocatable object', 2: 'executable', 3: 'shared object or executable (PIE)', 4: 'core dump' }[type] ?? 'file';
  return { mime: type === 3 ? 'application/x-sharedlib' : 'application/x-executable', description: `ELF ${bits} ${what}` };
}

function ftypKind(b: Buffer): Kind {
  const brand = b.toString('latin1', 8, 12);
  if (brand === 'qt  ') return { mime: 'video/quicktime', description: 'QuickTime movie' };
  if (brand.startsWith('M4A') || brand.startsWith('M4B')) return { mime: 'audio/mp4', description: 'MPEG-4 audio' };
  if (['heic', 'heix', 'mif1', 'msf1'].includes(brand)) return { mime: 'image/heic', description: 'HEIF/HEIC image' };
  if (brand === 'avif') return { mime: 'image/avif', description: 'AVIF image' };
  if (brand.startsWith('3g')) return { mime: 'video/3gpp', description: '3GPP video' };
  return { mime: 'video/mp4', description: `MPEG-4 media (brand ${brand.trim()})` };
}

function scriptKind(b: Buffer): Kind {
  const first = b.toString('utf8', 0, Math.min(b.length, 200)).split('\n')[0]!.trim();
  const words = first.slice(2).trim().split(/\s+/);
  let interp = path.basename(words[0] ?? '');
  if (interp === 'env') interp = words.slice(1).find((w) => !w.startsWith('-')) ?? interp;
  const lang: Array<[RegExp, string, string]> = [
    [/^(ba|da|z|k)?sh$/, 'application/x-sh', 'Shell script'],
    [/^python/, 'text/x-python', 'Python script'],
    [/^(node|deno|bun)$/, 'text/javascript', 'JavaScript script'],
    [/^perl/, 'text/x-perl', 'Perl script'],
    [/^ruby/, 'text/x-ruby', 'Ruby script'],
    [/^php/, 'application/x-httpd-php', 'PHP script'],
  ];
  const hit = lang.find(([re]) => re.test(interp));
  return { mime: hit?.[1] ?? 'text/x-script', description: `${hit?.[2] ?? 'Script'} (${first.slice(0, 80)})` };
}

interface TextInfo {
  encoding: string;
  text: string;
}

/** Decodes the sample as text if it is text: UTF-16 by BOM, else valid UTF-8 without NUL bytes. */
function asText(b: Buffer, complete: boolean): TextInfo | undefined {
  if (bytesAt(b, 0, 0xff, 0xfe) || bytesAt(b, 0, 0xfe, 0xff)) {
    const le = b[0] === 0xff;
    const even = b.subarray(2, 2 + ((b.length - 2) & ~1));
    const text = le ? even.toString('utf16le') : Buffer.from(even).swap16().toString('utf16le');
    return { encoding: le ? 'utf-16le' : 'utf-16be', text };
  }
  if (b.includes(0)) return undefined;
  const bom = bytesAt(b, 0, 0xef, 0xbb, 0xbf);
  try {
    // stream: true accepts a character cut at the end of a partial sample.
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(b, { stream: !complete });
    const plain = !bom && b.every((x) => x < 0x80);
    return { encoding: bom ? 'utf-8 (with BOM)' : plain ? 'ascii' : 'utf-8', text };
  } catch {
    return undefined;
  }
}

/** Recognises text formats that the extension does not name. */
function textKind(text: string): Kind | undefined {
  const start = text.replace(/^\uFEFF/, '').trimStart().slice(0, 200).toLowerCase();
  if (start.startsWith('<?xml')) return start.includes('<svg') ? { mime: 'image/svg+xml', description: 'SVG image' } : { mime: 'application/xml', description: 'XML document' };
  if (start.startsWith('<svg')) return { mime: 'image/svg+xml', description: 'SVG image' };
  if (start.startsWith('<!doctype html') || start.startsWith('<html')) return { mime: 'text/html', description: 'HTML document' };
  return undefined;
}

export const shedFileType = defineFunction({
  name: 'shed_file_type',
  category: 'data',
  summary: 'Identify a file: real type (magic bytes), MIME, encoding, line endings.',
  description: 'Identify a file from its content (PNG, PDF, ZIP, SQLite...): mime type, text encoding, line endings.',
  params: {
    zone: zoneParam(ZONE_NAMES),
    path: z.string().default('.').describe('File or folder'),
    group: groupParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: ZONE_NAMES, writes: false },
  example: { zone: 'storage', path: 'report.pdf' },
  async handler(args, ctx) {
    const target = locate(ctx.zone(args.zone, args.group), args.path, 'path', 'read', args.allow_zone_in_path);
    const stat = target.stat;
    if (stat === undefined) throw notFound(target);
    const common = { path: target.rel || '.', zone: target.zone.label };
    if (stat.isDirectory()) {
      const entries = fs.readdirSync(target.abs).length;
      return {
        data: { ...common, type: 'directory', mime: 'inode/directory', mime_type: 'inode/directory', description: 'Folder', entries },
        message: `${target.shown} is a folder with ${entries} entr${entries === 1 ? 'y' : 'ies'}.`,
      };
    }
    const extension = path.extname(target.rel).slice(1).toLowerCase();
    const byExt = mimeOfExtension(extension);
    const head = readRange(target.abs, 0, Math.min(stat.size, HEAD));
    const data: Record<string, unknown> = { ...common, type: 'file', extension, size: stat.size, size_human: formatSize(stat.size) };

    let kind: Kind | undefined;
    if (stat.size === 0) kind = { mime: byExt ?? 'application/x-empty', description: 'Empty file' };
    const magic = kind ? undefined : MAGIC.find(([test]) => test(head));
    if (magic) kind = magic[1](head);
    const text = stat.size > 0 && (!kind || kind.mime.startsWith('text/') || kind.mime === 'application/x-sh' || kind.mime === 'application/x-httpd-php') ? asText(head, stat.size <= HEAD) : undefined;
    if (text) {
      const style = eolStyle(countEols(Array.from(text.text, (ch) => ch.charCodeAt(0))));
      data.encoding = text.encoding;
      data.eol = style;
      kind ??= textKind(text.text) ?? { mime: byExt ?? 'text/plain', description: `Text file (${text.encoding})` };
      if (!kind.description.startsWith('Text')) kind = { ...kind, description: `${kind.description}, ${text.encoding} text` };
      if (style !== 'none') kind = { ...kind, description: `${kind.description}, ${style === 'mixed' ? 'mixed' : style === 'dos' ? 'CRLF' : style === 'mac' ? 'CR' : 'LF'} line endings` };
    }
    kind ??= { mime: byExt ?? 'application/octet-stream', description: byExt ? `Binary file (${extension})` : 'Binary data (unknown format)' };
    data.mime = kind.mime;
    data.mime_type = kind.mime;
    data.description = kind.description;
    const mismatch = byExt !== undefined && magic !== undefined && byExt !== kind.mime && !sameFamily(byExt, kind.mime);
    if (mismatch) data.note = `The extension .${extension} suggests ${byExt}, but the content is ${kind.mime}.`;
    const sampled = text && stat.size > HEAD ? ` (encoding and line endings judged on the first ${HEAD / 1024} KiB)` : '';
    return { data, message: `${target.shown}: ${kind.description} [${kind.mime}], ${formatSize(stat.size)}.${mismatch ? ` ${data.note as string}` : ''}${sampled}` };
  },
});

/** Content types that legitimately differ from the extension's (a .docx is a ZIP, a .db an SQLite file...). */
function sameFamily(byExt: string, found: string): boolean {
  if (found === 'application/zip') return /zip|openxml|opendocument|java-archive|android|epub/.test(byExt);
  if (found === 'application/x-ole-storage') return /msword|ms-excel|ms-powerpoint/.test(byExt);
  return byExt.split('/')[0] === found.split('/')[0] && (found.startsWith('text/') || found.startsWith('application/x-'));
}
