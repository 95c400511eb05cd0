/**
 * The confinement of document converters (core/services/documents/confined.ts), attacked in each kernel
 * sandbox mode: a converter is given the file to convert and nothing else. A program standing in
 * for a converter compromised by a hostile file (cat, touch, ls: the same runner, the same staging)
 * tries to read a sibling file of the zone (a blocked secret included), a file of another user, and
 * the storage base; to write beside its input or into the zone; and to list its folder. It reads its
 * input, and only that.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConverter, type Converter } from '../../src/core/services/documents/confined.js';
import { sandboxStatus } from '../../src/core/services/exec/launcher/sandbox.js';
import { defaultValves } from '../../src/core/base/valves.js';

const SECRET = `CONVERTER-CANARY-${process.pid}`;
let base: string;
let zone: string;
let input: string;

beforeAll(() => {
  base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-conv-')));
  zone = path.join(base, 'users', 'alice', 'Storage', 'data');
  fs.mkdirSync(zone, { recursive: true });
  input = path.join(zone, 'report.txt');
  fs.writeFileSync(input, 'the input itself\n');
  fs.writeFileSync(path.join(zone, '.env'), `${SECRET} (blocked file beside the input)\n`);
  fs.mkdirSync(path.join(base, 'users', 'bob', 'Storage', 'data'), { recursive: true });
  fs.writeFileSync(path.join(base, 'users', 'bob', 'Storage', 'data', 'b.txt'), `${SECRET} (another user)\n`);
  fs.writeFileSync(path.join(base, 'access_auth.sqlite'), `${SECRET} (server state)\n`);
});
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

const stand = (program: string): Converter => ({ program, pkg: 'coreutils', reads: 'test files' });

for (const mode of ['bwrap', 'landlock'] as const) {
  describe(`${mode}`, async () => {
    const available = await sandboxStatus(mode).then(() => true, () => false);
    const valves = { ...defaultValves(), sandbox: mode };
    const run = (program: string, args: (i: string) => string[]) => runConverter(valves, stand(program), input, '.txt', { args, captureBytes: 1 << 20, timeoutSec: 20 });

    it.skipIf(!available)('reads its input and nothing else of the zone, other users or the server', async () => {
      const targets = [path.join(zone, '.env'), '../.env', path.join(base, 'users', 'bob', 'Storage', 'data', 'b.txt'), path.join(base, 'access_auth.sqlite')];
      const r = await run('cat', (i) => [i, ...targets]);
      const out = r.stdout.bytes.toString();
      expect(out).toBe('the input itself\n');
      expect(out + r.stderr.bytes.toString()).not.toContain(SECRET);
      expect(r.returncode).not.toBe(0);
    });

    it.skipIf(!available)('writes nowhere: not beside its input, not in the zone', async () => {
      const r = await run('touch', (i) => [`${i}.out`, path.join(zone, 'planted.txt')]);
      expect(r.returncode).not.toBe(0);
      expect(fs.existsSync(path.join(zone, 'planted.txt'))).toBe(false);
      expect(fs.readdirSync(zone).sort()).toEqual(['.env', 'report.txt']);
    });

    it.skipIf(!available)('its folder holds the input alone, and is gone afterwards', async () => {
      const r = await run('ls', () => ['-a', '.']);
      expect(r.stdout.bytes.toString().split('\n').filter((l) => l !== '' && l !== '.' && l !== '..')).toEqual(['input.txt']);
      expect(fs.readdirSync(os.tmpdir()).filter((n) => n.startsWith('shed-doc-') && fs.existsSync(path.join(os.tmpdir(), n, 'input.txt')))).toEqual([]);
    });
  });
}

it('a converter missing from /usr/bin and /bin is COMMAND_NOT_FOUND naming its package', async () => {
  await expect(runConverter(defaultValves(), { program: 'no-such-converter', pkg: 'some-package', reads: 'test files' }, input, '.txt', { args: () => [], captureBytes: 10, timeoutSec: 5 })).rejects.toMatchObject({ code: 'COMMAND_NOT_FOUND', details: { package: 'some-package' } });
});
