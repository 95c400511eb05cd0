/**
 * The suite's event-loop lag probe (test/helpers/lag.ts) catches what it is for: a loop that holds
 * the event loop on the CPU, and a synchronous wait that holds it without CPU; it does not blame a
 * call that waits asynchronously for as long.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { threadCpuMs } from '../../src/hosts/lag-report.js';
import { checkLag, LAG_LIMIT_MS, watchLag } from '../helpers/lag.js';

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

  it('a synchronous wait without CPU past the clock limit fails the call', async () => {
    const lag = await held(() => {
      execFileSync('sleep', ['1.5']);
    });
    expect(lag.longestWallMs).toBeGreaterThan(limits.wallMs);
    expect(() => checkLag('sleepy', lag, limits)).toThrow(/sleepy held the event loop for \d+ ms on the clock/);
  }, 20_000);

  it('waiting asynchronously as long is no hold', async () => {
    const lag = await held(() => new Promise((r) => setTimeout(r, 1500)));
    expect(() => checkLag('patient', lag, limits)).not.toThrow();
  }, 20_000);
});
