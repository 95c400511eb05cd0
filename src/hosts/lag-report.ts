/**
 * A diagnostic for tests and operators: with FILESHED_LAG_REPORT_MS=N in its environment, the
 * server watches its own event loop (a 10 ms timer) and writes one stderr line per hold longer
 * than N ms of CPU: `fileshed: event loop held <cpu> ms of CPU (<wall> ms on the clock, <gc> ms GC)`.
 * CPU time (the process's user + system) rather than the clock, so a loaded machine or a slow disk
 * does not read as a loop that forgot to yield; GC pauses V8 reports are counted apart. The test
 * suite's stall tests read these lines (test/serving/stall-server.ts). Off (no timer) by default.
 */
import { PerformanceObserver } from 'node:perf_hooks';

const TICK_MS = 10;

export function startLagReport(env: NodeJS.ProcessEnv = process.env): void {
  const limit = Number(env.FILESHED_LAG_REPORT_MS ?? 0);
  if (!(limit > 0)) return;
  const gcs: { start: number; end: number }[] = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push({ start: e.startTime, end: e.startTime + e.duration });
    if (gcs.length > 256) gcs.splice(0, gcs.length - 256);
  }).observe({ entryTypes: ['gc'] });
  const cpuNow = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  let last = performance.now();
  let lastCpu = cpuNow();
  setInterval(() => {
    const now = performance.now();
    const cpu = cpuNow();
    const wall = now - last;
    if (wall > TICK_MS + limit && cpu - lastCpu > limit) {
      const gap = { start: last, end: now, cpu: cpu - lastCpu };
      // GC entries are delivered after the pause: judge the gap a moment later.
      setTimeout(() => {
        const gc = gcs.reduce((sum, g) => sum + Math.max(0, Math.min(gap.end, g.end) - Math.max(gap.start, g.start)), 0);
        const held = Math.min(wall - TICK_MS, gap.cpu) - gc;
        if (held > limit) process.stderr.write(`fileshed: event loop held ${held.toFixed(0)} ms of CPU (${wall.toFixed(0)} ms on the clock, ${gc.toFixed(0)} ms GC)\n`);
      }, 100).unref();
    }
    last = now;
    lastCpu = cpu;
  }, TICK_MS).unref();
}
