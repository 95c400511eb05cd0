// The banner every ES bundle of Fileshed starts with (dist/*.mjs, and the worker bundle built from
// source in tests): some bundled libraries (emscripten glue) call require() and use __dirname.
// CommonJS so that both build.mjs and src/core/base/work/pool.ts (source mode, via createRequire) load it.
module.exports.banner = [
  "import { createRequire as __shedCreateRequire } from 'node:module';",
  "import { fileURLToPath as __shedFileURLToPath } from 'node:url';",
  "import { dirname as __shedDirname } from 'node:path';",
  'const require = __shedCreateRequire(import.meta.url);',
  'const __filename = __shedFileURLToPath(import.meta.url);',
  'const __dirname = __shedDirname(__filename);',
].join(' ');
