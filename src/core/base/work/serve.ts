/**
 * The runner side of a job pool (pool.ts), shared by worker threads (../pool-worker.ts) and the SQLite
 * child processes (core/services/db/node/child.ts): runs one job message and sends the replies (started,
 * throttled progress, the value or the error in a form that survives the trip).
 */
import { ShedError } from '../errors.js';
import type { JobTable } from './jobs.js';
import type { JobMessage, WorkerReply } from './pool.js';

/** Progress lines are throttled: one per 250 ms is plenty for a status bar. */
const PROGRESS_EVERY_MS = 250;

export interface ServeOptions {
  jobs: JobTable;
  /** What a job kind (by prefix) needs ready before its deadline starts (boot time, not run time). */
  warmUp?: Record<string, () => Promise<unknown>>;
  /** Around the job itself, after `started` (the child's watchdog arms and disarms here). */
  begin?: (msg: JobMessage) => void;
  end?: () => void;
}

export async function serveJob(msg: JobMessage, reply: (r: WorkerReply, transfer?: ArrayBuffer[]) => void, o: ServeOptions): Promise<void> {
  const job = o.jobs[msg.kind];
  if (job === undefined) {
    reply({ id: msg.id, ok: false, error: { message: `unknown job kind '${msg.kind}'` } });
    return;
  }
  let last = 0;
  const warm = Object.entries(o.warmUp ?? {}).find(([prefix]) => msg.kind.startsWith(prefix))?.[1];
  if (warm) await warm().catch(() => undefined); // a failure shows again, with its message, in the job
  reply({ id: msg.id, started: true }); // the job's deadline starts now (pool.ts)
  o.begin?.(msg);
  try {
    const { value, transfer } = await job(msg.input, {
      progress: async (done, total, rows) => {
        const now = Date.now();
        if (now - last < PROGRESS_EVERY_MS) return;
        last = now;
        reply({ id: msg.id, status: `${done} ${total} ${rows}` });
      },
    });
    o.end?.();
    reply({ id: msg.id, ok: true, value }, transfer ?? []);
  } catch (err) {
    o.end?.();
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
