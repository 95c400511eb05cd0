// Cold start of the plugin module: import the bundle, construct Tools, one shed_tree on an empty
// storage base (argv[2], or a fresh temp folder that is removed afterwards).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Tools } from '../dist/fileshed.mjs';

const given = process.argv[2];
const base = given ?? fs.mkdtempSync(path.join(os.tmpdir(), 'fileshed-cold-'));
try {
  const tools = new Tools();
  tools.valves = { ...tools.valves, storage_base_path: base };
  const out = JSON.parse(await tools.shed_tree({ zone: 'storage', __user__: { id: 'bench', name: 'Bench' }, __metadata__: { chat_id: 'bench' } }));
  if (!out.success) {
    console.error(JSON.stringify(out.error));
    process.exitCode = 1;
  }
} finally {
  if (given === undefined) fs.rmSync(base, { recursive: true, force: true });
}
