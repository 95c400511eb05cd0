/**
 * Entry of a SQLite child process, the runner of the file engine's jobs (children.ts starts it:
 * `node -` with this module's bundled text on stdin, jobs and replies over the IPC channel).
 *
 * The parent kills a child whose job passes its deadline. A watchdog thread does it too, a little
 * later, and kills the child at once if its parent is gone: a statement runs in C without returning
 * to JavaScript, so nothing on this thread could notice either while it runs.
 */
import { Worker } from 'node:worker_threads';
import type { JobMessage } from '../../../base/work/pool.js';
import { serveJob } from '../../../base/work/serve.js';
import { fileJobs } from './jobs.js';

/** The watchdog waits this long past the parent's own deadline (the parent normally kills first). */
const WATCHDOG_GRACE_MS = 2_000;

const WATCHDOG = `
const { workerData } = require('node:worker_threads');
const { deadline, parent } = workerData;
setInterval(() => {
  const due = deadline[0];
  if (process.ppid !== parent || (due > 0 && Date.now() > due)) process.kill(process.pid, 'SIGKILL');
}, 250);
`;

function serve(send: (msg: unknown) => boolean): void {
  const deadline = new Float64Array(new SharedArrayBuffer(8));
  // execArgv: [] so the watchdog's CommonJS text is not read as a module (this process runs with --input-type=module).
  // Small limits: each isolate reserves address space, which counts against the child's `ulimit -d`.
  const resourceLimits = { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2, codeRangeSizeMb: 8 };
  const watchdog = new Worker(WATCHDOG, { eval: true, execArgv: [], resourceLimits, workerData: { deadline, parent: process.ppid } });
  watchdog.on('error', (err) => process.stderr.write(`SQLite child: the watchdog failed: ${String(err)}\n`)); // the parent still kills on timeout
  watchdog.unref();
  const options = {
    jobs: fileJobs,
    begin: (msg: JobMessage) => {
      deadline[0] = Date.now() + msg.timeoutMs + WATCHDOG_GRACE_MS;
    },
    end: () => {
      deadline[0] = 0;
    },
  };
  process.on('message', (msg: JobMessage) => {
    void serveJob(msg, (reply) => send(reply), options); // (no transfer list: a process gets copies)
  });
  process.on('disconnect', () => process.exit(0));
}

if (process.send !== undefined) serve(process.send.bind(process));
