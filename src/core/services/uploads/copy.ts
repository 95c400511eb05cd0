/**
 * Writing one imported file: streamed from the opened source into a temp file beside the
 * destination (created exclusively, never through a link), synced, then renamed into place.
 * The copy stops at `maxBytes` even if the source grows while it is read.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fsyncOffLoop, syncDirOffLoop, TEMP_SUFFIX, writeAllOffLoop } from '../../base/fs/atomic.js';
import { Refusal } from './sources.js';
import { assertFence } from '../../base/locks/lease.js';

const CHUNK = 1024 * 1024;

/** The copy's reads, writes and flushes run on the thread pool: an upload of hundreds of MB holds no one's event loop. */
export async function copyFromFd(fd: number, dest: string, maxBytes: number): Promise<number> {
  const dir = path.dirname(dest);
  fs.mkdirSync(dir, { recursive: true });
  const tmp = path.join(dir, `.${path.basename(dest).slice(0, 180)}.${crypto.randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
  const out = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o644);
  let total = 0;
  try {
    const buf = Buffer.alloc(CHUNK);
    for (;;) {
      const n = await new Promise<number>((resolve, reject) => fs.read(fd, buf, 0, CHUNK, total, (err, got) => (err ? reject(err) : resolve(got))));
      if (n === 0) break;
      total += n;
      if (total > maxBytes) throw new Refusal('FILE_TOO_LARGE', 'it grew beyond the size limit while being copied');
      await writeAllOffLoop(out, buf.subarray(0, n));
    }
    await fsyncOffLoop(out);
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
  await syncDirOffLoop(dir);
  return total;
}
