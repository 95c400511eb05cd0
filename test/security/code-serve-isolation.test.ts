/**
 * Another user's calls are answered within 1 s while one user runs every kind of bomb as a script,
 * measured over HTTP against `fileshed serve` (dist/, loopback): bob reads a file every 50 ms from
 * the first bomb to the last, and the slowest of his answers is the measure.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, serve, type Served } from '../hosts/helpers.js';

const BOMBS: [string, string, string][] = [
  ['python fork bomb', 'shed_run_python', 'import os\nwhile True:\n    try: os.fork()\n    except OSError: pass\n'],
  ['shell fork bomb', 'shed_run_shell', 'b() { b | b & }; b; sleep 5'],
  ['thread bomb', 'shed_run_python', 'import threading, time\nwhile True:\n    threading.Thread(target=time.sleep, args=(100,), daemon=True).start()\n'],
  ['memory across processes', 'shed_run_python', 'import os, time\nfor _ in range(16):\n    if os.fork() == 0:\n        b = bytearray(300 << 20)\n        for i in range(0, len(b), 4096): b[i] = 1\n        time.sleep(30); os._exit(0)\ntime.sleep(30)\n'],
  ['output bomb', 'shed_run_python', 'import sys\nwhile True: sys.stdout.write("x" * 65536)\n'],
  ['disk bomb', 'shed_run_python', 'i = 0\nwhile True:\n    open(f"f{i}.bin", "wb").write(b"x" * (4 << 20)); i += 1\n'],
  ['/tmp bomb', 'shed_run_python', 'i = 0\nwhile True:\n    open(f"/tmp/f{i}", "wb").write(b"x" * (4 << 20)); i += 1\n'],
  ['CPU spin in 8 processes', 'shed_run_python', 'import os\nfor _ in range(3): os.fork()\nwhile True: pass\n'],
];

describe('fileshed serve: one user bombing with scripts, another user served', () => {
  let s: Served;
  const as = (user: string) => ({ Authorization: 'Bearer k1', 'X-OpenWebUI-User-Id': user, 'X-OpenWebUI-Chat-Id': 'c' });

  beforeAll(async () => {
    s = await serve(['--auth', 'api-key', '--api-key', 'k1', '--access-log', 'off', '--valve', 'allow_python=true', '--valve', 'allow_shell=true', '--valve', 'quota_per_user_mb=200']);
    const made = await json(await s.post('shed_create_file', { zone: 'storage', path: 'notes.txt', content: 'hello\n' }, as('bob')));
    expect(made.success).toBe(true);
  });
  afterAll(async () => {
    await s.stop();
    fs.rmSync(s.base, { recursive: true, force: true });
  });

  it('every bomb is contained and bob is answered within 1 s throughout', async () => {
    const latencies: number[] = [];
    let running = true;
    const reader = (async () => {
      while (running) {
        const t0 = performance.now();
        const r = await json(await s.post('shed_read', { zone: 'storage', path: 'notes.txt' }, as('bob')));
        latencies.push(performance.now() - t0);
        expect(r.data?.content ?? r.data?.text ?? JSON.stringify(r)).toContain('hello');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const outcomes: string[] = [];
    try {
      for (const [name, fn, code] of BOMBS) {
        const body = fn === 'shed_run_python' ? { zone: 'storage', code, timeout: 8 } : { zone: 'storage', script: code, timeout: 8 };
        const t0 = performance.now();
        const r = await json(await s.post(fn, body, as('mallory')));
        outcomes.push(`${name}: ${r.success ? `exit ${r.data.returncode}` : r.error.code} in ${Math.round(performance.now() - t0)} ms`);
        expect(performance.now() - t0, name).toBeLessThan(60_000);
      }
    } finally {
      running = false;
      await reader;
    }
    const sorted = [...latencies].sort((x, y) => x - y);
    const p99 = sorted[Math.floor(sorted.length * 0.99)]!;
    console.log(`${outcomes.join('\n')}\nbob: ${latencies.length} reads, median ${sorted[sorted.length >> 1]!.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms`);
    expect(latencies.length).toBeGreaterThan(20);
    expect(sorted.at(-1)!, 'the slowest answer to another user').toBeLessThan(1000);
    // Still serving scripts afterwards.
    const after = await json(await s.post('shed_run_python', { zone: 'storage', code: 'print(6 * 7)' }, as('mallory')));
    expect(after.data?.stdout).toBe('42\n');
  }, 300_000);
});
