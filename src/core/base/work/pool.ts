/**
 * Job pools: CPU-bound work runs off the host's event loop so it keeps answering other calls (SPEC
 * section 15, "Serving"). Two pools share this logic:
 * - the thread pool (this module's `runJob`): sql.js statements and CSV imports, zip/unzip, on
 *   worker threads;
 * - the process pool of the file-backed SQLite engine (core/services/db/node/children.ts): node:sqlite
 *   statements run in child processes, because a running node:sqlite statement cannot be stopped
 *   from another thread (worker.terminate() waits for it), while a process can always be killed.
 *
 * - Sized from the cores (availableParallelism, at least 4, at most 8), started lazily, one job per
 *   runner at a time, further jobs queue in order. Idle runners never keep a process alive; a busy
 *   one does for the job's duration so the job can finish.
 * - A job has a deadline: past it the runner is stopped (terminated thread, killed process) and the
 *   job ends as QUERY_TIMEOUT (or the caller's own error). A runner that dies (of its memory cap, or
 *   killed) ends its job as RESOURCE_LIMIT or INTERNAL_ERROR; its slot is refilled by the next job.
 * - The worker code is this very module: the plugin is one bundle file, so a worker is started on
 *   `import.meta.url` with a marker in workerData, and `../../services/pool-worker.ts` (imported by the bundle's entry)
 *   notices the marker and serves jobs. Running from source (tests), the same entry is bundled with
 *   esbuild into one temp file named by its content, since Node cannot start a worker on a .ts file.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ShedError, shedError, type Details, type ErrorCode } from '../errors.js';
import { tempPathFor } from '../fs/atomic.js';
import { readBytes, writeBytes } from '../fs/read.js';

export const WORKER_MARK = 'fileshedPoolWorker';

/** Heap cap per worker (JS objects); SQLite's own heap is capped separately (see db/jobs.ts). */
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
  /** Milliseconds before the runner is stopped; the job then fails with `onTimeout()`. */
  timeoutMs: number;
  /** A job known to be long (a CSV import): it runs at the lowest priority from its start. */
  background?: boolean;
  onTimeout: () => Error;
  /** Status lines sent by the job (import progress). */
  onStatus?: (description: string) => void;
}

/** Messages from the pool to a runner. */
export interface JobMessage {
  id: number;
  kind: string;
  input: unknown;
  /** The job's deadline from its start, for a runner's own watchdog (core/services/db/node/child.ts). */
  timeoutMs: number;
}

/** Messages from a runner to the pool. */
export type WorkerReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: { code?: ErrorCode; message: string; details?: Details; hint?: string; name?: string } }
  | { id: number; status: string }
  | { id: number; started: true };

/** What a pool needs of a thread or a process that runs jobs. */
export interface JobRunner {
  post(msg: JobMessage, transfer: ArrayBuffer[]): void;
  /** Subscribes to replies; returns the unsubscribe function. */
  onReply(fn: (msg: WorkerReply) => void): () => void;
  /** Subscribes to the runner's death (the error its job ends with); returns the unsubscribe function. */
  onDeath(fn: (err: Error) => void): () => void;
  /** A busy runner keeps the host process alive; an idle one does not. */
  hold(busy: boolean): void;
  /** Lowers the runner's CPU priority for good (nice 19); see PoolOptions.demoteAfterMs. */
  demote?(): void;
  /** Stops the runner; resolves once it is gone (its descriptors and locks released). */
  stop(): Promise<void>;
}

/**
 * A job's deadline runs from the moment its runner starts it (a `started` reply), not from the
 * moment it was posted: a runner that is still booting (loading the bundle, instantiating sql.js,
 * slow on a loaded machine) must not eat a one-second statement timeout. Until then this grace bounds
 * the wait for a runner that never starts.
 */
const BOOT_GRACE_MS = 60_000;

interface Slot {
  runner: JobRunner;
  busy: boolean;
  idleTimer: NodeJS.Timeout | undefined;
  /** At nice 19 for good (see PoolOptions.demoteAfterMs): it serves background jobs first. */
  demoted: boolean;
}

interface Pending {
  kind: string;
  input: unknown;
  transfer: ArrayBuffer[];
  opts: JobOptions;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

export interface PoolStats {
  workers: number;
  busy: number;
  queued: number;
  size: number;
}

export function poolSize(): number {
  const cores = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  // At least 4 even on a small machine: a server's scheduler lets each user run one call, so a
  // runaway query and a long import of two users hold two runners; the others' statements still
  // find a free one instead of waiting up to sqlite_timeout_seconds behind them.
  return Math.max(4, Math.min(8, cores));
}

export interface PoolOptions {
  start: () => JobRunner;
  /** Runners idle this long are stopped, except one (processes cost memory); undefined: kept. */
  idleMs?: number;
  /**
   * Keep one idle runner at normal priority ready (up to the pool's size): a job finding none would
   * wait for a start (a process: tens of milliseconds), e.g. right after a runaway's runner was killed.
   */
  spare?: boolean;
  /**
   * Jobs start at the host's priority and drop to nice 19 (runner.demote) once they run this long,
   * background jobs at once: a one-row statement is not slowed by a busy machine, a heavy one yields
   * to every other call. A process cannot raise its priority again: a demoted runner then serves
   * background jobs first, and other jobs only when no runner at normal priority can be had.
   */
  demoteAfterMs?: number;
}

export class JobPool {
  private slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;

  constructor(private readonly options: PoolOptions) {}

  /** Runs job `kind` on a runner; resolves with its value, rejects with its ShedError. */
  run<T>(kind: string, input: unknown, opts: JobOptions, transfer: ArrayBuffer[] = []): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ kind, input, transfer, opts, resolve: resolve as (v: unknown) => void, reject });
      this.pump();
    });
  }

  /** Stops every runner. Queued jobs fail; the pool restarts on the next job. */
  async shutdown(): Promise<void> {
    const old = this.slots;
    this.slots = [];
    for (const p of this.queue.splice(0)) p.reject(shedError('INTERNAL_ERROR', 'The worker pool was shut down before this job ran.'));
    for (const s of old) clearTimeout(s.idleTimer);
    await Promise.all(old.map((s) => s.runner.stop().catch(() => undefined)));
  }

  stats(): PoolStats {
    return { workers: this.slots.length, busy: this.slots.filter((s) => s.busy).length, queued: this.queue.length, size: poolSize() };
  }

  private pump(): void {
    while (this.queue.length > 0) {
      const background = this.queue[0]!.opts.background === true;
      const idle = (demoted: boolean) => this.slots.find((s) => !s.busy && s.demoted === demoted);
      // A background job takes a demoted runner first; other jobs take one at normal priority, a
      // new one if the pool may grow, and a demoted one only as the last resort.
      let slot = background ? (idle(true) ?? idle(false)) : idle(false);
      if (slot === undefined && this.slots.length < poolSize()) {
        try {
          slot = this.startRunner();
        } catch (err) {
          const job = this.queue.shift()!;
          job.reject(shedError('INTERNAL_ERROR', `A worker could not be started (${err instanceof Error ? err.message : String(err)}).`));
          continue;
        }
      }
      slot ??= idle(true);
      if (slot === undefined) return;
      this.dispatchTo(slot, this.queue.shift()!);
    }
  }

  /** Starts a spare runner when none at normal priority is idle (called once a job has started: never during a boot). */
  private keepSpare(): void {
    if (!this.options.spare || this.slots.length >= poolSize() || this.slots.some((s) => !s.busy && !s.demoted)) return;
    try {
      this.startRunner();
    } catch {
      // the next job reports it
    }
  }

  private startRunner(): Slot {
    const runner = this.options.start();
    runner.hold(false);
    const slot: Slot = { runner, busy: false, idleTimer: undefined, demoted: false };
    this.slots.push(slot);
    // A runner that dies between jobs just leaves the pool; the next job starts a fresh one.
    runner.onDeath(() => this.drop(slot));
    this.idle(slot);
    return slot;
  }

  private drop(slot: Slot): void {
    clearTimeout(slot.idleTimer);
    this.slots = this.slots.filter((s) => s !== slot);
  }

  /** An idle runner is stopped after idleMs (processes hold memory), except the last one at normal priority. */
  private idle(slot: Slot): void {
    const { idleMs } = this.options;
    if (idleMs === undefined) return;
    slot.idleTimer = setTimeout(() => {
      if (slot.busy || (!slot.demoted && this.slots.filter((s) => !s.busy && !s.demoted).length <= 1)) return;
      this.drop(slot);
      void slot.runner.stop().catch(() => undefined);
    }, idleMs);
    slot.idleTimer.unref();
  }

  private dispatchTo(slot: Slot, job: Pending): void {
    const id = this.nextId++;
    const { runner } = slot;
    clearTimeout(slot.idleTimer);
    slot.idleTimer = undefined;
    slot.busy = true;
    runner.hold(true); // the job's caller is waiting: keep the process alive until it answers
    const demote = () => {
      if (slot.demoted || !runner.demote) return;
      slot.demoted = true;
      runner.demote();
    };
    if (job.opts.background && this.options.demoteAfterMs !== undefined) demote();
    let settled = false;
    let demotion: NodeJS.Timeout | undefined;
    const finish = (fn: () => void, keepRunner: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(demotion);
      offReply();
      offDeath();
      if (keepRunner) {
        slot.busy = false;
        runner.hold(false);
        fn();
        this.idle(slot);
        this.pump();
        return;
      }
      this.drop(slot);
      // The caller hears of the failure only once the runner has stopped: a job may be writing to a
      // descriptor or a file the caller touches next (a staged file, a database it recovers).
      void runner
        .stop()
        .catch(() => undefined)
        .then(() => {
          fn();
          this.pump();
        });
    };
    const offReply = runner.onReply((msg) => {
      if (msg.id !== id) return;
      if ('started' in msg) {
        clearTimeout(timer);
        timer = setTimeout(timeout, job.opts.timeoutMs);
        this.keepSpare();
        const { demoteAfterMs } = this.options;
        if (demoteAfterMs !== undefined && !slot.demoted) demotion = setTimeout(demote, demoteAfterMs);
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
    });
    const offDeath = runner.onDeath((err) => finish(() => job.reject(err), false));
    const timeout = () => finish(() => job.reject(job.opts.onTimeout()), false);
    let timer = setTimeout(timeout, job.opts.timeoutMs + BOOT_GRACE_MS);
    runner.post({ id, kind: job.kind, input: job.input, timeoutMs: job.opts.timeoutMs }, job.transfer);
  }
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

// ---------------------------------------------------------------------------------------------
// The thread pool

let sourceBundle: string | undefined;

/** A worker thread on this bundle (or, from source, on a bundle of pool-worker.ts). */
function startThread(): JobRunner {
  const worker = new Worker(workerScript(), {
    workerData: { [WORKER_MARK]: true },
    resourceLimits: { maxOldGenerationSizeMb: workerHeapMb(), maxYoungGenerationSizeMb: Math.min(64, Math.ceil(workerHeapMb() / 4)) },
    stderr: false,
  });
  return {
    post: (msg, transfer) => worker.postMessage(msg, transfer),
    onReply(fn) {
      worker.on('message', fn);
      return () => worker.off('message', fn);
    },
    onDeath(fn) {
      const onError = (err: Error) => {
        const code = (err as NodeJS.ErrnoException).code;
        const oom = code === 'ERR_WORKER_OUT_OF_MEMORY' || /out of memory|heap limit/i.test(err.message);
        fn(oom ? memoryError() : shedError('INTERNAL_ERROR', `A worker thread failed: ${err.name}: ${err.message.split('\n')[0]}`));
      };
      const onExit = (exitCode: number) => fn(shedError('INTERNAL_ERROR', `A worker thread stopped unexpectedly (exit code ${exitCode}).`));
      worker.on('error', onError);
      worker.on('exit', onExit);
      return () => {
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
    },
    hold: (busy) => (busy ? worker.ref() : worker.unref()),
    stop: async () => {
      await worker.terminate();
    },
  };
}

const threads = new JobPool({ start: startThread });

/** Every pool of the process (the SQLite process pool registers itself), for shutdown and stats. */
const pools: JobPool[] = [threads];

export function registerPool(pool: JobPool): void {
  pools.push(pool);
}

/** Runs job `kind` on a worker thread; resolves with its value, rejects with its ShedError. */
export function runJob<T>(kind: string, input: unknown, opts: JobOptions, transfer: ArrayBuffer[] = []): Promise<T> {
  return threads.run(kind, input, opts, transfer);
}

/** Stops every worker (a server's shutdown; tests). Queued jobs fail; the pools restart on the next job. */
export async function shutdownPool(): Promise<void> {
  await Promise.all(pools.map((p) => p.shutdown()));
}

/** Workers alive now, threads and processes together (for tests and a server's status page). */
export function poolStats(): PoolStats {
  const all = pools.map((p) => p.stats());
  const sum = (key: keyof PoolStats) => all.reduce((n, s) => n + s[key], 0);
  return { workers: sum('workers'), busy: sum('busy'), queued: sum('queued'), size: sum('size') };
}

/** The file a worker runs: this bundle, or (from source) a bundle of the worker entry built once. */
export function workerScript(): URL | string {
  const self = import.meta.url;
  if (!self.endsWith('.ts')) return new URL(self);
  sourceBundle ??= bundleFromSource(path.join(path.dirname(fileURLToPath(self)), '..', '..', 'services', 'pool-worker.ts'));
  return sourceBundle;
}

/**
 * Source mode only (vitest): esbuild (a dev dependency, absent from the bundle) builds an entry
 * with the same settings as build.mjs (build/bundle-options.cjs). The file is named by its content
 * in the temp folder: every test process of one checkout shares it, none leaves one of its own.
 */
export function bundleFromSource(entry: string): string {
  const load = createRequire(import.meta.url);
  const optionsFile = '../../../../build/bundle-options.cjs'; // a variable: build-time file, not bundled
  const { buildTextFromSource } = load(optionsFile) as { buildTextFromSource(entry: string): string };
  const text = buildTextFromSource(entry);
  const out = path.join(os.tmpdir(), `fileshed-worker-${crypto.createHash('sha256').update(text).digest('hex').slice(0, 24)}.mjs`);
  if (!ownCopy(out, text)) {
    const temp = tempPathFor(out);
    writeBytes(temp, text, { exclusive: true });
    try {
      fs.renameSync(temp, out); // whole or absent, whichever process finishes first
    } catch {
      // Another user's file holds the name: this process keeps its own copy until it exits.
      process.once('exit', () => fs.rmSync(temp, { force: true }));
      return temp;
    }
  }
  return out;
}

/** The file at `out` is this process's user's and holds exactly `text` (a shared temp folder: anyone may have put a file there). */
function ownCopy(out: string, text: string): boolean {
  const st = fs.lstatSync(out, { throwIfNoEntry: false });
  if (st?.isFile() !== true || st.uid !== process.getuid?.() || (st.mode & 0o022) !== 0) return false;
  return readBytes(out, { noFollow: true }).equals(Buffer.from(text));
}
