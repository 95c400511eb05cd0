// Spec weight: what every chat turn sends to the model. Prints, per function, the bytes
// of its compact JSON spec (as in dist/tools.json) and estimated tokens (bytes / 4), then the total
// against the 24 KiB budget, and the same total for the `core` profile.
//   node bench/specs.mjs
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const mod = await import(pathToFileURL(path.join(root, 'dist', 'fileshed.mjs')).href);
const BUDGET = 24 * 1024;

const bytes = (specs) => JSON.stringify(specs).length;
const tokens = (n) => Math.round(n / 4);
const rows = mod.toolSpecs.map((s) => [s.function.name, bytes(s)]);
const width = Math.max(...rows.map(([n]) => n.length), 'function'.length);
console.log(`${'function'.padEnd(width)}  ${'bytes'.padStart(6)}  ${'~tokens'.padStart(7)}`);
for (const [name, n] of rows) console.log(`${name.padEnd(width)}  ${String(n).padStart(6)}  ${String(tokens(n)).padStart(7)}`);
const total = bytes(mod.toolSpecs);
console.log(`${'total (all)'.padEnd(width)}  ${String(total).padStart(6)}  ${String(tokens(total)).padStart(7)}  ${mod.toolSpecs.length} functions, budget ${BUDGET} bytes: ${total <= BUDGET ? 'PASS' : 'FAIL'}`);
if (typeof mod.specsFor === 'function') {
  const core = mod.specsFor({ functions: 'core' });
  const n = bytes(core);
  console.log(`${'total (core)'.padEnd(width)}  ${String(n).padStart(6)}  ${String(tokens(n)).padStart(7)}  ${core.length} functions: ${core.map((s) => s.function.name.replace(/^shed_/, '')).join(', ')}`);
}
if (total > BUDGET) process.exitCode = 1;
