/**
 * The members of a zip-based document (DOCX, XLSX, PPTX, ODT, ODS, ODP, EPUB), read by name with
 * every size bounded: the central directory is read through the archive service (entry count
 * checked before it is loaded), and a member is inflated with an output limit, the smallest of its
 * declared size, the per-member and per-document ceilings and a bomb's expansion ratio (zlib's
 * maxOutputLength stops the inflate itself there). Nothing is ever written to disk.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { type ZipDirectory, type ZipEntry } from '../../formats/zip/directory.js';
import { readDirectory } from '../archive/central.js';
import { shedError } from '../../base/errors.js';
import { DOC_LIMITS } from './limits.js';

export class DocumentZip {
  private readonly byName = new Map<string, ZipEntry>();
  private inflated = 0;
  private readonly fd: number;
  readonly names: string[];

  /** Reads the central directory (entry count checked before it is loaded) and opens the file. */
  static async open(abs: string, shown: string): Promise<DocumentZip> {
    const dir = await readDirectory(abs, shown, (declared) => {
      if (declared > DOC_LIMITS.zipEntries) throw damaged(shown, `it lists ${declared} entries; a document has at most ${DOC_LIMITS.zipEntries}`);
    });
    return new DocumentZip(abs, shown, dir);
  }

  private constructor(
    abs: string,
    private readonly shown: string,
    dir: ZipDirectory,
  ) {
    for (const e of dir.entries) if (e.kind === 'file') this.byName.set(e.name.replace(/^\/+/, ''), e);
    this.names = [...this.byName.keys()];
    this.fd = fs.openSync(abs, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  close(): void {
    fs.closeSync(this.fd);
  }

  /** A member as UTF-8 text (a missing member is undefined). */
  text(name: string): string | undefined {
    const bytes = this.bytes(name);
    return bytes === undefined ? undefined : new TextDecoder('utf-8').decode(bytes);
  }

  /** A member's bytes, bounded (see the module comment). */
  bytes(name: string): Uint8Array | undefined {
    const e = this.byName.get(name);
    if (e === undefined) return undefined;
    if (e.encrypted) throw shedError('INVALID_FORMAT', `${this.shown} is password-protected (its part '${name}' is encrypted); it cannot be read.`, { hint: 'Ask for an unprotected copy of the file.' });
    if (e.method !== 0 && e.method !== 8) throw damaged(this.shown, `its part '${name}' uses an unsupported compression method (${e.method})`);
    const limit = Math.min(DOC_LIMITS.memberBytes, DOC_LIMITS.totalBytes - this.inflated);
    if (e.size > limit) throw tooBig(this.shown, name, e.size);
    const head = Buffer.alloc(30);
    if (fs.readSync(this.fd, head, 0, 30, e.localOffset) < 30 || head.readUInt32LE(0) !== 0x04034b50) throw damaged(this.shown, `the data of '${name}' is missing`);
    const start = e.localOffset + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
    // The member's own claims bound nothing: the output may not pass its declared size, the
    // per-member and per-document ceilings, or a bomb's expansion ratio (beyond the first MiB).
    const cap = Math.min(e.size, limit, Math.max(1024 * 1024, e.compressedSize * DOC_LIMITS.memberRatio));
    if (e.compressedSize > DOC_LIMITS.memberBytes) throw tooBig(this.shown, name, e.compressedSize);
    const compressed = Buffer.allocUnsafe(e.compressedSize);
    if (e.compressedSize > 0 && fs.readSync(this.fd, compressed, 0, e.compressedSize, start) < e.compressedSize) throw damaged(this.shown, `the data of '${name}' is cut short`);
    let out: Buffer;
    if (e.method === 0) out = compressed;
    else {
      try {
        // Node's zlib (native, several times faster than a JavaScript inflate), stopped at the cap.
        out = zlib.inflateRawSync(compressed, { maxOutputLength: cap + 1 });
      } catch (err) {
        if (err instanceof RangeError || (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooBig(this.shown, name, cap + 1);
        throw damaged(this.shown, `the compressed data of '${name}' is damaged`);
      }
    }
    if (out.length > cap) throw tooBig(this.shown, name, out.length);
    const got = out.length;
    this.inflated += got;
    return out;
  }
}

export function damaged(shown: string, why: string): Error {
  return shedError('INVALID_FORMAT', `${shown} is damaged or not the document its name says (${why}).`, {
    details: { reason: why },
    hint: 'Check it with shed_file_type; ask the user for an intact copy if it should be a document.',
  });
}

function tooBig(shown: string, name: string, bytes: number): Error {
  return shedError('DOCUMENT_LIMIT', `${shown} was not read: its part '${name}' expands to more than ${Math.round(Math.min(bytes, DOC_LIMITS.memberBytes) / 1048576)} MiB (a compression bomb, or a document far larger than one call may convert).`, {
    details: { part: name, limit_mb: DOC_LIMITS.memberBytes / 1048576 },
    hint: 'Nothing was changed. If it is a real document, split it (fewer sheets or pages per file) and read the parts.',
  });
}
