/**
 * Runs one command: argv only (no shell anywhere), stdin closed, a minimal environment and a home
 * and temp folder of its own (callenv.ts), started through the launcher (launcher.ts) that sets
 * its limits and priority and, per sandbox mode, confines it (Landlock) or starts it in bubblewrap;
 * a timeout that kills the whole process group (and, in bubblewrap, the PID namespace), output
 * captured per stream up to a limit, optionally into files. Only the executor (execute.ts) and the
 * sandbox probe call this.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import type { Readable } from 'node:stream';
import { bwrapArgs } from './bwrap.js';
import { commandEnvironment, openCallFolders } from './callenv.js';
import { landlockRuleset } from './landlock.js';
import { launcherArgs, launcherPerl, STATUS_FD } from './launcher.js';
import { COMMAND_NICE, COMMAND_NICE_NEAR_LIMIT, lowerCommand } from './priority.js';
import type { SandboxMode } from './sandbox.js';
import { findProgram } from './system.js';

export interface RunRequest {
  /** Absolute path of the program (resolved on the system PATH). */
  program: string;
  args: readonly string[];
  zoneRoot: string;
  readonly: boolean;
  sandbox: SandboxMode;
  /** Landlock mode: the kernel's Landlock ABI and the programs the command may execute (executables.ts). */
  landlock?: { abi: number; executables: readonly string[] };
  network: boolean;
  /** Entries inside the zone that must stay read-only under bubblewrap. */
  protect: readonly string[];
  timeoutSec: number;
  memoryMb: number;
  cpuSec: number;
  /** Largest file the command may write, in bytes (remaining quota, capped by max file size). */
  maxFileBytes: number;
  maxProcesses: number;
  /** Bytes kept per captured stream; beyond FLOOD_BYTES the command is stopped. */
  captureBytes: number;
  /** Open file descriptors for stdout/stderr (output files), instead of capturing. */
  stdoutFd?: number;
  stderrFd?: number;
  mergeStderr: boolean;
  /**
   * Asked every `everyMs` while the command runs (never twice at once); a reason returned stops the
   * whole process group (the per-call quota watch). `held` says the command was frozen during the
   * whole check. `wake` receives the runner's controls: `now` checks at once, `hold` freezes the
   * command (SIGSTOP) until a check started after the freeze has answered, `yieldCpu` lowers the
   * command's priority further (see priority.ts).
   */
  monitor?: { everyMs: number; check(held: boolean): Promise<string | undefined>; wake?(run: RunControls): void };
  /**
   * Refuse every chmod/chown-family call (seccomp, set up by the launcher): group files the caller
   * may not change are made read-only for the command (guard-group.ts), and their owner, the
   * server's user, could otherwise make them writable again. Until the launcher supports the flag
   * the runner ignores it, and the comparison after the command is what holds.
   */
  refuseChmod?: boolean;
}

export interface RunControls {
  now(): void;
  hold(): void;
  yieldCpu(): void;
}

export interface Captured {
  bytes: Buffer;
  /** Total bytes the command wrote to the stream (kept or not). */
  total: number;
}

export interface RunResult {
  returncode: number;
  signal: string | null;
  timedOut: boolean;
  /** Stopped because it kept writing output long after the limit (endless output). */
  flooded: boolean;
  stdout: Captured;
  stderr: Captured;
  durationMs: number;
  /** The monitor's reason, when it stopped the command. */
  stoppedFor?: string;
  /** The command did not run: its confinement or limits could not be applied (the launcher's reason). */
  refused?: string;
}

/** Output discarded past the limit before the command is stopped: generous, but an endless `yes` ends. */
const FLOOD_BYTES = 64 * 1024 * 1024;

export function run(req: RunRequest): Promise<RunResult> {
  const started = performance.now();
  const inside = req.sandbox === 'bwrap';
  const perl = launcherPerl();
  const bwrap = inside ? findProgram('bwrap') : undefined;
  if (perl === undefined || (inside && bwrap === undefined)) {
    return Promise.resolve(refusal(started, `${perl === undefined ? 'perl (Debian package perl-base)' : 'bwrap'} is not installed`));
  }
  if (req.sandbox === 'landlock' && req.landlock === undefined) return Promise.resolve(refusal(started, 'landlock mode without a Landlock ABI'));
  const folders = inside ? undefined : openCallFolders();
  const cwd = inside ? '/' : req.zoneRoot;
  const target = inside
    ? [bwrap!, ...bwrapArgs({ zoneRoot: req.zoneRoot, readonly: req.readonly, network: req.network, protect: req.protect }), '--', req.program, ...req.args]
    : [req.program, ...req.args];
  const ll = req.sandbox === 'landlock' ? req.landlock : undefined;
  const launch = launcherArgs({
    nice: COMMAND_NICE,
    memoryBytes: req.memoryMb * 1024 * 1024,
    cpuSec: req.cpuSec,
    fileBytes: req.maxFileBytes,
    processes: req.maxProcesses,
    // Merged capture needs one pipe for both streams; with an output file the same fd is passed twice instead.
    mergeStderr: req.mergeStderr && req.stdoutFd === undefined,
    noNewPrivs: !inside,
    ...(ll && folders
      ? { landlock: { abi: ll.abi, network: req.network, ruleset: landlockRuleset({ abi: ll.abi, zoneRoot: req.zoneRoot, readonly: req.readonly, network: req.network, home: folders.home, tmp: folders.tmp, executables: ll.executables }) } }
      : {}),
    argv: target,
  });
  const stdout = req.stdoutFd ?? 'pipe';
  const stderr = req.mergeStderr ? stdout : (req.stderrFd ?? 'pipe');

  return new Promise((resolve) => {
    const child = spawn(perl, launch, {
      cwd,
      env: commandEnvironment(cwd, folders),
      stdio: ['ignore', stdout, stderr, 'pipe'],
      detached: true, // own session and process group: the timeout kills everything it started; one scheduling group
    });
    // Raised (never lowered) by yieldCpu below; the launcher set COMMAND_NICE before the program started.
    let nice = COMMAND_NICE;
    // The launcher's status: empty when the program started (the exec closed the pipe), else why not.
    let status = '';
    const statusPipe = child.stdio[STATUS_FD] as Readable | null;
    statusPipe?.on('data', (d: Buffer) => (status += d.toString()));
    statusPipe?.on('error', () => undefined);
    // A yieldCpu while the launcher was still setting its own priority is applied again once it is done.
    statusPipe?.on('close', () => {
      if (nice !== COMMAND_NICE && !finished && child.pid !== undefined) lowerCommand(child.pid, nice);
    });
    const out = { chunks: [] as Buffer[], kept: 0, total: 0 };
    const err = { chunks: [] as Buffer[], kept: 0, total: 0 };
    let timedOut = false;
    let flooded = false;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const collect = (target: typeof out) => (chunk: Buffer) => {
      target.total += chunk.length;
      if (target.kept < req.captureBytes) {
        const piece = chunk.subarray(0, req.captureBytes - target.kept);
        target.chunks.push(piece);
        target.kept += piece.length;
      } else if (target.total > req.captureBytes + FLOOD_BYTES && !flooded) {
        flooded = true;
        killGroup();
      }
    };
    child.stdout?.on('data', collect(out));
    child.stderr?.on('data', collect(err));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, req.timeoutSec * 1000);
    let finished = false;
    let stoppedFor: string | undefined;
    let checking = false;
    const monitor = req.monitor;
    let again = false;
    // Frozen by `hold`: resumed (or killed) by the first check that started after the freeze.
    let held = false;
    const freeze = (signal: 'SIGSTOP' | 'SIGCONT') => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        // already gone
      }
    };
    const check = (): void => {
      if (finished || monitor === undefined) return;
      if (checking) {
        again = true; // one more check right after the running one
        return;
      }
      checking = true;
      again = false;
      const heldThroughout = held;
      const done = (why: string | undefined) => {
        checking = false;
        if (why !== undefined && !finished && stoppedFor === undefined) {
          stoppedFor = why;
          killGroup();
        } else if (again) check();
        else if (held && heldThroughout) {
          held = false;
          freeze('SIGCONT');
        }
      };
      monitor.check(heldThroughout).then(done, () => done(undefined));
    };
    const hold = (): void => {
      if (finished || held) return;
      held = true;
      freeze('SIGSTOP');
      check();
    };
    const watch = monitor && setInterval(check, monitor.everyMs);
    const yieldCpu = (): void => {
      if (nice === COMMAND_NICE_NEAR_LIMIT || finished || child.pid === undefined) return;
      nice = COMMAND_NICE_NEAR_LIMIT;
      lowerCommand(child.pid, nice);
    };
    monitor?.wake?.({ now: check, hold, yieldCpu });
    const finish = (code: number | null, signal: NodeJS.Signals | null, startError?: Error) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      if (watch) clearInterval(watch);
      killGroup(); // leftovers of the group (a command that forked and exited)
      folders?.remove();
      if (startError) err.chunks.push(Buffer.from(`could not start: ${startError.message}`));
      // The program itself could not be started (not found, not executable): the command failed.
      const execFailed = status.startsWith('exec ');
      if (execFailed) err.chunks.push(Buffer.from(`could not start: ${status.slice(5)}`));
      const captured = (c: typeof out): Captured => ({ bytes: Buffer.concat(c.chunks), total: Math.max(c.total, c.kept) });
      resolve({
        returncode: execFailed ? 126 : (code ?? (signal ? 128 + (os.constants.signals[signal] ?? 9) : 127)),
        signal,
        timedOut,
        flooded,
        stdout: captured(out),
        stderr: captured(err),
        durationMs: performance.now() - started,
        ...(stoppedFor !== undefined ? { stoppedFor } : {}),
        ...(status !== '' && !execFailed ? { refused: status } : {}),
      });
    };
    child.on('error', (e) => finish(null, null, e));
    child.on('close', (code, signal) => finish(code, signal));
  });
}

function refusal(started: number, why: string): RunResult {
  const empty = { bytes: Buffer.alloc(0), total: 0 };
  return { returncode: 125, signal: null, timedOut: false, flooded: false, stdout: empty, stderr: empty, durationMs: performance.now() - started, refused: why };
}
