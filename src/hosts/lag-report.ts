/**
 * A diagnostic for tests and operators: with FILESHED_LAG_REPORT_MS=N in its environment, the
 * server watches its own event loop (a 10 ms timer) and writes one stderr line per hold longer
 * than N ms of CPU: `fileshed: event loop held <cpu> ms of CPU (<wall> ms on the clock, <gc> ms GC)`.
 * CPU time (the event loop thread's, user + system) rather than the clock, so a loaded machine or a slow disk
 * does not read as a loop that forgot to yield; GC pauses V8 reports are counted apart. The test
 * suite's stall tests read these lines (test/serving/stall-server.ts). Off (no timer) by default.
 */
import { readFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';

const TICK_MS = 10;

/**
 * CPU time (ms) of the calling thread alone: the event loop's own work. The process's total would
 * also count the thread pool (thousands of deep-path stats during a command's quota watch) and
 * V8's helper threads, and blame their CPU on a gap the loop spent merely descheduled.
 */
export function threadCpuMs(): number {
  const own = (process as { threadCpuUsage?: () => NodeJS.CpuUsage }).threadCpuUsage;
  if (own !== undefined) {
    const u = own.call(process);
    return (u.user + u.system) / 1000;
  }
  try {
    // Node before 23.9: the kernel's count for this thread; utime and stime (fields 14 and 15, after
    // the name in parentheses) are in clock ticks of 10 ms.
    const stat = readFileSync('/proc/thread-self/stat', 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  }
}

export function startLagReport(env: NodeJS.ProcessEnv = process.env): void {
  const limit = Number(env.FILESHED_LAG_REPORT_MS ?? 0);
  if (!(limit > 0)) return;
  const gcs: { start: number; end: number }[] = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push({ start: e.startTime, end: e.startTime + e.duration });
    if (gcs.length > 256) gcs.splice(0, gcs.length - 256);
  }).observe({ entryTypes: ['gc'] });
  const cpuNow = threadCpuMs;
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
