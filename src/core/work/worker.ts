/**
 * Worker-thread side of the pool. Imported by the plugin's entry (src/index.ts) for its side
 * effect: loaded on the main thread it does nothing; loaded by the pool (a worker started on the
 * bundle with the pool's marker in workerData) it serves jobs, one at a time, until terminated.
 */
import os from 'node:os';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { ShedError } from '../errors.js';
import { sqlJobs } from '../db/jobs.js';
import { archiveJobs } from '../archive/jobs.js';
import { textJobs } from '../text/jobs.js';
import type { JobTable } from './jobs.js';
import { WORKER_MARK, type WorkerReply } from './pool.js';
import { sqlEngine } from '../db/engine.js';

const JOBS: JobTable = { ...sqlJobs, ...archiveJobs, ...textJobs };

/**
 * What a job kind needs ready before its deadline starts: sql.js is instantiated on a worker's first
 * SQL job (inflating and compiling the WASM), which is boot time, not the statement's run time.
 */
const WARM_UP: Record<string, () => Promise<unknown>> = { 'sql.': sqlEngine };

/** Nice value of pool threads: below the event loop, so a heavy job cannot starve other users' calls. */
const WORKER_NICE = 19;

/** Progress lines are throttled: one per 250 ms is plenty for a status bar. */
const PROGRESS_EVERY_MS = 250;

function serve(port: NonNullable<typeof parentPort>): void {
  port.on('message', (msg: { id: number; kind: string; input: unknown }) => {
    void run(port, msg);
  });
}

async function run(port: NonNullable<typeof parentPort>, msg: { id: number; kind: string; input: unknown }): Promise<void> {
  const reply = (r: WorkerReply, transfer: ArrayBuffer[] = []) => port.postMessage(r, transfer);
  const job = JOBS[msg.kind];
  if (job === undefined) {
    reply({ id: msg.id, ok: false, error: { message: `unknown job kind '${msg.kind}'` } });
    return;
  }
  let last = 0;
  const warm = Object.entries(WARM_UP).find(([prefix]) => msg.kind.startsWith(prefix))?.[1];
  if (warm) await warm().catch(() => undefined); // a failure shows again, with its message, in the job
  reply({ id: msg.id, started: true }); // the job's deadline starts now (pool.ts)
  try {
    const { value, transfer } = await job(msg.input, {
      progress: async (done, total, rows) => {
        const now = Date.now();
        if (now - last < PROGRESS_EVERY_MS) return;
        last = now;
        reply({ id: msg.id, status: `${done} ${total} ${rows}` });
      },
    });
    reply({ id: msg.id, ok: true, value }, transfer ?? []);
  } catch (err) {
    if (err instanceof ShedError) {
      reply({ id: msg.id, ok: false, error: { code: err.code, message: err.message, details: err.details, hint: err.hint } });
    } else {
      const e = err instanceof Error ? err : new Error(String(err));
      // errno codes survive, so the host still reports a full disk as IO_ERROR
      const errno = (e as NodeJS.ErrnoException).code;
      reply({ id: msg.id, ok: false, error: { message: e.message, name: e.name, ...(errno ? { details: { errno } } : {}) } });
    }
  }
}

if (!isMainThread && parentPort !== null && (workerData as Record<string, unknown> | null)?.[WORKER_MARK] === true) {
  // Pool work yields the CPU to the host's event loop (which answers every other user): on Linux a
  // thread has its own nice value and setPriority(0, ...) sets the calling thread's only. Where
  // that does not hold (or is not allowed) the worker just runs at normal priority.
  try {
    os.setPriority(0, WORKER_NICE);
  } catch {
    // not permitted or not supported: keep the default priority
  }
  serve(parentPort);
}
