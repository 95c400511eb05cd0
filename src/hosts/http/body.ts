/**
 * Request bodies, read with a limit: a declared Content-Length over the limit is refused before
 * any byte is read, and a body that grows past it while streaming stops being read at once. The
 * caller answers 413 and closes the connection (the rest is never read).
 */
import type { IncomingMessage } from 'node:http';

export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`The request body is larger than the limit of ${limit} bytes.`);
  }
}

export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) throw new BodyTooLarge(limit);
  // Events rather than for-await: the async iterator costs a few promise turns per small body.
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        req.pause();
        reject(new BodyTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    req.once('error', reject);
    req.once('aborted', () => reject(new Error('the client aborted the request')));
  });
}

/** The body limit for a call: the largest file a call may carry plus 1 MiB of JSON or multipart framing. */
export function bodyLimit(valves: Record<string, unknown>): number {
  // Valves from flags and forms may be numeric strings ("1"): the same reading the valve schema accepts.
  const given = Number(valves.max_file_size_mb);
  const mb = Number.isInteger(given) && given > 0 ? given : 300;
  return (mb + 1) * 1024 * 1024;
}
