/**
 * One user's ordinary command must never end `fileshed serve` for everyone: `tar -xf one.tar` (a
 * folder d/ of 200 files), then `tar --recursive-unlink -xf two.tar` where d is a file, used to
 * kill the process from the quota watch's inotify callback (ENOTDIR). Over HTTP against the built
 * server, in each kernel sandbox mode: every call answers, the process stays up, another user is
 * answered, and the fix is at the root (nothing reached the last-resort handler).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, serve, type Served } from './helpers.js';

let archives: string;
beforeAll(() => {
  archives = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-crash-'));
  const one = path.join(archives, 'one');
  fs.mkdirSync(path.join(one, 'd'), { recursive: true });
  for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(one, 'd', `f${i}`), `${i}\n`);
  execFileSync('tar', ['-cf', path.join(archives, 'one.tar'), '-C', one, 'd']);
  const two = path.join(archives, 'two');
  fs.mkdirSync(two);
  fs.writeFileSync(path.join(two, 'd'), 'a file now\n');
  execFileSync('tar', ['-cf', path.join(archives, 'two.tar'), '-C', two, 'd']);
});
afterAll(() => fs.rmSync(archives, { recursive: true, force: true }));

describe.each(['bwrap', 'landlock'])('finding: a folder replaced by a file under the watch (%s)', (sandbox) => {
  let s: Served;
  let key: string;
  beforeAll(async () => {
    s = await serve(['--auth', 'api-key', '--valve', `sandbox=${sandbox}`]);
    key = /Generated API key .*: (\S+)$/.exec(s.stdout.join('\n'))![1]!;
  });
  afterAll(async () => {
    await s.stop();
  });
  const as = (user: string) => ({ Authorization: `Bearer ${key}`, 'X-OpenWebUI-User-Id': user });

  it('the server stays up and answers another user', async () => {
    const zone = path.join(s.base, 'users', 'u1', 'Storage', 'data');
    fs.mkdirSync(zone, { recursive: true });
    for (const name of ['one.tar', 'two.tar']) fs.copyFileSync(path.join(archives, name), path.join(zone, name));
    for (let round = 0; round < 3; round++) {
      for (const args of [['-xf', 'one.tar'], ['--recursive-unlink', '-xf', 'two.tar']]) {
        const r = await json(await s.post('shed_exec', { zone: 'storage', cmd: 'tar', args }, as('u1')));
        expect(r.success, JSON.stringify(r.error)).toBe(true);
        expect(r.data.sandbox).toBe(sandbox);
      }
    }
    const other = await json(await s.post('shed_create_file', { zone: 'storage', path: 'hello.txt', content: 'hi' }, as('u2')));
    expect(other.success, JSON.stringify(other.error)).toBe(true);
    const read = await json(await s.post('shed_read', { zone: 'storage', path: 'hello.txt' }, as('u2')));
    expect(read.data.content).toBe('hi');
    expect(s.proc.exitCode).toBeNull();
    expect(s.stderr()).not.toMatch(/uncaught|unhandled/i);
  }, 120_000);
});
