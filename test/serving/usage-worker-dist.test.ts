/**
 * The first usage walk of a big tree (20,000 files and more) measures part of it in a worker thread,
 * which runs the source text of the measuring function. In the minified plugin every name of the
 * module is renamed, so that text may use no name but its own parameters: a walk that did crashed the
 * process ("ReferenceError: Rs is not defined", an uncaught 'error' event of the worker). Checked on
 * the built plugin, in a process of its own: the answer equals the source's.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { Tools } from '../../src/index.js';

const USER = { id: 'alice', name: 'Alice' };
const base = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-usage-worker-'));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

it('shed_stats of 24,000 files through dist/fileshed.mjs: measured with the worker, the same answer as the source', async () => {
  const data = path.join(base, 'users', 'alice', 'Storage', 'data');
  for (let d = 0; d < 48; d++) {
    const dir = path.join(data, `d${d}`);
    fs.mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 500; f++) fs.writeFileSync(path.join(dir, `f${f}.txt`), `file ${d}/${f}\n`);
  }
  const plugin = path.resolve('dist/fileshed.mjs');
  // A script file, as `fileshed serve` runs, and code given with --input-type=module (its flags reach a worker).
  const script = path.join(base, 'stats.mjs');
  fs.writeFileSync(script, `
    import { Tools } from ${JSON.stringify(plugin)};
    const t = new Tools(); t.valves = { ...t.valves, storage_base_path: ${JSON.stringify(base)} };
    process.stdout.write(await t.shed_stats({ __user__: ${JSON.stringify(USER)} }));
  `);
  const answers = [[script], ['--input-type=module', '-e', fs.readFileSync(script, 'utf8')]].map((args) => {
    const r = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 60_000 });
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' }); // the worker did not fail
    return JSON.parse(r.stdout) as { success: boolean; data: { total: { files: number; size_bytes: number } } };
  });
  const built = answers[0]!;
  expect(answers[1]).toEqual(built);
  expect(built.success).toBe(true);
  expect(built.data.total.files).toBe(24_000);
  const tools = new Tools();
  tools.valves = { ...tools.valves, storage_base_path: base };
  const source = JSON.parse(await tools.shed_stats!({ __user__: USER })) as typeof built;
  expect(built.data.total).toEqual(source.data.total);
}, 120_000);
