/**
 * The suite's event-loop lag probe (test/helpers/lag.ts) catches what it is for: a loop that holds
 * the event loop on the CPU, and a synchronous wait that holds it without CPU; it does not blame a
 * call that waits asynchronously for as long.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { threadCpuMs } from '../../src/hosts/lag-report.js';
import { checkLag, LAG_LIMIT_MS, watchLag } from '../helpers/lag.js';
import { sampledBetween } from '../helpers/lag-stacks.js';

/** A shorter clock bound than the suite's (5 s), to keep this test short. */
const limits = { cpuMs: LAG_LIMIT_MS, wallMs: 1000 };

async function held(block: () => void | Promise<void>) {
  const watch = watchLag();
  await new Promise((r) => setTimeout(r, 30));
  await block();
  await new Promise((r) => setTimeout(r, 30));
  return watch.stop();
}

describe('event-loop lag probe', () => {
  it('a loop on the CPU past the limit fails the call', async () => {
    const lag = await held(function spinOnTheCpu() {
      // CPU time, not the clock: on a loaded machine this process gets only part of a core. The
      // clock is read every 100,000 steps: read at every step (a file read on Node 20) it made
      // enough garbage that the collections taken out of the gap left less than the limit.
      const cpu = threadCpuMs;
      const end = cpu() + LAG_LIMIT_MS * 3;
      let x = 0;
      while (cpu() < end) for (let i = 0; i < 100_000; i++) x += Math.sqrt(x + 1);
    });
    expect(lag.longestMs).toBeGreaterThan(LAG_LIMIT_MS);
    expect(() => checkLag('busy', lag, limits)).toThrow(/busy held the event loop for \d+ ms of CPU/);
    // The failure says where the loop was: the sampled stacks of the hold name the spinning function.
    expect(() => checkLag('busy', lag, limits)).toThrow(/Where the loop was \(sampled\):\n\s+\d+% spinOnTheCpu test\/unit\/lag-probe\.test\.ts:\d+/);
  });

  it('a synchronous native call made from JavaScript past the limit fails the call (its caller is on the sampled stack)', async () => {
    const lag = await held(function hashOnTheLoop() {
      const end = threadCpuMs() + LAG_LIMIT_MS * 3;
      while (threadCpuMs() < end) crypto.pbkdf2Sync('secret', 'salt', 200_000, 32, 'sha256');
    });
    expect(lag.nativeMs).toBeUndefined();
    expect(() => checkLag('hashing', lag, limits)).toThrow(/hashing held the event loop for \d+ ms of CPU[^]*hashOnTheLoop test\/unit\/lag-probe\.test\.ts/);
  });

  it('a hold in which no sample ran JavaScript is left out and reported beside (the runtime\'s own work)', () => {
    const samples = { at: [0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60], stacks: [...Array(12).fill(['(program)']), ['spin src/core/x.ts:1']] };
    expect(sampledBetween(samples, 0, 57)).toMatchObject({ samples: 12, withJavaScript: 0, text: '  100% (program)' });
    expect(sampledBetween(samples, 0, 60)).toMatchObject({ samples: 13, withJavaScript: 1 });
  });

  it('a synchronous wait without CPU past the clock limit fails the call', async () => {
    const lag = await held(function sleepOnTheLoop() {
      execFileSync('sleep', ['1.5']);
    });
    expect(lag.longestWallMs).toBeGreaterThan(limits.wallMs);
    expect(() => checkLag('sleepy', lag, limits)).toThrow(/sleepy held the event loop for \d+ ms on the clock/);
    // It says where: the wait's caller is on the stacks sampled in it (a CI-only hold is read off CI's output).
    expect(() => checkLag('sleepy', lag, limits)).toThrow(/Where the loop was \(sampled\):\n[^]*sleepOnTheLoop test\/unit\/lag-probe\.test\.ts:\d+/);
  }, 20_000);

  it('waiting asynchronously as long is no hold', async () => {
    const lag = await held(() => new Promise((r) => setTimeout(r, 1500)));
    expect(() => checkLag('patient', lag, limits)).not.toThrow();
  }, 20_000);
});
