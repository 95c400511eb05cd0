'use strict';
// sha.js's SHA-1 class as isomorphic-git uses it (new Hash().update(data).digest(enc)), on
// node:crypto: build.mjs puts this in place of 'sha.js/sha1.js' in the bundle, which drops the
// browser polyfill chain behind it (safe-buffer, to-buffer, typed-array helpers, get-intrinsic...).
const { createHash } = require('node:crypto');

class Sha1 {
  constructor() {
    this.hash = createHash('sha1');
  }

  update(data, encoding) {
    this.hash.update(typeof data === 'string' ? Buffer.from(data, encoding) : data);
    return this;
  }

  digest(encoding) {
    return encoding === undefined ? this.hash.digest() : this.hash.digest(encoding);
  }
}

module.exports = Sha1;
