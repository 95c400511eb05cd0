/**
 * `npm test` runs every suite even when one fails: the script, run by sh as npm runs it, with the
 * three programs it calls replaced by stand-ins that exit as told and note that they ran.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const script = (JSON.parse(fs.readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts.test!;

function runWith(codes: { tsc: number; vitest: number; python3: number }): { status: number | null; ran: string[] } {
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-npm-test-'));
  const log = path.join(bin, 'ran.log');
  for (const [name, code] of Object.entries(codes)) {
    fs.writeFileSync(path.join(bin, name), `#!/bin/sh\necho ${name} >> "${log}"\nexit ${code}\n`, { mode: 0o755 });
  }
  const r = spawnSync('sh', ['-c', script], { env: { PATH: `${bin}:/usr/bin:/bin` }, encoding: 'utf8' });
  const ran = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : [];
  fs.rmSync(bin, { recursive: true, force: true });
  return { status: r.status, ran };
}

describe('npm test', () => {
  it('runs the Python tests even when vitest fails, and fails when either failed', () => {
    expect(runWith({ tsc: 0, vitest: 1, python3: 0 })).toEqual({ status: 1, ran: ['tsc', 'vitest', 'python3'] });
    expect(runWith({ tsc: 0, vitest: 0, python3: 1 })).toEqual({ status: 1, ran: ['tsc', 'vitest', 'python3'] });
    expect(runWith({ tsc: 0, vitest: 0, python3: 0 })).toEqual({ status: 0, ran: ['tsc', 'vitest', 'python3'] });
  });

  it('stops at a type error (nothing else can be trusted then)', () => {
    expect(runWith({ tsc: 2, vitest: 0, python3: 0 })).toEqual({ status: 2, ran: ['tsc'] });
  });
});
