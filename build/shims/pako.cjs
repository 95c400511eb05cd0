'use strict';
// What isomorphic-git uses of pako (inflate, deflate, and the streaming Inflate it reads packfiles
// with), on Node's own zlib: build.mjs puts this in pako's place in the bundle, so one
// decompression engine ships instead of two (test/unit/bundle-shims.test.ts holds it to pako's
// answers). Zlib framing, as pako's defaults. Like pako, errors are thrown as strings, which
// isomorphic-git turns into its DecompressionError.
const zlib = require('node:zlib');

const asBuffer = (data) => (Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));

function inflate(data) {
  try {
    return zlib.inflateSync(asBuffer(data));
  } catch (err) {
    throw err instanceof Error ? err.message : String(err);
  }
}

function deflate(data) {
  return zlib.deflateSync(asBuffer(data));
}

/**
 * pako.Inflate as isomorphic-git drives it: push() chunks until `result` is set (the stream ended),
 * then `strm.avail_in` says how many bytes of the last chunk lie past the stream's end; `err` and
 * `msg` report damaged data. Input short of the end is kept until the next push.
 */
class Inflate {
  constructor() {
    this.chunks = [];
    this.result = undefined;
    this.err = 0;
    this.msg = '';
    this.strm = { avail_in: 0 };
  }

  push(chunk, _final) {
    if (this.result !== undefined || this.err !== 0) return false;
    this.chunks.push(asBuffer(chunk));
    const input = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    let out;
    try {
      out = zlib.inflateSync(input, { info: true });
    } catch (err) {
      if (err && err.code === 'Z_BUF_ERROR') return true; // the stream goes on in the next chunk
      this.err = typeof err?.errno === 'number' ? err.errno : -3;
      this.msg = err instanceof Error ? err.message : String(err);
      return false;
    }
    this.chunks = [];
    this.result = out.buffer;
    this.strm.avail_in = input.length - out.engine.bytesWritten;
    return true;
  }
}

module.exports = { inflate, deflate, Inflate };
