/**
 * The event loop's longest gap on the clock while some work runs: a 5 ms timer ticks meanwhile, and
 * the longest time between two ticks is how long the loop could not answer anyone. For tests that
 * hold a product step to a bound on the clock (the lag probe, lag.ts, counts the loop's CPU instead).
 */
export async function longestGap<T>(work: () => Promise<T>): Promise<{ value: T; gapMs: number; tookMs: number }> {
  let last = performance.now();
  let gapMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    gapMs = Math.max(gapMs, now - last);
    last = now;
  }, 5);
  const started = performance.now();
  try {
    const value = await work();
    const tookMs = performance.now() - started;
    await new Promise((r) => setTimeout(r, 20)); // a gap that ended with the work is counted by the next tick
    return { value, gapMs, tookMs };
  } finally {
    clearInterval(timer);
  }
}
