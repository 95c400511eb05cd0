/**
 * Kernel ids: a uid per user (personal gid the same number), a gid per group, one number space,
 * allocated once under the access database's lock: concurrent allocations in this process and in
 * other processes sharing the base never give one number twice, and a fresh process reads the same.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forgetKernelIds, groupGid, kernelId, listKernelIds, userIds } from '../../src/core/services/ids/allocate.js';
import { idRange, rangeMapped } from '../../src/core/services/ids/range.js';

const range = { first: 3_000_000, last: 3_000_999 };
let base: string;
let worker: string;
const cleanup: string[] = [];

beforeAll(async () => {
  const cache = path.resolve('node_modules/.cache/fileshed-test');
  fs.mkdirSync(cache, { recursive: true });
  worker = path.join(cache, `ids-worker-${process.pid}.mjs`);
  cleanup.push(worker);
  await build({
    stdin: {
      contents: `import { kernelId } from ${JSON.stringify(path.resolve('src/core/services/ids/allocate.ts'))};
        const [, , base, tag, n] = process.argv;
        const out = [];
        for (let i = 0; i < Number(n); i++) out.push([tag + i, await kernelId(base, { first: 3000000, last: 3000999 }, 'user', tag + i)]);
        out.push(['shared', await kernelId(base, { first: 3000000, last: 3000999 }, 'group', 'shared')]);
        process.stdout.write(JSON.stringify(out));`,
      resolveDir: process.cwd(),
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    external: ['sql.js'],
    outfile: worker,
    logLevel: 'silent',
  });
});

beforeAll(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-ids-'));
  cleanup.push(base);
});

afterAll(() => {
  for (const p of cleanup) fs.rmSync(p, { recursive: true, force: true });
});

function runWorker(tag: string, n: number): Promise<[string, number][]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [worker, base, tag, String(n)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as [string, number][]) : reject(new Error(`worker ${tag} exited ${code}: ${err}`))));
  });
}

describe('kernel ids', () => {
  it('a user gets a uid and the same personal gid; a group its own gid; both stay', async () => {
    const alice = await userIds(base, range, 'alice');
    expect(alice.uid).toBeGreaterThanOrEqual(range.first);
    expect(alice.gid).toBe(alice.uid);
    const team = await groupGid(base, range, 'team');
    expect(team).not.toBe(alice.uid);
    forgetKernelIds();
    expect(await userIds(base, range, 'alice')).toEqual(alice);
    expect(await groupGid(base, range, 'team')).toBe(team);
    // A user and a group of the same name are two identities.
    expect(await groupGid(base, range, 'alice')).not.toBe(alice.uid);
  });

  it('concurrent allocations here and in two other processes: every name one number, no number twice', async () => {
    forgetKernelIds();
    const local = Promise.all(Array.from({ length: 20 }, (_, i) => kernelId(base, range, 'user', `l${i}`)));
    const [a, b, mine] = await Promise.all([runWorker('p', 15), runWorker('p', 15), local]);
    // Both processes asked for the same names: they got the same numbers.
    expect(a).toEqual(b);
    forgetKernelIds();
    const all = await listKernelIds(base);
    const ids = all.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [name, id] of a) expect(all.find((r) => r.name === name && r.kind === (name === 'shared' ? 'group' : 'user'))?.id).toBe(id);
    for (let i = 0; i < 20; i++) expect(all.find((r) => r.name === `l${i}`)?.id).toBe(mine[i]);
    expect(ids.every((id) => id >= range.first && id <= range.last)).toBe(true);
  }, 120_000);

  it('skips numbers host accounts use, and says which valve to raise when the range is used up', async () => {
    const small = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-ids-small-'));
    cleanup.push(small);
    // uid 0 (root) is in /etc/passwd: a range starting there skips it, and every number used after it.
    const used = new Set(['/etc/passwd', '/etc/group'].flatMap((f) => fs.readFileSync(f, 'utf8').split('\n').map((l) => Number(l.split(':')[2]))));
    expect(used.has(0)).toBe(true);
    let free = 0;
    while (used.has(free)) free++;
    const r = { first: 0, last: free };
    expect(await kernelId(small, r, 'user', 'u1')).toBe(free);
    await expect(kernelId(small, r, 'user', 'u2')).rejects.toThrow(/identity_id_count/);
  });

  it('the valves give a range; one past the kernel ids is refused', () => {
    expect(idRange({ identity_id_first: 2_000_000, identity_id_count: 1_000_000 })).toEqual({ first: 2_000_000, last: 2_999_999 });
    expect(() => idRange({ identity_id_first: 4_290_000_000, identity_id_count: 10_000_000 })).toThrow(/identity_id_first/);
  });

  it('whether the user namespace maps the range', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-ids-map-'));
    cleanup.push(dir);
    const maps = (uid: string, gid = uid) => {
      fs.writeFileSync(path.join(dir, 'u'), uid);
      fs.writeFileSync(path.join(dir, 'g'), gid);
      return { uid: path.join(dir, 'u'), gid: path.join(dir, 'g') };
    };
    const r = { first: 2_000_000, last: 2_999_999 };
    expect(rangeMapped(r, maps('         0          0 4294967295\n'))).toBe(true);
    // A user-namespaced container: 65,536 ids.
    expect(rangeMapped(r, maps('         0     100000      65536\n'))).toBe(false);
    expect(rangeMapped({ first: 20_000, last: 29_999 }, maps('         0     100000      65536\n'))).toBe(true);
    // Two adjacent lines cover it together; a gid map that does not is enough to refuse.
    expect(rangeMapped(r, maps('0 0 2500000\n2500000 9000000 1000000\n'))).toBe(true);
    expect(rangeMapped(r, maps('0 0 4294967295\n', '0 0 65536\n'))).toBe(false);
    expect(rangeMapped(r, { uid: path.join(dir, 'none'), gid: path.join(dir, 'none') })).toBeUndefined();
    // This process (the server's namespace here).
    expect(typeof rangeMapped(r)).toBe('boolean');
  });
});
