/**
 * The kernel made slow on purpose: strace attaches to this test process (every thread), delays the
 * system calls named, and logs them with the thread that made it. A step that runs on the event loop
 * then shows as a gap of the delay on the clock and as a call from the main thread (tid = pid) in
 * the log; on the thread pool, as a call from another thread, while the loop keeps answering.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findProgram } from '../../src/core/services/exec/launcher/system.js';

const strace = findProgram('strace');
/** A child may trace its parent as root, or where Yama does not restrict ptrace to descendants. */
const mayTraceParent = (() => {
  if (process.getuid?.() === 0) return true;
  try {
    return fs.readFileSync('/proc/sys/kernel/yama/ptrace_scope', 'utf8').trim() === '0';
  } catch {
    return true;
  }
})();
export const traceable = strace !== undefined && mayTraceParent;

/** One logged system call: the thread that made it, and the call as strace prints it. */
export type Traced = [tid: number, call: string];

let tracer: { child: ChildProcess; log: string } | undefined;

/** How many threads of this process a tracer is attached to. */
function tracedThreads(): number {
  return fs.readdirSync('/proc/self/task').filter((t) => /TracerPid:\s+[1-9]/.test(fs.readFileSync(`/proc/self/task/${t}/status`, 'utf8'))).length;
}

/**
 * From now on the calls of `logged` are logged (descriptors shown with their paths), and each of
 * `delayed` returns `delayMs` late, in every thread of this process. Resolves once every thread is traced.
 */
export async function slowKernel(logged: string[], delayed: string[], delayMs: number): Promise<void> {
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-strace-')), 'log');
  const inject = delayed.map((call) => ['-e', `inject=${call}:delay_exit=${delayMs * 1000}`]).flat();
  const args = ['-f', '-qq', '-y', '-o', log, '-e', `trace=${logged.join(',')}`, ...inject, '-p', String(process.pid)];
  tracer = { child: spawn(strace!, args, { stdio: 'ignore' }), log };
  const until = Date.now() + 10_000;
  while (tracedThreads() < fs.readdirSync('/proc/self/task').length) {
    if (Date.now() > until) throw new Error('strace did not attach to every thread of the test process');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Detaches the tracer (nothing when none is attached); returns the calls it logged. */
export async function stopTracing(): Promise<Traced[]> {
  if (!tracer) return [];
  const { child, log } = tracer;
  tracer = undefined;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill();
  await exited;
  const lines = fs.readFileSync(log, 'utf8').split('\n').filter((l) => /^\d+ +[a-z_0-9]+\(/.test(l));
  fs.rmSync(path.dirname(log), { recursive: true, force: true });
  return lines.map((l) => [Number(l.split(' ')[0]), l.replace(/^\d+ +/, '')]);
}
