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

/** A body that stopped arriving (slow client): the caller answers 408 and closes the connection. */
export class BodyTimeout extends Error {
  constructor(readonly idleMs: number) {
    super(`The request body stopped arriving for ${idleMs / 1000} s; send the whole body at once.`);
  }
}

/**
 * Reads the body; `idleMs` bounds the pause between two chunks (a slow-body client holds a
 * connection and a request slot; Node's requestTimeout bounds the whole request on top).
 */
export function readBody(req: IncomingMessage, limit: number, idleMs = 30_000): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(new BodyTooLarge(limit));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let timer = setTimeout(() => fail(new BodyTimeout(idleMs)), idleMs);
    const cleanup = () => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const fail = (err: Error) => {
      cleanup();
      req.pause();
      reject(err);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return fail(new BodyTooLarge(limit));
      chunks.push(chunk);
      clearTimeout(timer);
      timer = setTimeout(() => fail(new BodyTimeout(idleMs)), idleMs);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => fail(err);
    // The client went away before the end: nothing to answer, nothing to run.
    const onClose = () => {
      if (!req.complete) fail(new BodyTimeout(idleMs));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

/** The body limit for a call: the largest file a call may carry plus 1 MiB of JSON or multipart framing. */
export function bodyLimit(valves: Record<string, unknown>): number {
  // Valves from flags and forms may be numeric strings ("1"): the same reading the valve schema accepts.
  const given = Number(valves.max_file_size_mb);
  const mb = Number.isInteger(given) && given > 0 ? given : 300;
  return (mb + 1) * 1024 * 1024;
}

/**
 * After an early answer (413, 408) the rest of the body is read and dropped for a moment before the
 * connection closes: closing a socket with unread bytes makes the kernel send a reset, which can
 * wipe the answer from the client's buffer before the client reads it.
 */
export function discardThenClose(req: IncomingMessage): void {
  const timer = setTimeout(() => req.destroy(), 1000);
  timer.unref();
  req.once('end', () => clearTimeout(timer));
  req.resume();
}
