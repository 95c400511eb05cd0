/**
 * Archive work as pool jobs (see core/base/work): inflating (unzip) and deflating (zip) run on a worker
 * thread, so a 10,000-file archive does not stall the other users of a server. Handlers keep the
 * checks, quota and placement on the main thread; only the byte-crunching loop moves.
 *
 * `archiveJobs` are the worker-side implementations; `runExtract` and `runWriteZip` are what
 * handlers call on the main thread (deadline, progress relay, the error of a stopped job).
 * Inputs are plain data (the plan's entries, the item list): structured-cloneable as they are.
 */
import { shedError } from '../../base/errors.js';
import type { JobTable } from '../../base/work/jobs.js';
import { runJob } from '../../base/work/pool.js';
import { writeZip, type WriteLimits, type Written, type ZipItem } from './create.js';
import { extractToTemp, type Plan } from './extract.js';

interface ExtractInput {
  zipAbs: string;
  shown: string;
  plan: Plan;
  tempRoot: string;
}

interface WriteInput {
  items: ZipItem[];
  destAbs: string;
  limits: WriteLimits;
}

/** Worker side. Progress goes out as the pool's status line (done, total, 0). */
export const archiveJobs: JobTable = {
  async 'zip.extract'(input, ctx) {
    const { zipAbs, shown, plan, tempRoot } = input as ExtractInput;
    await extractToTemp(zipAbs, shown, plan, tempRoot, (done, total) => ctx.progress(done, total, 0));
    return { value: null };
  },
  async 'zip.write'(input, ctx) {
    const { items, destAbs, limits } = input as WriteInput;
    return { value: await writeZip(items, destAbs, limits, (done, total) => ctx.progress(done, total, 0)) };
  },
};

// ---------------------------------------------------------------------------------------------
// Main-thread side

export interface ArchiveRunOptions {
  /** Deadline of the job: the valve exec_timeout_max (the longest any one operation may run). */
  timeoutSeconds: number;
  onProgress: (done: number, total: number) => Promise<void> | void;
}

function options(o: ArchiveRunOptions, what: string) {
  return {
    timeoutMs: o.timeoutSeconds * 1000,
    onTimeout: () =>
      shedError('TIMEOUT', `${what} ran longer than ${o.timeoutSeconds} s (exec_timeout_max) and was stopped; nothing was written.`, {
        details: { timeout_seconds: o.timeoutSeconds },
        hint: 'Work on fewer files per call (split the folder or the archive), or ask the admin to raise exec_timeout_max.',
      }),
    onStatus: (line: string) => {
      const [done, total] = line.split(' ').map(Number);
      void Promise.resolve(o.onProgress(done ?? 0, total ?? 0)).catch(() => undefined);
    },
  };
}

/** Inflates every planned entry under `tempRoot` on a worker. */
export function runExtract(zipAbs: string, shown: string, plan: Plan, tempRoot: string, o: ArchiveRunOptions): Promise<void> {
  return runJob('zip.extract', { zipAbs, shown, plan, tempRoot } satisfies ExtractInput, options(o, `Extracting ${shown}`));
}

/** Writes the archive (temp file + rename) on a worker. */
export function runWriteZip(items: ZipItem[], destAbs: string, limits: WriteLimits, o: ArchiveRunOptions): Promise<Written> {
  return runJob('zip.write', { items, destAbs, limits } satisfies WriteInput, options(o, `Creating ${limits.shown}`));
}
