/**
 * The executor's freeze (what the per-call quota uses once a command may have passed its quota):
 * `hold` stops every process of the command, the sandboxed ones included, until a check that
 * started after the freeze answers; then the command goes on, or is killed if the check says so.
 * Also: `yieldCpu` lowers the priority of the command's processes started before it; checks asked
 * back to back (a command writing thousands of files wakes the monitor at every batch of events) take
 * at most a quarter of a running command's time, and a held command is checked at once.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { executablesFor } from '../../src/core/services/exec/launcher/executables.js';
import { INNER_SCRIPT } from '../../src/core/services/exec/launcher/launcher-script.js';
import { run } from '../../src/core/services/exec/launcher/runner.js';
import type { RunControls, RunRequest } from '../../src/core/services/exec/launcher/run-types.js';
import { sandboxStatus } from '../../src/core/services/exec/launcher/sandbox.js';
import { MODES } from './exec-harness.js';

let zone: string;
beforeEach(() => {
  zone = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-hold-'));
});
afterEach(() => fs.rmSync(zone, { recursive: true, force: true }));

let landlockAbi = 0;
beforeAll(async () => {
  landlockAbi = (await sandboxStatus('landlock')).landlockAbi!;
});

function request(mode: (typeof MODES)[number], args: string[], monitor: RunRequest['monitor']): RunRequest {
  return {
    program: '/bin/sh', args, zoneRoot: zone, readonly: false, sandbox: mode, network: false,
    // The shell and the sleep it starts (a test-only program list: commands never get a shell).
    landlock: { abi: landlockAbi, executables: [...executablesFor('sh', '/bin/sh'), ...executablesFor('sleep', '/usr/bin/sleep')] },
    timeoutSec: 20, memoryMb: 0, cpuSec: 0, maxFileBytes: 1 << 30, maxProcesses: 64, captureBytes: 4096, mergeStderr: false, monitor,
  };
}

/**
 * State letter, nice value, pid and parent of each running process of the command: those whose
 * command line holds `marker`. The inner launcher (perl in bubblewrap, before it replaces itself with
 * the program) is not counted: it runs no command code, and the priority was set before it started.
 */
function processes(marker: string): { pid: number; ppid: number; state: string; nice: number }[] {
  const out: { pid: number; ppid: number; state: string; nice: number }[] = [];
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmdline.includes(marker) || cmdline.includes(INNER_SCRIPT)) continue;
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push({ pid: Number(pid), ppid: Number(fields[1]), state: fields[0]!, nice: Number(fields[16]) });
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Waits (at most 5 s) until `count` processes carry `marker`: a loaded machine starts them late. */
async function started(marker: string, count: number): Promise<void> {
  for (let i = 0; i < 100 && processes(marker).filter((p) => p.state === 'S').length < count; i++) await sleep(50);
}
/**
 * 'T' for each process of the command that is stopped, once all are (at most 3 s): a stop signal
 * takes effect when the process next runs, so on a loaded machine a runnable (R) or waiting-on-disk
 * (D) process shows as stopped a little later. A shell caught between vfork and exec waits (D) for
 * its stopped child and runs nothing until that child goes on: it counts as stopped.
 */
async function stoppedStates(marker: string): Promise<string[]> {
  const states = () => {
    const all = processes(marker);
    return all.map((p) => (p.state === 'D' && all.some((c) => c.ppid === p.pid && c.state === 'T') ? 'T' : p.state));
  };
  let seen = states();
  for (let i = 0; i < 60 && seen.some((s) => s !== 'T'); i++) {
    await sleep(50);
    seen = states();
  }
  return seen;
}
/** A sleep of `whole` seconds and a fraction no other process uses: it marks the command's processes in /proc. */
const uniqueSeconds = (whole: number) => `${whole}.${String(process.pid).padStart(7, '0')}${String(Math.floor(Math.random() * 1e4)).padStart(4, '0')}`;

describe.each(MODES)('sandbox %s', (mode) => {
  it('hold stops every process of the command until a later check answers, then it goes on', async () => {
    const marker = uniqueSeconds(2);
    let controls: RunControls | undefined;
    const checks: boolean[] = [];
    const seen: string[][] = [];
    const result = run(request(mode, ['-c', `sleep ${marker} & sleep ${marker}; wait; echo ${marker} > done.txt`], {
      everyMs: 60_000, // only the checks the test asks for
      check: async (held) => {
        checks.push(held);
        seen.push(await stoppedStates(marker));
        await sleep(300);
        return undefined;
      },
      wake: (run) => (controls = run),
    }));
    await started(marker, 3);
    controls!.hold();
    const r = await result;
    expect(r.returncode).toBe(0);
    expect(fs.readFileSync(path.join(zone, 'done.txt'), 'utf8').trim()).toBe(marker);
    expect(checks).toEqual([true]);
    // Every process of the command (the shell and both sleeps; bwrap's own under the sandbox) was stopped.
    expect(seen[0]!.length).toBeGreaterThanOrEqual(3);
    expect(new Set(seen[0])).toEqual(new Set(['T']));
  });

  it('a held command the check condemns is killed, not resumed', async () => {
    const marker = uniqueSeconds(5);
    let controls: RunControls | undefined;
    const result = run(request(mode, ['-c', `sleep ${marker}; echo late > late.txt`], {
      everyMs: 60_000,
      check: async () => 'quota',
      wake: (run) => (controls = run),
    }));
    await started(marker, 2);
    controls!.hold();
    const r = await result;
    expect(r.stoppedFor).toBe('quota');
    expect(r.durationMs).toBeLessThan(4500);
    expect(fs.existsSync(path.join(zone, 'late.txt'))).toBe(false);
    expect(processes(marker)).toEqual([]);
  });

  it('yieldCpu lowers every running process of the command from nice 10 to 19', async () => {
    const marker = uniqueSeconds(2);
    let controls: RunControls | undefined;
    const result = run(request(mode, ['-c', `sleep ${marker} & sleep ${marker}; wait`], {
      everyMs: 60_000,
      check: async () => undefined,
      wake: (run) => (controls = run),
    }));
    await started(marker, 3);
    // Past its first 50 ms its supervisor lowers it to nice 10 (priority.ts): wait (at most 3 s) for that first.
    let before = processes(marker).map((p) => p.nice);
    for (let i = 0; i < 60 && (before.length < 3 || before.some((n) => n !== 10)); i++) {
      await sleep(50);
      before = processes(marker).map((p) => p.nice);
    }
    controls!.yieldCpu();
    // The command's supervisor applies it: wait (at most 3 s) until every process shows it.
    let after = processes(marker).map((p) => p.nice);
    for (let i = 0; i < 60 && after.some((n) => n !== 19); i++) {
      await sleep(50);
      after = processes(marker).map((p) => p.nice);
    }
    await result;
    expect(before.length).toBeGreaterThanOrEqual(3);
    expect(new Set(before)).toEqual(new Set([10]));
    expect(new Set(after)).toEqual(new Set([19]));
  });

  it('checks asked back to back take at most a quarter of a running command\'s time', async () => {
    const marker = uniqueSeconds(3);
    const spans: number[] = [];
    let asker: NodeJS.Timeout | undefined;
    const r = await run(request(mode, ['-c', `sleep ${marker}`], {
      everyMs: 5,
      check: async () => {
        const began = performance.now();
        await sleep(40);
        spans.push(performance.now() - began);
        return undefined;
      },
      // As a flood of change events does: a check asked every millisecond.
      wake: (run) => (asker = setInterval(() => run.now(), 1)),
    }));
    clearInterval(asker);
    expect(r.returncode).toBe(0);
    const busy = spans.reduce((a, b) => a + b, 0);
    expect(spans.length).toBeGreaterThanOrEqual(5);
    // Back to back they would fill the 3 s (a ratio near 1).
    expect(busy / r.durationMs).toBeLessThan(0.35);
  });

  it('a held command is checked at once, however recent the last check', async () => {
    const marker = uniqueSeconds(9);
    let controls: RunControls | undefined;
    const checks: { held: boolean; at: number }[] = [];
    let heldAskedAt = 0;
    const result = run(request(mode, ['-c', `sleep ${marker}`], {
      everyMs: 60_000,
      // A slow check (1.2 s): the next one of a running command waits three times that.
      check: async (held) => {
        checks.push({ held, at: performance.now() });
        await sleep(1200);
        return held ? 'quota' : undefined;
      },
      wake: (run) => (controls = run),
    }));
    await started(marker, 1);
    controls!.now();
    for (let i = 0; i < 100 && checks.length === 0; i++) await sleep(20);
    await sleep(1300); // the first check is over: a running command's next would wait 3.6 s
    heldAskedAt = performance.now();
    controls!.hold();
    const r = await result;
    expect(r.stoppedFor).toBe('quota');
    const heldCheck = checks.find((c) => c.held);
    expect(heldCheck).toBeDefined();
    expect(heldCheck!.at - heldAskedAt).toBeLessThan(3000);
  }, 30_000);
});
