// esbuild settings shared by build.mjs and the bundles the sources build for themselves when they
// run under vitest (src/core/base/work/pool.ts: the worker thread's entry, the SQLite child's code).
// CommonJS so that both ESM build scripts and the TypeScript sources (via createRequire) load it.
const path = require('node:path');
const { banner } = require('./bundle-banner.cjs');

const root = path.resolve(__dirname, '..');

/** Settings of every ES bundle of Fileshed. */
const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  absWorkingDir: root,
  loader: { '.wasm': 'binary', '.pl': 'text' },
};

/**
 * One decompression engine and no browser polyfills: isomorphic-git's pako (a second zlib, in
 * JavaScript) and sha.js (SHA-1 plus its Buffer/typed-array polyfill chain) are replaced by small
 * shims on node:zlib and node:crypto with the API isomorphic-git uses (build/shims/, held to the
 * originals' answers by test/unit/bundle-shims.test.ts).
 */
const nodeShims = {
  name: 'node-shims',
  setup(b) {
    const shims = { pako: 'shims/pako.cjs', 'sha.js/sha1.js': 'shims/sha1.cjs' };
    b.onResolve({ filter: /^(pako|sha\.js\/sha1\.js)$/ }, (args) => ({ path: path.join(__dirname, shims[args.path]) }));
  },
};

/** Entry of the file-backed SQLite engine's child process (see src/core/services/db/node/children.ts). */
const SQLITE_CHILD_ENTRY = path.join(root, 'src/core/services/db/node/child.ts');

/**
 * The child's code as one ES module text: the plugin carries it as a string (esbuild `define` of
 * FILESHED_SQLITE_CHILD) and feeds it to `node -` on stdin, so the plugin stays one file and a child
 * starts in a few tens of milliseconds (it parses ~100 KB, not the whole bundle).
 */
function sqliteChildSource(esbuild, { minify = false } = {}) {
  const out = esbuild.buildSync({ ...common, entryPoints: [SQLITE_CHILD_ENTRY], write: false, minify, keepNames: true, legalComments: 'none', logLevel: 'error' });
  return out.outputFiles[0].text;
}

/** Source mode: `entry` (a worker's entry) built with the plugin's settings, as one module's text. */
function buildTextFromSource(entry) {
  const out = require('esbuild').buildSync({ ...common, entryPoints: [entry], write: false, logLevel: 'error', banner: { js: banner } });
  return out.outputFiles[0].text;
}

/** The plugin module's esbuild options for a test's own bundle of src/index.ts (SQLite child included). */
function pluginBundleOptions(outfile) {
  const esbuild = require('esbuild');
  return {
    ...common,
    entryPoints: [path.join(root, 'src/index.ts')],
    outfile,
    logLevel: 'error',
    banner: { js: banner },
    define: { FILESHED_SQLITE_CHILD: JSON.stringify(sqliteChildSource(esbuild)) },
    plugins: [nodeShims],
  };
}

module.exports = { common, nodeShims, sqliteChildSource, buildTextFromSource, pluginBundleOptions };
