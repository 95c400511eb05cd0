// One measurement in a fresh process, on the bench user's zone under the storage base argv[3].
//   stats-cold        time of the first shed_stats of this process
//   stats-warm N      median of N shed_stats after the first one
//   write N           median of N shed_create_file of a small new file, after one warm-up write
// Prints one JSON line {ms, ...}; only the call itself is timed (performance.now() around it).
import { performance } from 'node:perf_hooks';
import { Tools } from '../dist/fileshed.mjs';
import { median } from './lib.mjs';

const [mode, countText, base] = process.argv.slice(2);
const count = Number(countText);
const tools = new Tools();
tools.valves = { ...tools.valves, storage_base_path: base, quota_per_user_mb: 100_000 };
const who = { __user__: { id: 'bench', name: 'Bench' }, __metadata__: { chat_id: 'bench' } };

async function timed(fn, args) {
  const t0 = performance.now();
  const json = await tools[fn]({ ...args, ...who });
  const ms = performance.now() - t0;
  const out = JSON.parse(json);
  if (!out.success) throw new Error(`${fn} failed: ${JSON.stringify(out.error)}`);
  return { ms, out };
}

if (mode === 'stats-cold') {
  const { ms, out } = await timed('shed_stats', {});
  console.log(JSON.stringify({ ms, files: out.data.total.files, bytes: out.data.total.size_bytes }));
} else if (mode === 'stats-warm') {
  await timed('shed_stats', {});
  const times = [];
  for (let i = 0; i < count; i++) times.push((await timed('shed_stats', {})).ms);
  console.log(JSON.stringify({ ms: median(times) }));
} else if (mode === 'write') {
  const write = (i) => timed('shed_create_file', { zone: 'storage', path: `bench-writes/w${i}.txt`, content: `small write ${i}\n` });
  await write('warmup');
  const times = [];
  for (let i = 0; i < count; i++) times.push((await write(i)).ms);
  console.log(JSON.stringify({ ms: median(times) }));
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
