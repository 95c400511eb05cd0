/**
 * Reads a ZIP archive's central directory from disk (the format: formats/zip/directory.ts). The whole
 * archive is never loaded: only its tail and the directory are read, within time slices.
 */
import fs from 'node:fs';
import { shedError } from '../../base/errors.js';
import { readAt } from '../../base/fs/atomic.js';
import { TimeSlice } from '../../base/fs/slice.js';
import { parseDirectory, ZipFormatError, type ZipDirectory } from '../../formats/zip/directory.js';

export function badZip(shown: string, why: string): Error {
  return shedError('INVALID_FORMAT', `${shown} is not a valid ZIP archive (${why}).`, {
    details: { reason: why },
    hint: 'Check the file with shed_file_type; it may be damaged, incomplete, or another kind of archive (tar, 7z, rar).',
  });
}

/** Lists the entries of the archive at `abs` (named `shown` in errors); see parseDirectory for `onCount`. */
export async function readDirectory(abs: string, shown: string, onCount?: (declared: number) => void): Promise<ZipDirectory> {
  const slice = new TimeSlice();
  const fd = fs.openSync(abs, 'r');
  try {
    const source = { size: fs.fstatSync(fd).size, read: (offset: number, length: number) => readAt(fd, offset, length) };
    return await parseDirectory(source, onCount, () => slice.tick());
  } catch (e) {
    if (!(e instanceof ZipFormatError)) throw e;
    if (!e.multiPart) throw badZip(shown, e.why);
    throw shedError('INVALID_FORMAT', `${shown} is one part of a multi-part (split) ZIP archive, which is not supported.`, {
      hint: 'Join the parts into one archive first (zip -s 0 in.zip --out whole.zip).',
    });
  } finally {
    fs.closeSync(fd);
  }
}
