/**
 * Runs one command: argv only (no shell anywhere), stdin closed, a minimal environment and a home
 * and temp folder of its own (callenv.ts), started by the long-lived launcher (forkserver.ts) with
 * its limits, priority and confinement (launcher.ts); a timeout, a flood of output or the monitor
 * kills every process it started (daemons included: its supervisor is their subreaper), output is
 * captured per stream up to a limit, optionally into files. Only the executor (execute.ts) and the
 * sandbox probe call this.
 */
import os from 'node:os';
import type net from 'node:net';
import { callFolders, releaseCallFolders } from './callenv.js';
import { commandsRunning, launch, type LaunchEnd, type Launched } from './forkserver.js';
import { archCalls, launcherPerl, launchSpec } from './launcher.js';
import { COMMAND_NICE_NEAR_LIMIT, niceAfterMs } from './priority.js';
import type { Captured, RunRequest, RunResult } from './run-types.js';
import { findProgram } from './system.js';

/** Output discarded past the limit before the command is stopped: generous, but an endless `yes` ends. */
const FLOOD_BYTES = 64 * 1024 * 1024;
/** After the command ended (every process of it is gone), how long its output may take to drain. */
const DRAIN_MS = 5000;
/**
 * The monitor's measurements of a running command take at most 1/MEASURE_SHARE of the time: after
 * one, the next waits (MEASURE_SHARE - 1) times as long as it took. A measurement reads again every
 * folder that changed, so without this a command filling one folder with 10,000 files kept the
 * server measuring back to back (seconds of CPU, O(files²)). Quota bytes do not depend on it: every event
 * raises a bound that holds the command before it can pass the quota (callwatch.ts), and a held
 * command is measured at once.
 */
const MEASURE_SHARE = 4;

const SIGNAL_NAMES = new Map(Object.entries(os.constants.signals).map(([name, n]) => [n, name as NodeJS.Signals]));

export function run(req: RunRequest): Promise<RunResult> {
  const started = performance.now();
  const inside = req.sandbox === 'bwrap';
  const perl = launcherPerl();
  const bwrap = inside ? findProgram('bwrap') : undefined;
  const arch = archCalls();
  if (perl === undefined || (inside && bwrap === undefined)) {
    return Promise.resolve(refusal(started, `${perl === undefined ? 'perl (Debian package perl-base)' : 'bwrap'} is not installed`));
  }
  if (arch === undefined) return Promise.resolve(refusal(started, `commands cannot be confined on this processor architecture (${process.arch})`));
  if (req.sandbox !== 'validated' && req.landlock === undefined) return Promise.resolve(refusal(started, `${req.sandbox} mode without a Landlock ABI`));
  const folders = inside ? undefined : callFolders();
  const spec = launchSpec(req, arch, folders, bwrap);

  return new Promise((resolve) => {
    const out = { chunks: [] as Buffer[], kept: 0, total: 0 };
    const err = { chunks: [] as Buffer[], kept: 0, total: 0 };
    let timedOut = false;
    let flooded = false;
    let finished = false;
    let ended: LaunchEnd | undefined;
    let streams: net.Socket[] = [];
    let drain: NodeJS.Timeout | undefined;
    let stoppedFor: string | undefined;
    const monitor = req.monitor;
    let checking = false;
    let again = false;
    /** No measurement of a running command before this time; one asked earlier waits on `deferred`. */
    let notBefore = 0;
    let deferred: NodeJS.Timeout | undefined;
    // `hold` asked for a freeze that the supervisor has not confirmed yet; `held`: every process is stopped.
    let holding = false;
    let held = false;
    let yielded = false;
    let timer: NodeJS.Timeout | undefined;
    let watch: NodeJS.Timeout | undefined;
    let command: Launched | undefined;

    const collect = (target: typeof out) => (chunk: Buffer) => {
      target.total += chunk.length;
      if (target.kept < req.captureBytes) {
        const piece = chunk.subarray(0, req.captureBytes - target.kept);
        target.chunks.push(piece);
        target.kept += piece.length;
      } else if (target.total > req.captureBytes + FLOOD_BYTES && !flooded) {
        flooded = true;
        command!.kill();
      }
    };
    const check = (): void => {
      if (finished || ended || monitor === undefined) return;
      if (checking) {
        again = true; // one more check right after the running one
        return;
      }
      // A running command is measured at most a share of the time (MEASURE_SHARE); a held one waits on this measurement.
      const wait = notBefore - performance.now();
      if (wait > 0 && !held) {
        deferred ??= setTimeout(() => {
          deferred = undefined;
          check();
        }, wait);
        return;
      }
      checking = true;
      again = false;
      const heldThroughout = held;
      const began = performance.now();
      const done = (why: string | undefined) => {
        checking = false;
        const now = performance.now();
        notBefore = now + (now - began) * (MEASURE_SHARE - 1);
        if (why !== undefined && !finished && stoppedFor === undefined) {
          stoppedFor = why;
          command!.kill();
        } else if (again) check();
        else if (held && heldThroughout) {
          held = false;
          command!.cont();
        }
      };
      monitor.check(heldThroughout).then(done, () => done(undefined));
    };

    // The controls exist before the command does: a yield asked at once applies from its first instruction.
    monitor?.wake?.({
      now: check,
      hold: () => {
        if (finished || ended || held || holding) return;
        holding = true;
        command?.stop();
      },
      yieldCpu: () => {
        if (yielded || finished || ended) return;
        yielded = true;
        if (command) command.nice(COMMAND_NICE_NEAR_LIMIT);
        else spec.nice = COMMAND_NICE_NEAR_LIMIT;
      },
    });
    // A while at the server's priority first, unless it yields from the start (near the quota) or
    // the commands already running fill the processors (priority.ts).
    if (!yielded) spec.niceAfterMs = niceAfterMs(commandsRunning(), os.availableParallelism());
    command = launch(perl, arch, spec, {
      started(s) {
        if (s.stdout) s.stdout.on('data', collect(out));
        if (s.stderr) s.stderr.on('data', collect(err));
        streams = [s.stdout, s.stderr].filter((x): x is net.Socket => x !== undefined);
        for (const stream of streams) {
          stream.on('error', () => undefined);
          stream.on('close', () => finish());
        }
      },
      held() {
        holding = false;
        held = true;
        check();
      },
      ended(e) {
        ended = e;
        if (folders) releaseCallFolders(folders, e.kept === true);
        clearTimeout(timer);
        clearTimeout(deferred);
        if (watch) clearInterval(watch);
        // Every process of the command is gone, so its pipes end; a bound all the same.
        drain = setTimeout(() => streams.forEach((s) => s.destroy()), DRAIN_MS);
        finish();
      },
    });
    if (ended !== undefined) return; // refused before it was sent
    if (holding) command.stop();
    timer = setTimeout(() => {
      timedOut = true;
      command!.kill();
    }, req.timeoutSec * 1000);
    if (monitor) watch = setInterval(check, monitor.everyMs);

    function finish(): void {
      if (finished || ended === undefined || streams.some((s) => !s.closed)) return;
      finished = true;
      clearTimeout(drain);
      const e = ended;
      const { refused, execFailed } = readStatus(e, inside, err, timedOut || flooded || stoppedFor !== undefined);
      const why = stoppedFor ?? e.stoppedFor;
      const lost = e.lost ?? (why === 'launcher' ? 'the command launcher stopped while the command ran; the command was killed' : undefined);
      if (lost !== undefined) err.chunks.push(Buffer.from(`\nfileshed: ${lost}.\n`));
      if (why === 'processes') err.chunks.push(Buffer.from(`\nfileshed: stopped: the command ran more than ${req.maxProcesses} processes and threads at once.\n`));
      if (why === 'memory') err.chunks.push(Buffer.from(`\nfileshed: stopped: the command's processes held more than ${Math.round(req.memoryTotalBytes! / 1048576)} MiB of memory together.\n`));
      if (why === 'call_folders') err.chunks.push(Buffer.from(`\nfileshed: stopped: the command's temporary files (HOME, TMPDIR) passed ${Math.round((req.callFolderBytes ?? spec.watch!.bytes) / 1048576)} MiB or ${spec.watch!.entries} entries.\n`));
      if (execFailed !== undefined) err.chunks.push(Buffer.from(`could not start: ${execFailed}`));
      const captured = (c: typeof out): Captured => ({ bytes: Buffer.concat(c.chunks), total: Math.max(c.total, c.kept) });
      const signal = e.signal > 0 ? (SIGNAL_NAMES.get(e.signal) ?? 'SIGKILL') : e.lost !== undefined ? 'SIGKILL' : null;
      resolve({
        returncode: execFailed !== undefined ? 126 : e.code >= 0 ? e.code : signal ? 128 + (os.constants.signals[signal] ?? 9) : 125,
        signal,
        timedOut,
        flooded,
        stdout: captured(out),
        stderr: captured(err),
        durationMs: performance.now() - started,
        ...(why !== undefined ? { stoppedFor: why } : {}),
        ...(refused !== undefined ? { refused } : {}),
        ...(refused === undefined && e.lost === undefined ? { usage: { userMs: e.userMs, systemMs: e.systemMs, maxRssKb: e.maxRssKb } } : {}),
        ...(folders ? { callFolders: { home: folders.home, tmp: folders.tmp } } : {}),
      });
    }
  });
}

/**
 * The status pipe (launcher-script.ts): `ok` once confined, then `exec ...` if the program could not
 * be started; any other line says why the command was refused. No `ok` at all, and not stopped by
 * the runner: the program never started (bubblewrap failed: its own message is on stderr).
 */
function readStatus(e: LaunchEnd, inside: boolean, err: { chunks: Buffer[] }, stopped: boolean): { refused?: string; execFailed?: string } {
  if (e.lost !== undefined) return {};
  const lines = e.status.split('\n').filter((l) => l !== '');
  const exec = lines.find((l) => l.startsWith('exec '));
  if (exec !== undefined) return { execFailed: exec.slice(5) };
  const reason = lines.find((l) => l !== 'ok');
  if (reason !== undefined) return { refused: reason };
  // Stopped (timeout, flood, quota) before it started: not a refusal.
  if (lines.includes('ok') || stopped) return {};
  const said = Buffer.concat(err.chunks).toString().trim().split('\n')[0];
  return { refused: inside ? `bubblewrap did not start the sandbox${said ? `: ${said}` : ` (exit ${e.code})`}` : 'the launcher ended before the program started' };
}

function refusal(started: number, why: string): RunResult {
  const empty = { bytes: Buffer.alloc(0), total: 0 };
  return { returncode: 125, signal: null, timedOut: false, flooded: false, stdout: empty, stderr: empty, durationMs: performance.now() - started, refused: why };
}
