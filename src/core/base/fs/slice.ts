/**
 * Cooperative time slicing for walks of user-shaped trees (quota rescans, change lists, commits of
 * new folders, link sweeps, blocked-file scans): a user decides how many folders there are and how
 * deep they nest, so no such walk may hold the event loop, which answers every other user, for
 * longer than one slice. A walk calls `await slice.tick()` once per folder (or entry): after
 * SLICE_MS of work it yields to the event loop (setImmediate: pending I/O, other users' requests,
 * run first), then goes on.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';

/** Longest stretch of walking between two turns of the event loop. */
export const SLICE_MS = 8;

export class TimeSlice {
  private started = performance.now();

  /** Yields to the event loop when this slice is used up. Cheap otherwise (one clock read). */
  async tick(): Promise<void> {
    if (performance.now() - this.started < SLICE_MS) return;
    await nextTurn();
    this.started = performance.now();
  }
}

/** Below this many items a native sort takes well under a slice. */
const SORT_RUN = 1024;

/**
 * A stable sort of a user-sized list (30,000 file names sort in 10-60 ms natively) that yields to
 * the event loop between steps: runs of SORT_RUN items are sorted natively, then merged pairwise.
 */
export async function sortSliced<T>(items: readonly T[], cmp: (a: T, b: T) => number, slice: TimeSlice): Promise<T[]> {
  if (items.length <= SORT_RUN) return [...items].sort(cmp);
  let runs: T[][] = [];
  for (let i = 0; i < items.length; i += SORT_RUN) {
    await slice.tick();
    runs.push(items.slice(i, i + SORT_RUN).sort(cmp));
  }
  while (runs.length > 1) {
    const next: T[][] = [];
    for (let r = 0; r < runs.length; r += 2) {
      const a = runs[r]!;
      const b = runs[r + 1];
      if (b === undefined) {
        next.push(a);
        continue;
      }
      const out: T[] = new Array(a.length + b.length);
      let i = 0;
      let j = 0;
      for (let k = 0; k < out.length; k++) {
        if (k % SORT_RUN === 0) await slice.tick();
        out[k] = j >= b.length || (i < a.length && cmp(a[i]!, b[j]!) <= 0) ? a[i++]! : b[j++]!;
      }
      next.push(out);
    }
    runs = next;
  }
  return runs[0]!;
}
