/**
 * Writing one imported file: streamed from the opened source into a temp file beside the
 * destination (created exclusively, never through a link), synced, then renamed into place.
 * The copy stops at `maxBytes` even if the source grows while it is read.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { TEMP_SUFFIX, syncDir } from '../../base/fs/atomic.js';
import { Refusal } from './sources.js';
import { assertFence } from '../../base/locks/lease.js';

const CHUNK = 1024 * 1024;

export function copyFromFd(fd: number, dest: string, maxBytes: number): number {
  const dir = path.dirname(dest);
  fs.mkdirSync(dir, { recursive: true });
  const tmp = path.join(dir, `.${path.basename(dest).slice(0, 180)}.${crypto.randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
  const out = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o644);
  let total = 0;
  try {
    const buf = Buffer.alloc(CHUNK);
    for (;;) {
      const n = fs.readSync(fd, buf, 0, CHUNK, total);
      if (n === 0) break;
      total += n;
      if (total > maxBytes) throw new Refusal('FILE_TOO_LARGE', 'it grew beyond the size limit while being copied');
      let off = 0;
      while (off < n) off += fs.writeSync(out, buf, off, n - off);
    }
    fs.fsyncSync(out);
    fs.closeSync(out);
    assertFence();
    fs.renameSync(tmp, dest);
  } catch (err) {
    try {
      fs.closeSync(out);
    } catch {
      // already closed
    }
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  syncDir(dir);
  return total;
}
