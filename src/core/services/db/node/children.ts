/**
 * The file engine's process pool (see core/base/work/pool.ts): node:sqlite statements run in child
 * processes, because a running statement cannot be interrupted from another thread, while a process
 * can always be killed (and SQLite rolls back what it left).
 *
 * A child is `node -` reading its code on stdin: the child's own small bundle (child.ts and what it
 * imports), carried by the plugin as a string (build.mjs defines FILESHED_SQLITE_CHILD), so the plugin
 * stays one file and a child is ready in a few tens of milliseconds. From source (tests) that text
 * is built once per process with esbuild. Each child runs under `ulimit -d` (its JS heap cap plus
 * SQLite's allowance: SQLite then fails an allocation with "out of memory" instead of the machine
 * running out). A statement running past DEMOTE_MS drops to nice 19, an import runs there from its
 * start; a child at nice 19 then serves imports first (it cannot go back up), and idle children
 * exit after a while, except one at normal priority.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import os from 'node:os';
import { shedError } from '../../../base/errors.js';
import { JobPool, memoryError, registerPool, workerHeapMb, type JobOptions, type JobRunner, type WorkerReply } from '../../../base/work/pool.js';
import { SQLITE_HEAP_MB } from '../query.js';

declare const FILESHED_SQLITE_CHILD: string | undefined;

/** Idle children beyond the first are stopped after this long (each holds ~40 MB). */
const IDLE_MS = 60_000;
/** A statement running this long yields the CPU: its child goes to nice 19 (like the thread pool's). */
const DEMOTE_MS = 100;
/**
 * Address space (`ulimit -d` counts VmData) a child may use besides its JS heap and SQLite's
 * allowance: Node reserves about 600 MB at start (650 MB on Node 26), the rest is for buffers.
 */
const BASE_DATA_MB = 1024;

let source: string | null | undefined;

/**
 * The child's code: the text the build put in the bundle, or (from source) a fresh build. Undefined
 * for a bundle built without it (not by build.mjs): the sql.js engine serves then.
 */
export function childSource(): string | undefined {
  if (source === undefined) {
    if (typeof FILESHED_SQLITE_CHILD === 'string') source = FILESHED_SQLITE_CHILD;
    else source = import.meta.url.endsWith('.ts') ? buildFromSource() : null;
  }
  return source ?? undefined;
}

function buildFromSource(): string {
  const load = createRequire(import.meta.url);
  const optionsFile = '../../../../../build/bundle-options.cjs'; // variables: build-time files, not bundled
  const esbuildName = 'esbuild';
  const { sqliteChildSource } = load(optionsFile) as { sqliteChildSource(esbuild: unknown): string };
  return sqliteChildSource(load(esbuildName));
}

function startChild(): JobRunner {
  const code = childSource();
  if (code === undefined) throw new Error('this build of the plugin has no SQLite child code');
  const heapMb = workerHeapMb();
  const dataKb = (heapMb + SQLITE_HEAP_MB + BASE_DATA_MB) * 1024;
  const env = { ...process.env };
  delete env.NODE_OPTIONS; // a host's loaders and flags are not the child's
  const child = spawn('/bin/sh', ['-c', `ulimit -d ${dataKb} 2>/dev/null; exec "$0" "$@"`, process.execPath, `--max-old-space-size=${heapMb}`, '--input-type=module', '-'], {
    stdio: ['pipe', 'ignore', 'pipe', 'ipc'], // JSON messages: jobs and results are plain data (rows already rendered)
    env,
  });
  child.stdin!.on('error', () => undefined); // a child that died before reading its code: its exit reports it
  child.stdin!.end(code);
  let stderr = ''; // the end of it: V8's "heap limit" message says a child died of its memory cap
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => {
    stderr = (stderr + d).slice(-4000);
  });
  let gone = false;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      gone = true;
      resolve();
    });
    child.once('error', () => {
      gone = true;
      resolve();
    });
  });
  const pipes = [child.stderr as unknown as { ref(): void; unref(): void }];
  return {
    post: (msg) => {
      child.send(msg, (err) => {
        if (err) child.kill('SIGKILL'); // the channel broke: the death handler reports it
      });
    },
    onReply(fn) {
      const on = (msg: unknown) => fn(msg as WorkerReply);
      child.on('message', on);
      return () => child.off('message', on);
    },
    onDeath(fn) {
      const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
        if (/heap limit|out of memory|allocation failed/i.test(stderr)) fn(memoryError());
        else fn(shedError('INTERNAL_ERROR', `A SQLite process stopped unexpectedly (${signal ?? `exit code ${code}`}).`));
      };
      const onError = (err: Error) => fn(shedError('INTERNAL_ERROR', `A SQLite process could not run: ${err.message}`));
      child.on('exit', onExit);
      child.on('error', onError);
      return () => {
        child.off('exit', onExit);
        child.off('error', onError);
      };
    },
    demote() {
      try {
        os.setPriority(child.pid!, 19); // on Linux: the child's main thread, where SQLite runs
      } catch {
        // gone, or not permitted: it keeps its priority
      }
    },
    hold(busy) {
      for (const h of [child, child.channel, ...pipes]) {
        if (busy) h?.ref();
        else h?.unref();
      }
    },
    stop: async () => {
      if (!gone) child.kill('SIGKILL');
      await exited;
    },
  };
}

const children = new JobPool({ start: startChild, idleMs: IDLE_MS, spare: true, demoteAfterMs: DEMOTE_MS });
registerPool(children);

/** Runs a file engine job (node/jobs.ts) in a child process. */
export function runFileJob<T>(kind: string, input: unknown, opts: JobOptions): Promise<T> {
  return children.run(kind, input, opts);
}
