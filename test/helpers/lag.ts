/**
 * The event-loop lag probe of the test suite: while a product call is in flight, a timer ticks on
 * the event loop every TICK_MS; a gap between two ticks longer than the tick is time the loop was
 * held. A call that holds it past LAG_LIMIT_MS fails its test, so the next per-file loop that
 * forgets to yield is caught by CI, not by a review.
 *
 * What it must not blame on the product, to stay deterministic on a loaded 2-core machine:
 * - the test's own synchronous fixture building: only the time a call is in flight is watched
 *   (a test awaiting a call runs no code of its own meanwhile);
 * - garbage collection: pauses V8 reports (PerformanceObserver 'gc') are taken out of a gap;
 * - a machine loaded by other work (other vitest workers, other jobs on 2 cores): a gap counts only
 *   the CPU time the event loop's own thread used during it (threadCpuMs), so time spent
 *   descheduled or waiting on a slow shared disk is not blamed on a loop. A loop over a user's
 *   files is CPU and system calls, and shows in full. The thread pool's CPU (thousands of deep-path
 *   stats while a command's quota watch runs) and V8's helper threads are not counted: a CI run was
 *   seen blaming 545 ms of theirs on a gap the loop merely spent descheduled. What holds the loop without CPU
 *   (a synchronous child process, a sleep) is caught by the clock instead, past LAG_WALL_LIMIT_MS
 *   (5 s): a machine at load 17 on 2 cores was seen to give this process 6% of a core, so a shorter
 *   clock bound would blame the machine, not the product.
 * - the runtime's own native work: a hold in which no sample (lag-stacks.ts, one per 5 ms) shows a
 *   JavaScript frame is left out, and reported beside. The product holds the loop only by running
 *   JavaScript, or a native call that JavaScript made (its caller is on the sampled stack:
 *   rmdirSync, fsyncSync, pbkdf2Sync were all named so); a CI run blamed a Documents `mkdir -p`
 *   for 220 ms of CPU sampled 100% "(program)", no JavaScript at all.
 * - once-per-process costs of running from source: the SQLite engine's WebAssembly compile and the
 *   SQLite child's esbuild bundle (the plugin carries both ready-made) are warmed up before the
 *   first watched call (warmUp).
 * A failing call's message lists the stacks sampled inside the hold (lag-stacks.ts).
 * A test that means to measure lag itself (or runs something it knows to block, on purpose) opts
 * out: makeShed(valves, { lagProbe: false }) or call(fn, args, { lag: false }).
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { threadCpuMs } from '../../src/hosts/lag-report.js';
import { sampledBetween, startSampling, STACKS_FROM_MS, takeSamples } from './lag-stacks.js';

/** The longest the event loop may be held by one call (FILESHED_LAG_LIMIT_MS overrides; 0 turns the probe off). */
export const LAG_LIMIT_MS = Number(process.env.FILESHED_LAG_LIMIT_MS ?? 200);
/** A hold on the clock alone (no CPU: spawnSync, a sleep) fails past this many ms (GC taken out). */
export const LAG_WALL_LIMIT_MS = Math.max(LAG_LIMIT_MS, 5000);
const TICK_MS = 10;
/** A hold is native-only when at least this many samples fall in it and none runs JavaScript (~50 ms at one sample per 5 ms). */
const NATIVE_MIN_SAMPLES = 10;
/** A gap on the clock this long is looked at too, whatever its CPU (rare: a profile costs little then). */
const WALL_STACKS_FROM_MS = 1000;

export interface LagReport {
  /** The longest time the loop was held, GC pauses taken out: the CPU the process used in that gap (ms). */
  longestMs: number;
  /** That gap's length on the clock (ms). */
  wallMs: number;
  /** GC time inside that gap, taken out (ms). */
  gcMs: number;
  /** The longest gap on the clock, GC taken out, whatever its CPU (ms). */
  longestWallMs: number;
  /** Where the loop was in the longest hold, when it was long enough to look (lag-stacks.ts). */
  stacks?: string;
  /** Where the loop was in the longest gap on the clock, when that gap is past the clock's limit. */
  wallStacks?: string;
  /** The longest hold left out because no sample inside it ran JavaScript (ms of CPU). */
  nativeMs?: number;
}

export interface LagWatch {
  stop(): Promise<LagReport>;
}

interface Span {
  start: number;
  end: number;
  /** CPU microseconds the process used between the two ticks. */
  cpuUs?: number;
}

const cpuNow = () => threadCpuMs() * 1000;

const overlap = (a: Span, b: Span) => Math.max(0, Math.min(a.end, b.end) - Math.max(a.start, b.start));

/** Starts watching the event loop; stop() tells the longest hold since. */
export function watchLag(): LagWatch {
  startSampling();
  const gcs: Span[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push({ start: e.startTime, end: e.startTime + e.duration });
  });
  observer.observe({ entryTypes: ['gc'] });
  const gaps: Span[] = [];
  let last = performance.now();
  let lastCpu = cpuNow();
  const note = () => {
    const now = performance.now();
    const cpu = cpuNow();
    if (now - last > TICK_MS * 2) gaps.push({ start: last, end: now, cpuUs: cpu - lastCpu });
    last = now;
    lastCpu = cpu;
  };
  const timer = setInterval(note, TICK_MS);
  return {
    async stop() {
      note();
      clearInterval(timer);
      // GC entries are delivered asynchronously: let the observer's queue drain first.
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setTimeout(r, 0));
      observer.disconnect();
      let longestWallMs = 0;
      let longestWallGap: Span | undefined;
      const holds = gaps.map((gap) => {
        const gcMs = gcs.reduce((sum, gc) => sum + overlap(gap, gc), 0);
        const wallMs = gap.end - gap.start;
        if (wallMs - TICK_MS - gcMs > longestWallMs) [longestWallMs, longestWallGap] = [wallMs - TICK_MS - gcMs, gap];
        return { gap, gcMs, wallMs, held: Math.min(wallMs - TICK_MS, (gap.cpuUs ?? 0) / 1000) - gcMs };
      });
      holds.sort((a, b) => b.held - a.held);
      const longOnClock = longestWallMs >= WALL_STACKS_FROM_MS;
      const samples = (holds[0] !== undefined && holds[0].held >= STACKS_FROM_MS) || longOnClock ? takeSamples() : undefined;
      // A wait without CPU (a blocked system call) still shows where it was called from: the samples taken while or when it returns.
      const wallStacks = longOnClock && samples && longestWallGap ? sampledBetween(samples, longestWallGap.start, longestWallGap.end).text : undefined;
      let worst: LagReport = { longestMs: 0, wallMs: 0, gcMs: 0, longestWallMs, ...(wallStacks ? { wallStacks } : {}) };
      let nativeMs = 0;
      for (const { gap, gcMs, wallMs, held } of holds) {
        const sampled = samples && held >= STACKS_FROM_MS ? sampledBetween(samples, gap.start, gap.end) : undefined;
        if (sampled && sampled.samples >= NATIVE_MIN_SAMPLES && sampled.withJavaScript === 0) {
          nativeMs = Math.max(nativeMs, held);
          continue;
        }
        worst = { ...worst, longestMs: Math.max(0, held), wallMs, gcMs, ...(sampled?.text ? { stacks: sampled.text } : {}) };
        break;
      }
      return { ...worst, ...(nativeMs > 0 ? { nativeMs } : {}) };
    },
  };
}

/** Throws when a watched call held the loop too long; the message names the call and the figures. */
export function checkLag(what: string, lag: LagReport, limits = { cpuMs: LAG_LIMIT_MS, wallMs: LAG_WALL_LIMIT_MS }): void {
  if (limits.cpuMs <= 0) return;
  if ((lag.nativeMs ?? 0) > limits.cpuMs) console.warn(`lag probe: ${what} saw a hold of ${lag.nativeMs!.toFixed(0)} ms of CPU in which no sample ran JavaScript; left out (see lag.ts).`);
  if (lag.longestMs <= limits.cpuMs && lag.longestWallMs > limits.wallMs) {
    throw new Error(
      `${what} held the event loop for ${lag.longestWallMs.toFixed(0)} ms on the clock (limit ${limits.wallMs} ms), with little CPU: ` +
        'a synchronous wait (spawnSync, execFileSync, a sleep, a slow synchronous disk call) runs on the event loop. A test that means to measure lag opts out with { lag: false }.' +
        (lag.wallStacks ? `\nWhere the loop was (sampled):\n${lag.wallStacks}` : ''),
    );
  }
  if (lag.longestMs <= limits.cpuMs) return;
  throw new Error(
    `${what} held the event loop for ${lag.longestMs.toFixed(0)} ms of CPU in a gap of ${lag.wallMs.toFixed(0)} ms (limit ${limits.cpuMs} ms${lag.gcMs > 0 ? `, ${lag.gcMs.toFixed(0)} ms of GC taken out` : ''}): ` +
      'some loop of the product runs without yielding (see src/core/base/fs/slice.ts). A test that means to measure lag opts out with { lag: false }.' +
      (lag.stacks ? `\nWhere the loop was (sampled):\n${lag.stacks}` : ''),
  );
}
