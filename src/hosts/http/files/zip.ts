/**
 * "Download all": the folder as a zip, streamed with fflate as it is read. Files are stored (not
 * compressed: the bottleneck is the network, and most large files are already compressed), one
 * chunk at a time, waiting for the client to drain, so memory stays flat whatever the folder holds.
 * Only regular files are included: links are never followed, so nothing outside the folder can
 * be packed; blocked files are left out.
 */
import fs from 'node:fs';
import type http from 'node:http';
import { Zip, ZipPassThrough } from 'fflate';
import { linkServing, type Target } from '../../../index.js';
import { commonHeaders, contentDisposition } from './headers.js';
import { settled } from './send-file.js';

const CHUNK = 256 * 1024;

export async function sendZip(req: http.IncomingMessage, res: http.ServerResponse, target: Target): Promise<void> {
  commonHeaders(res);
  res.statusCode = 200;
  res.setHeader('Content-Type', 'application/zip');
  res.setHeader('Content-Disposition', contentDisposition('attachment', `${target.name}.zip`));
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  let failed: Error | undefined;
  const zip = new Zip((err, chunk, final) => {
    if (err) {
      failed = err;
      return;
    }
    res.write(chunk);
    if (final) res.end();
  });
  const drain = async () => {
    if (res.writableNeedDrain) await settled(res, 'drain');
  };
  try {
    for await (const { rel, fd } of linkServing.filesBelow(target)) {
      if (res.destroyed || failed) {
        fs.closeSync(fd);
        break;
      }
      const st = fs.fstatSync(fd);
      const file = new ZipPassThrough(rel);
      file.mtime = st.mtime;
      zip.add(file);
      const buf = Buffer.allocUnsafe(CHUNK);
      try {
        let pos = 0;
        for (;;) {
          const n = fs.readSync(fd, buf, 0, CHUNK, pos);
          pos += n;
          if (n === 0) break;
          // fflate keeps the chunk until it is written: hand it a copy of the reused buffer.
          file.push(Uint8Array.prototype.slice.call(buf, 0, n));
          await drain();
          if (res.destroyed) break;
        }
      } finally {
        fs.closeSync(fd);
      }
      file.push(new Uint8Array(0), true);
    }
    if (!res.destroyed && !failed) zip.end();
    if (failed) res.destroy(failed);
  } catch (err) {
    res.destroy(err as Error);
  }
}
