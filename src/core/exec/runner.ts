/**
 * The one executor: every command of shed_exec (and later shed_lockedit_exec) runs here.
 * argv only (the shell below runs our fixed limit script, never user text), stdin closed, a
 * minimal environment, resource limits, a timeout that kills the whole process group (and, in
 * bubblewrap, the PID namespace), output captured per stream up to a limit, optionally into files.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { COMMAND_NICE, COMMAND_NICE_NEAR_LIMIT, lowerCommand, lowerSession, releaseSandbox, SANDBOX_PRIORITY_ARGS } from './priority.js';
import { bwrapArgs, SANDBOX_ZONE, SYSTEM_PATH } from './sandbox.js';

export interface RunRequest {
  /** Absolute path of the program (resolved on the system PATH). */
  program: string;
  args: readonly string[];
  zoneRoot: string;
  readonly: boolean;
  sandbox: 'bwrap' | 'validated';
  network: boolean;
  /** Folders inside the zone that must stay read-only (.git of versioned zones). */
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
  /** Blocked files and folders (zone-relative) the sandbox hides (valve blocked_patterns). */
  mask?: { files: readonly string[]; dirs: readonly string[] } | undefined;
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
}

/** Output discarded past the limit before the command is stopped: generous, but an endless `yes` ends. */
const FLOOD_BYTES = 64 * 1024 * 1024;

function limitScript(req: RunRequest): string {
  const parts: string[] = [];
  if (req.memoryMb > 0) parts.push(`ulimit -v ${req.memoryMb * 1024}`);
  if (req.cpuSec > 0) parts.push(`ulimit -t ${req.cpuSec}`);
  parts.push(`ulimit -f ${Math.floor(req.maxFileBytes / 512)}`); // dash counts 512-byte blocks
  parts.push(`ulimit -p ${req.maxProcesses}`); // dash's name for RLIMIT_NPROC
  parts.push('ulimit -c 0');
  // dash exports the working folder as PWD (the zone's server path without the sandbox): not passed on.
  parts.push('unset PWD OLDPWD');
  // Merged capture needs one pipe for both streams; with an output file the same fd is passed twice instead.
  if (req.mergeStderr && req.stdoutFd === undefined) parts.unshift('exec 2>&1');
  // Joined with && so a limit that cannot be set stops the command instead of running it unlimited.
  return `${parts.join(' && ')} && exec "$0" "$@"`;
}

let sharedTmp: string | undefined;

/**
 * TMPDIR for commands without the sandbox: one private (0700) folder per server process, made on
 * first use. A folder per call cost more than the command itself (mkdtemp + rm on a busy /tmp);
 * commands cannot name it anyway (absolute paths are refused), they only find it through TMPDIR.
 */
function privateTmp(): string {
  if (sharedTmp === undefined || !fs.existsSync(sharedTmp)) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-exec-'));
    fs.chmodSync(dir, 0o700);
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    sharedTmp = dir;
  }
  return sharedTmp;
}

export function run(req: RunRequest): Promise<RunResult> {
  const started = performance.now();
  const inside = req.sandbox === 'bwrap';
  // Without the sandbox no variable may hold an absolute server path (a command can print its
  // environment encoded, past the output scrubber): HOME is the working folder itself, ".", and
  // TMPDIR the private temp folder reached relatively from it.
  const tmp = inside ? '/tmp' : path.relative(req.zoneRoot, privateTmp()) || '.';
  const home = inside ? SANDBOX_ZONE : '.';
  // HOME is the zone, where the user can put dotfiles: LESSSECURE and the empty lesskey files keep less
  // from taking an input preprocessor (a shell command) from ~/.lesskey.
  const env = {
    PATH: SYSTEM_PATH, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', HOME: home, TMPDIR: tmp, TERM: 'dumb', PAGER: 'cat', GIT_PAGER: 'cat',
    LESSSECURE: '1', LESSKEYIN: '/dev/null', LESSKEY: '/dev/null', LESSHISTFILE: '-',
  };
  const shellArgs = ['-c', limitScript(req), req.program, ...req.args];
  const [file, argv] = inside
    ? ['bwrap', [...bwrapArgs({ zoneRoot: req.zoneRoot, readonly: req.readonly, network: req.network, protect: req.protect, mask: req.mask }), ...SANDBOX_PRIORITY_ARGS, '--', '/bin/sh', ...shellArgs]]
    : ['/bin/sh', shellArgs];
  const stdout = req.stdoutFd ?? 'pipe';
  const stderr = req.mergeStderr ? stdout : (req.stderrFd ?? 'pipe');

  return new Promise((resolve) => {
    const child = spawn(file, argv, {
      cwd: inside ? '/' : req.zoneRoot,
      env,
      stdio: inside ? ['ignore', stdout, stderr, 'pipe', 'pipe'] : ['ignore', stdout, stderr],
      detached: true, // own session and process group: the timeout kills everything it started; one scheduling group
    });
    // Raised (never lowered) by yieldCpu below.
    let nice = COMMAND_NICE;
    if (child.pid !== undefined) lowerSession(child.pid, nice);
    if (inside) releaseSandbox(child, () => nice);
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
      if (startError) err.chunks.push(Buffer.from(`could not start: ${startError.message}`));
      const captured = (c: typeof out): Captured => ({ bytes: Buffer.concat(c.chunks), total: Math.max(c.total, c.kept) });
      resolve({
        returncode: code ?? (signal ? 128 + (os.constants.signals[signal] ?? 9) : 127),
        signal,
        timedOut,
        flooded,
        stdout: captured(out),
        stderr: captured(err),
        durationMs: performance.now() - started,
        ...(stoppedFor !== undefined ? { stoppedFor } : {}),
      });
    };
    child.on('error', (e) => finish(null, null, e));
    child.on('close', (code, signal) => finish(code, signal));
  });
}
