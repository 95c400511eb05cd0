/**
 * Another process's write never makes this one walk the user's whole space again: the change stamp
 * lists the folders that write changed, and only those are listed again (before, any stranger's
 * stamp dropped everything known and the next quota check walked every folder). The usage stays
 * exact: it equals a fresh measurement of the disk.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { Tools } from '../../src/index.js';

const base = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-journal-'));
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

const USER = { id: 'alice', name: 'Alice', role: 'user' };
const append = (tools: Tools, line: string) => tools.shed_patch_text!({ zone: 'documents', path: 'log.txt', content: line, position: 'end', __user__: USER });

/** Apparent sizes of everything below `dir` (files, links and folders; the root itself not counted), as the quota counts them. */
function diskBytes(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) total += fs.lstatSync(path.join(e.parentPath, e.name)).size;
  return total;
}

it("another process's append is caught up by listing a few folders, not by walking the space", async () => {
  const data = path.join(base, 'users', 'alice', 'Documents', 'data');
  for (let i = 0; i < 150; i++) {
    fs.mkdirSync(path.join(data, `d${i}`), { recursive: true });
    fs.writeFileSync(path.join(data, `d${i}`, 'f.txt'), `file ${i}\n`);
  }
  const tools = new Tools();
  tools.valves = { ...tools.valves, storage_base_path: base };
  expect(JSON.parse(await append(tools, 'here 1')).success).toBe(true);
  expect(JSON.parse(await append(tools, 'here 2')).success).toBe(true);

  // Another process (another instance) appends to the same user's file.
  const plugin = path.resolve('dist/fileshed.mjs');
  execFileSync(process.execPath, ['--input-type=module', '-e', `
    import { Tools } from ${JSON.stringify(plugin)};
    const t = new Tools(); t.valves = { ...t.valves, storage_base_path: ${JSON.stringify(base)} };
    const r = JSON.parse(await t.shed_patch_text({ zone: 'documents', path: 'log.txt', content: 'there', position: 'end', __user__: ${JSON.stringify(USER)} }));
    if (!r.success) { console.error(JSON.stringify(r)); process.exit(1); }
  `]);

  // This process's next write: count the folders it lists (the usage walk lists each folder once).
  const original = fs.readdirSync;
  let listed = 0;
  (fs as { readdirSync: unknown }).readdirSync = ((...args: Parameters<typeof fs.readdirSync>) => {
    listed++;
    return original(...args);
  }) as typeof fs.readdirSync;
  let result: string;
  try {
    result = await append(tools, 'here 3');
  } finally {
    (fs as { readdirSync: unknown }).readdirSync = original;
  }
  expect(JSON.parse(result).success).toBe(true);
  expect(fs.readFileSync(path.join(data, 'log.txt'), 'utf8')).toBe('here 1\nhere 2\nthere\nhere 3\n');
  console.log(`folders listed by the write after another process's append: ${listed} (the space has ${150 + 20}+ folders)`);
  expect(listed).toBeLessThan(40);

  // Still exact: the usage equals the disk.
  const stats = JSON.parse(await tools.shed_stats!({ __user__: USER })) as { data: Record<string, unknown> };
  const documents = JSON.stringify(stats.data);
  expect(documents).toContain(String(diskBytes(path.join(base, 'users', 'alice', 'Documents', 'data'))));
});
