// Builds dist/fileshed.mjs (the one self-contained plugin module), dist/cli.mjs (the command line,
// which imports the plugin module beside it), dist/tools.json and valves.schema.json, and fills the
// generated tables of README.md and docs/*.md.
// Deterministic: same sources, same bytes (no timestamps, no absolute paths, stable key order).
import { build } from 'esbuild';
import fs from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(root, 'dist');
fs.mkdirSync(dist, { recursive: true });

// Some bundled libraries (emscripten glue) call require() and use __dirname: give them both.
const { banner } = createRequire(import.meta.url)('./build/bundle-banner.cjs');
const { sqliteChildSource, nodeShims } = createRequire(import.meta.url)('./build/bundle-options.cjs');

// Libraries that import "stream" or "fs" get the explicit "node:" form: the bundle imports nothing else.
const nodePrefix = {
  name: 'node-prefix',
  setup(b) {
    const bare = new RegExp(`^(${builtinModules.filter((m) => !m.startsWith('_')).map((m) => m.replace(/[/]/g, '\\/')).join('|')})$`);
    b.onResolve({ filter: bare }, (args) => ({ path: `node:${args.path}`, external: true }));
  },
};

// zod's `z.locales` namespace drags ~47 translations (~260 KB) into the bundle; error messages are
// always English here (and translated into teaching errors by src/registry/args.ts), so only `en` stays.
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => (args.importer.includes(`${path.sep}zod${path.sep}`) ? { path: 'zod-locales', namespace: 'zod-locales' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'zod-locales' }, () => ({ contents: "export { default as en } from 'zod/v4/locales/en.js';", resolveDir: root, loader: 'js' }));
  },
};

// sql.js's WASM (~650 KB) is inlined deflated (~2.5x smaller) and inflated on first use: a third of
// the bundle's text is gone, and with it parse time at every cold import. Deflated at build by fflate
// (pure JavaScript, level 9: the same bytes on every machine, where native zlib's output may vary
// with the CPU), as raw DEFLATE; inflated at run time by Node's own zlib (inflateRawSync: raw, no
// zlib header), so no JavaScript inflater ships for it.
const deflatedWasm = {
  name: 'deflated-wasm',
  setup(b) {
    b.onLoad({ filter: /\.wasm$/ }, async (args) => {
      const { deflateSync } = await import('fflate');
      const packed = Buffer.from(deflateSync(fs.readFileSync(args.path), { level: 9 })).toString('base64');
      return { contents: `module.exports = require('node:zlib').inflateRawSync(Buffer.from(${JSON.stringify(packed)}, 'base64'));`, loader: 'js', resolveDir: root };
    });
  },
};

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  legalComments: 'none',
  logLevel: 'warning',
  absWorkingDir: root,
  loader: { '.wasm': 'binary', '.pl': 'text' },
};

// The plugin module is minified. keepNames keeps
// class and function names (error kinds in messages, Tools method names); the bundled libraries'
// license texts go to dist/fileshed.mjs.LEGAL.txt and a source map sits beside the module.
// The file-backed SQLite engine's child process code travels inside the plugin as a string (see
// src/core/services/db/node/children.ts): the plugin stays one file.
const esbuild = await import('esbuild');
const sqliteChild = sqliteChildSource(esbuild, { minify: true });
await build({
  ...common,
  entryPoints: ['src/index.ts'],
  outfile: 'dist/fileshed.mjs',
  banner: { js: banner },
  define: { FILESHED_SQLITE_CHILD: JSON.stringify(sqliteChild) },
  plugins: [nodePrefix, zodEnglishOnly, deflatedWasm, nodeShims],
  minify: true,
  keepNames: true,
  legalComments: 'linked',
  sourcemap: 'linked',
  sourcesContent: false,
});

// The hosts reuse the plugin module instead of bundling a second copy of it, and the CLI loads the
// server bundle (HTTP, MCP) only for `serve` and `mcp`.
const siblingBundles = {
  name: 'sibling-bundles',
  setup(b) {
    const bundles = { [path.join(root, 'src/index.js')]: './fileshed.mjs', [path.join(root, 'src/hosts/server.js')]: './server.mjs' };
    b.onResolve({ filter: /(index|server)\.js$/ }, (args) => {
      const target = bundles[path.resolve(args.resolveDir, args.path)];
      return target ? { path: target, external: true } : undefined;
    });
  },
};
await build({ ...common, entryPoints: ['src/hosts/cli/main.ts'], outfile: 'dist/cli.mjs', banner: { js: '#!/usr/bin/env node' }, plugins: [siblingBundles, nodePrefix] });
fs.chmodSync(path.join(dist, 'cli.mjs'), 0o755);
const serverBuild = await build({ ...common, entryPoints: ['src/hosts/server.ts'], outfile: 'dist/server.mjs', banner: { js: banner }, plugins: [siblingBundles, nodePrefix], metafile: true });
// Hosts are thin adapters: the server bundle must not carry its own copy of the core. The pure
// formats (src/core/formats: no state, no disk) are the exception: a second copy of a parser is harmless.
const strayCore = Object.keys(serverBuild.metafile.inputs).filter((f) => /^src\/(core|registry|functions|host)\//.test(f) && !f.startsWith('src/core/formats/'));
if (strayCore.length > 0) throw new Error(`dist/server.mjs bundles core sources (import them through src/index.ts): ${strayCore.join(', ')}`);

const mod = await import(`${pathToFileURL(path.join(dist, 'fileshed.mjs')).href}?build=${Date.now()}`);
fs.writeFileSync(path.join(dist, 'tools.json'), `${JSON.stringify(mod.toolSpecs, null, 2)}\n`);
fs.writeFileSync(path.join(root, 'valves.schema.json'), `${JSON.stringify(mod.valvesSchema, null, 2)}\n`);

// The reference tables of the README and docs/ come from the same registry, so they cannot drift.
// Each table is filled between its markers in every file that holds them; a table whose markers
// appear in no file fails the build, so none silently disappears from the documentation.
{
  const valves = mod.valvesSchema.properties;
  const cell = (v) => String(v).replace(/\|/g, '\\|');
  const tables = {
    functions: ['| function | category | what it does |', '|---|---|---|', ...mod.catalog.functions.map((f) => `| \`${f.name}\` | ${f.category} | ${cell(f.summary)} |`)],
    valves: ['| valve | default | meaning |', '|---|---|---|', ...Object.entries(valves).map(([k, v]) => `| \`${k}\` | \`${JSON.stringify(v.default)}\`${v.enum ? ` (${v.enum.join(' / ')})` : ''} | ${cell(v.description)} |`)],
    errors: ['| code | meaning |', '|---|---|', ...Object.entries(mod.catalog.errorCodes).map(([k, v]) => `| \`${k}\` | ${cell(v)} |`)],
  };
  const docsDir = path.join(root, 'docs');
  const docs = [
    path.join(root, 'README.md'),
    ...(fs.existsSync(docsDir) ? fs.readdirSync(docsDir).filter((f) => f.endsWith('.md')).sort().map((f) => path.join(docsDir, f)) : []),
  ].filter((f) => fs.existsSync(f));
  const filled = new Set();
  for (const file of docs) {
    const before = fs.readFileSync(file, 'utf8');
    let text = before;
    for (const [name, rows] of Object.entries(tables)) {
      const starts = text.split(`<!-- ${name}:start -->`).length - 1;
      const ends = text.split(`<!-- ${name}:end -->`).length - 1;
      if (starts !== ends) throw new Error(`${path.relative(root, file)}: ${starts} <!-- ${name}:start --> but ${ends} <!-- ${name}:end --> markers`);
      if (starts === 0) continue;
      const re = new RegExp(`(<!-- ${name}:start -->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`, 'g');
      text = text.replace(re, (_all, open, close) => `${open}${rows.join('\n')}\n${close}`);
      filled.add(name);
    }
    if (text !== before) fs.writeFileSync(file, text);
  }
  const nowhere = Object.keys(tables).filter((name) => !filled.has(name));
  if (nowhere.length > 0) throw new Error(`generated table(s) ${nowhere.join(', ')}: no README.md or docs/*.md holds their <!-- name:start --> / <!-- name:end --> markers`);
}

const size = fs.statSync(path.join(dist, 'fileshed.mjs')).size;
console.log(`dist/fileshed.mjs ${(size / 1024).toFixed(1)} KiB (SQLite child ${(sqliteChild.length / 1024).toFixed(1)} KiB), ${mod.toolSpecs.length} functions`);

// The Open WebUI tool file (a thin client of `fileshed serve`), generated from the same registry.
const { generateOpenWebUITool } = await import('./build/openwebui.mjs');
fs.writeFileSync(path.join(dist, 'fileshed_openwebui.py'), generateOpenWebUITool(mod, JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))));
