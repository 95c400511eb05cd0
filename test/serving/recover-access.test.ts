/**
 * Recovery at start also removes temp copies of the access database that a killed write left at the
 * storage base (found by the crash-under-load test), and nothing else there.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { mod } from '../helpers/shed.js';

let base = '';
afterEach(() => fs.rmSync(base, { recursive: true, force: true }));

it('removes .access_auth.sqlite.*.shedtmp leftovers and keeps the database and other files', async () => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-recover-'));
  await mod.admin.groups.add(base, 'team', 'Team', '');
  const db = fs.readFileSync(path.join(base, 'access_auth.sqlite'));
  fs.writeFileSync(path.join(base, '.access_auth.sqlite.1ddc9b7aaa81.shedtmp'), 'partial');
  fs.writeFileSync(path.join(base, 'notes.shedtmp'), 'not ours to judge here');
  const report = await mod.serving.recoverStorage(base);
  expect(report.temp_files).toContain('.access_auth.sqlite.1ddc9b7aaa81.shedtmp');
  expect(fs.existsSync(path.join(base, '.access_auth.sqlite.1ddc9b7aaa81.shedtmp'))).toBe(false);
  expect(fs.readFileSync(path.join(base, 'access_auth.sqlite'))).toEqual(db);
  expect(fs.existsSync(path.join(base, 'notes.shedtmp'))).toBe(true);
  expect((await mod.admin.groups.list(base)).map((g) => g.id)).toEqual(['team']);
});
