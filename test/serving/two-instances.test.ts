/**
 * Two `fileshed serve` instances on one storage base, requests alternating
 * between them over HTTP: no lost update, one commit per acknowledged Documents write in one linear
 * history, and quotas exact (a write through one instance is counted by the other's quota check).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, tempBase, type Served } from '../hosts/helpers.js';
import { git as realGit } from '../vcs/helpers.js';

const KEY = 'fs_two_instances_key';
const base = tempBase();
let a: Served;
let b: Served;

beforeAll(async () => {
  const flags = ['--auth', 'api-key', '--api-key', KEY, '--access-log', 'off', '--valve', 'sandbox=validated', '--allow-unconfined', '--valve', 'quota_per_user_mb=1'];
  [a, b] = await Promise.all([serve(flags, { base }), serve(flags, { base })]);
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  fs.rmSync(base, { recursive: true, force: true });
});

async function call(s: Served, user: string, fn: string, args: Record<string, unknown>): Promise<{ success: boolean; error?: { code: string } }> {
  const res = await s.post(fn, args, { Authorization: `Bearer ${KEY}`, 'X-OpenWebUI-User-Id': user });
  expect(res.status).toBe(200);
  return (await res.json()) as { success: boolean; error?: { code: string } };
}

// Real git on a zone's work tree, its repository beside it (test/vcs/helpers.ts).
const git = (data: string, ...args: string[]) => realGit(data, ...args).trim();

describe('two instances, one storage base', () => {
  it('appends alternating between the instances: none lost, one commit each, linear history', async () => {
    const user = 'alice';
    expect((await call(a, user, 'shed_create_file', { zone: 'documents', path: 'log.txt', content: 'start\n' })).success).toBe(true);
    const repo = path.join(base, 'users', user, 'Documents', 'data');
    const commitsBefore = Number(git(repo, 'rev-list', '--count', 'HEAD'));
    const N = 24;
    const acked: string[] = [];
    const errors: string[] = [];
    // Four conversations of the same user at once, each alternating instance on every request.
    await Promise.all(
      [0, 1, 2, 3].map(async (w) => {
        for (let i = 0; i < N; i++) {
          const line = `w${w} ${i}`;
          const r = await call((i + w) % 2 === 0 ? a : b, user, 'shed_patch_text', { zone: 'documents', path: 'log.txt', content: line, position: 'end' });
          if (r.success) acked.push(line);
          else errors.push(r.error?.code ?? '?');
        }
      }),
    );
    expect(errors).toEqual([]);
    const lines = new Set(fs.readFileSync(path.join(repo, 'log.txt'), 'utf8').split('\n'));
    expect(acked.filter((l) => !lines.has(l))).toEqual([]);
    expect(acked.length).toBe(4 * N);
    expect(Number(git(repo, 'rev-list', '--count', 'HEAD')) - commitsBefore).toBe(acked.length);
    expect(git(repo, 'rev-list', '--merges', 'HEAD')).toBe('');
    expect(git(repo, 'status', '--porcelain')).toBe('');
    git(repo, 'fsck', '--strict');
    // Each instance reads what the other wrote.
    const readA = (await (await a.post('shed_read', { zone: 'documents', path: 'log.txt' }, { Authorization: `Bearer ${KEY}`, 'X-OpenWebUI-User-Id': user })).json()) as { data: { content: string } };
    const readB = (await (await b.post('shed_read', { zone: 'documents', path: 'log.txt' }, { Authorization: `Bearer ${KEY}`, 'X-OpenWebUI-User-Id': user })).json()) as { data: { content: string } };
    expect(readA.data.content).toBe(readB.data.content);
  });

  it('the quota is exact across instances: parallel writes through both fill it to the byte, never past it', async () => {
    const user = 'bob';
    const size = 100_000; // quota 1 MiB = 1,048,576 bytes: exactly 10 files fit
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) => call(i % 2 === 0 ? a : b, user, 'shed_create_file', { zone: 'storage', path: `f${i}.bin`, content: 'q'.repeat(size) })),
    );
    const ok = results.filter((r) => r.success).length;
    const refused = results.filter((r) => r.error?.code === 'QUOTA_EXCEEDED').length;
    expect(ok).toBe(10);
    expect(refused).toBe(6);
    const data = path.join(base, 'users', user, 'Storage', 'data');
    const used = fs.readdirSync(data).reduce((n, f) => n + fs.statSync(path.join(data, f)).size, 0);
    expect(used).toBe(10 * size);
    // Both instances see the same usage: one more byte than what is left is refused by either.
    for (const s of [a, b]) expect((await call(s, user, 'shed_create_file', { zone: 'storage', path: 'more.bin', content: 'z'.repeat(1_048_576 - 10 * size + 1) })).error?.code).toBe('QUOTA_EXCEEDED');
    expect((await call(b, user, 'shed_create_file', { zone: 'storage', path: 'fits.bin', content: 'z'.repeat(1_048_576 - 10 * size) })).success).toBe(true);
  });
});
