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
