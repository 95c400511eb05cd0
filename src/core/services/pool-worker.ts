/**
 * Worker-thread side of the pool. Imported by the plugin's entry (src/index.ts) for its side
 * effect: loaded on the main thread it does nothing; loaded by the pool (a worker started on the
 * bundle with the pool's marker in workerData) it serves jobs, one at a time, until terminated.
 */
import os from 'node:os';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { sqlJobs } from './db/jobs.js';
import { archiveJobs } from './archive/jobs.js';
import { WORKER_MARK, type JobMessage } from '../base/work/pool.js';
import { sqlEngine } from './db/engine.js';
import { serveJob } from '../base/work/serve.js';
import { textJobs } from '../base/text/jobs.js';
import { documentJobs } from './documents/convert.js';

/** Nice value of pool threads: below the event loop, so a heavy job cannot starve other users' calls. */
export const WORKER_NICE = 19;

if (!isMainThread && parentPort !== null && (workerData as Record<string, unknown> | null)?.[WORKER_MARK] === true) {
  // Pool work yields the CPU to the host's event loop (which answers every other user): on Linux a
  // thread has its own nice value and setPriority(0, ...) sets the calling thread's only. Where
  // that does not hold (or is not allowed) the worker just runs at normal priority.
  try {
    os.setPriority(0, WORKER_NICE);
  } catch {
    // not permitted or not supported: keep the default priority
  }
  const port = parentPort;
  // sql.js is instantiated on a worker's first SQL job (inflating and compiling the WASM): boot time.
  const options = { jobs: { ...sqlJobs, ...archiveJobs, ...textJobs, ...documentJobs }, warmUp: { 'sql.': sqlEngine } };
  port.on('message', (msg: JobMessage) => {
    void serveJob(msg, (r, transfer = []) => port.postMessage(r, transfer), options);
  });
}
