/**
 * The worker pool: CPU-bound work (SQLite statements and CSV imports, zip/unzip) runs on worker
 * threads so the host's event loop keeps answering other calls (SPEC section 15, "Serving").
 *
 * - Sized from the cores (availableParallelism, at least 4, at most 8), started lazily, one job per
 *   worker at a time, further jobs queue in order. Idle workers are unref'd: they never keep a
 *   process alive; a busy one is ref'd for the job's duration so the job can finish.
 * - A job has a deadline: past it the worker is terminated (the only way to stop sql.js mid-statement)
 *   and the job ends as QUERY_TIMEOUT (or the caller's own error). Workers have a memory cap
 *   (resourceLimits); a worker that dies of it ends its job as RESOURCE_LIMIT. A dead worker's slot
 *   is refilled by the next job.
 * - The worker code is this very module: the plugin is one bundle file, so a worker is started on
 *   `import.meta.url` with a marker in workerData, and `./worker.ts` (imported by the bundle's entry)
 *   notices the marker and serves jobs. Running from source (tests), the same entry is bundled once
 *   per process with esbuild into a temp file, since Node cannot start a worker on a .ts file.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ShedError, shedError, type Details, type ErrorCode } from '../errors.js';

export const WORKER_MARK = 'fileshedPoolWorker';

/** Heap cap per worker (JS objects); SQLite's own heap is capped separately (see jobs.ts). */
export const WORKER_HEAP_MB = 512;

/**
 * The cap in effect: FILESHED_WORKER_HEAP_MB (a deployment knob for small machines, and how the
 * tests reach the cap with a real call) or WORKER_HEAP_MB. Read when a worker starts.
 */
export function workerHeapMb(): number {
  const given = Number(process.env.FILESHED_WORKER_HEAP_MB);
  return Number.isInteger(given) && given >= 16 ? given : WORKER_HEAP_MB;
}

export interface JobOptions {
  /** Milliseconds before the worker is stopped; the job then fails with `onTimeout()`. */
  timeoutMs: number;
  onTimeout: () => Error;
  /** Status lines sent by the job (import progress). */
  onStatus?: (description: string) => void;
}

/** Messages from a worker to the pool. */
export type WorkerReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: { code?: ErrorCode; message: string; details?: Details; hint?: string; name?: string } }
  | { id: number; status: string }
  | { id: number; started: true };

/**
 * A job's deadline runs from the moment its worker starts it (a `started` reply), not from the
 * moment it was posted: a worker that is still booting (loading the bundle, instantiating sql.js,
 * slow on a loaded machine) must not eat a one-second statement timeout. Until then this grace bounds
 * the wait for a worker that never starts.
 */
const BOOT_GRACE_MS = 60_000;

interface Slot {
  worker: Worker;
  busy: boolean;
}

interface Pending {
  kind: string;
  input: unknown;
  transfer: ArrayBuffer[];
  opts: JobOptions;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

let slots: Slot[] = [];
const queue: Pending[] = [];
let nextId = 1;
let sourceBundle: string | undefined;

export function poolSize(): number {
  const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  // At least 4 even on a small machine: a server's scheduler lets each user run one call, so a
  // runaway query and a long import of two users hold two workers; the others' statements still
  // find a free one instead of waiting up to sqlite_timeout_seconds behind them.
  return Math.max(4, Math.min(8, cores));
}

/** Runs job `kind` on a worker; resolves with its value, rejects with its ShedError. */
export function runJob<T>(kind: string, input: unknown, opts: JobOptions, transfer: ArrayBuffer[] = []): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    queue.push({ kind, input, transfer, opts, resolve: resolve as (v: unknown) => void, reject });
    pump();
  });
}

/** Stops every worker (a server's shutdown; tests). Queued jobs fail; the pool restarts on the next job. */
export async function shutdownPool(): Promise<void> {
  const old = slots;
  slots = [];
  for (const p of queue.splice(0)) p.reject(shedError('INTERNAL_ERROR', 'The worker pool was shut down before this job ran.'));
  await Promise.all(old.map((s) => s.worker.terminate().catch(() => undefined)));
}

/** Workers alive now (for tests and a server's status page). */
export function poolStats(): { workers: number; busy: number; queued: number; size: number } {
  return { workers: slots.length, busy: slots.filter((s) => s.busy).length, queued: queue.length, size: poolSize() };
}

function pump(): void {
  while (queue.length > 0) {
    let slot = slots.find((s) => !s.busy);
    if (slot === undefined) {
      if (slots.length >= poolSize()) return;
      try {
        slot = startWorker();
      } catch (err) {
        const job = queue.shift()!;
        job.reject(shedError('INTERNAL_ERROR', `A worker thread could not be started (${err instanceof Error ? err.message : String(err)}).`));
        continue;
      }
    }
    dispatchTo(slot, queue.shift()!);
  }
}

function startWorker(): Slot {
  const worker = new Worker(workerScript(), {
    workerData: { [WORKER_MARK]: true },
    resourceLimits: { maxOldGenerationSizeMb: workerHeapMb(), maxYoungGenerationSizeMb: Math.min(64, Math.ceil(workerHeapMb() / 4)) },
    stderr: false,
  });
  worker.unref();
  const slot: Slot = { worker, busy: false };
  slots.push(slot);
  // A worker that dies between jobs just leaves the pool; the next job starts a fresh one.
  worker.on('error', () => drop(slot));
  worker.on('exit', () => drop(slot));
  return slot;
}

function drop(slot: Slot): void {
  slots = slots.filter((s) => s !== slot);
}

function dispatchTo(slot: Slot, job: Pending): void {
  const id = nextId++;
  const { worker } = slot;
  slot.busy = true;
  worker.ref(); // the job's caller is waiting: keep the process alive until it answers
  let settled = false;
  const finish = (fn: () => void, keep: boolean) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    worker.off('message', onMessage);
    worker.off('error', onError);
    worker.off('exit', onExit);
    if (keep) {
      slot.busy = false;
      worker.unref();
      fn();
      pump();
      return;
    }
    drop(slot);
    // The caller hears of the failure only once the thread has stopped: a job may be writing to a
    // descriptor the caller closes next (a staged database file), and that number could be reused.
    void worker
      .terminate()
      .catch(() => undefined)
      .then(() => {
        fn();
        pump();
      });
  };
  const onMessage = (msg: WorkerReply) => {
    if (msg.id !== id) return;
    if ('started' in msg) {
      clearTimeout(timer);
      timer = setTimeout(timeout, job.opts.timeoutMs);
      return;
    }
    if ('status' in msg) {
      try {
        job.opts.onStatus?.(msg.status);
      } catch {
        // a broken status listener must not break the job
      }
      return;
    }
    if (msg.ok) finish(() => job.resolve(msg.value), true);
    else finish(() => job.reject(revive(msg.error)), msg.error.code !== 'RESOURCE_LIMIT');
  };
  const onError = (err: Error) => {
    const code = (err as NodeJS.ErrnoException).code;
    const oom = code === 'ERR_WORKER_OUT_OF_MEMORY' || /out of memory|heap limit/i.test(err.message);
    finish(() => job.reject(oom ? memoryError() : shedError('INTERNAL_ERROR', `A worker thread failed: ${err.name}: ${err.message.split('\n')[0]}`)), false);
  };
  const onExit = (exitCode: number) => {
    finish(() => job.reject(shedError('INTERNAL_ERROR', `A worker thread stopped unexpectedly (exit code ${exitCode}).`)), false);
  };
  const timeout = () => finish(() => job.reject(job.opts.onTimeout()), false);
  let timer = setTimeout(timeout, job.opts.timeoutMs + BOOT_GRACE_MS);
  worker.on('message', onMessage);
  worker.on('error', onError);
  worker.on('exit', onExit);
  worker.postMessage({ id, kind: job.kind, input: job.input }, job.transfer);
}

export function memoryError(): ShedError {
  return shedError('RESOURCE_LIMIT', 'The operation needed more memory than one call may use, and was stopped. Nothing was changed.', {
    details: { heap_limit_mb: workerHeapMb() },
    hint: 'Work on less data per call: add WHERE or LIMIT, aggregate in SQL instead of returning huge values, or split the file.',
  });
}

function revive(e: Extract<WorkerReply, { ok: false }>['error']): Error {
  if (e.code !== undefined) return new ShedError(e.code, e.message, { details: e.details, hint: e.hint });
  const err: NodeJS.ErrnoException = new Error(e.message);
  if (e.name) err.name = e.name;
  if (typeof e.details?.errno === 'string') err.code = e.details.errno; // a full disk stays an IO_ERROR
  return err;
}

/** The file a worker runs: this bundle, or (from source) a bundle of the worker entry built once. */
function workerScript(): URL | string {
  const self = import.meta.url;
  if (!self.endsWith('.ts')) return new URL(self);
  sourceBundle ??= bundleFromSource(fileURLToPath(self));
  return sourceBundle;
}

/**
 * Source mode only (vitest): esbuild (a dev dependency, absent from the bundle) builds worker.ts
 * with the same settings as build.mjs into a temp file removed at exit.
 */
function bundleFromSource(selfPath: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fileshed-worker-'));
  const out = path.join(dir, 'worker.mjs');
  const esbuildName = 'esbuild'; // a variable, so the bundler leaves this require alone
  const load = createRequire(selfPath);
  const esbuild = load(esbuildName) as { buildSync(opts: Record<string, unknown>): unknown };
  const bannerFile = '../../../build/bundle-banner.cjs'; // a variable too: build-time file, not bundled
  const { banner } = load(bannerFile) as { banner: string };
  esbuild.buildSync({
    entryPoints: [path.join(path.dirname(selfPath), 'worker.ts')],
    outfile: out,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
    loader: { '.wasm': 'binary' },
    banner: { js: banner },
  });
  process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return out;
}
