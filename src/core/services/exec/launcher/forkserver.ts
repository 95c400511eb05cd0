/**
 * The fork server's Node side: every command starts here (through the runner), and this is the one
 * place that starts a process for it. Node's own `spawn` blocks the event loop for milliseconds per
 * call (it forks this large process), so one long-lived launcher does the forking instead
 * (launcher-script.ts): started lazily with the only `spawn` left, restarted on the next command if
 * it died, and gone when Node is (its stdin closes). Perl because perl-base is Essential on every
 * Debian and Ubuntu system and in the node:*-slim images: nothing to compile or install, and its
 * `syscall` builtin reaches Landlock, prctl, capset and prlimit64 directly.
 *
 * A request is one length-prefixed message of NUL-separated key/value pairs on the launcher's stdin;
 * its answers are lines on its stdout (see launcher-script.ts). The command's stdout and stderr are
 * pipes its supervisor makes; Node opens its own read ends through /proc/<supervisor>/fd/<n>
 * (non-blocking, read by libuv like any socket: never through the threadpool), and the control
 * pipe's write end the same way, so no descriptor has to be passed over a socket (Node cannot
 * receive one). That costs three open() calls per command, measured below 0.1 ms together; a Unix
 * socket the command connected to would add an accept and a handshake on the event loop.
 *
 * Never hangs: a command whose launcher or supervisor dies is answered at once (`lost`), and one
 * that does not end within a bound after being killed has its supervisor killed and is answered.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { KernelIdentity } from '../../ids/kernel-identity.js';
import { INNER_SCRIPT, SERVER_SCRIPT } from './launcher-script.js';
import type { ArchCalls } from './seccomp.js';
import { SYSTEM_PATH } from './system.js';

export interface LaunchSpec {
  /** `direct`: the launcher confines its own process and runs the program; `bwrap`: it runs bubblewrap, which runs the inner launcher. */
  mode: 'direct' | 'bwrap';
  /** bwrap mode: bubblewrap's path and its arguments (the launcher adds `--`, the inner launcher and the program). */
  bwrap?: readonly string[];
  /** The program (absolute path) and its arguments. */
  argv: readonly string[];
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** A pipe read here, or a descriptor of this process (an output file) the command writes to. */
  stdout: 'pipe' | number;
  /** As stdout, or `merge`: the same destination as stdout. */
  stderr: 'pipe' | number | 'merge';
  nice: number;
  /** Milliseconds it runs at the server's priority before `nice` applies (0 or absent: from its first instruction). */
  niceAfterMs?: number;
  /** [resource, value] pairs set before the program (or bubblewrap) starts (setrlimit). */
  limits: readonly (readonly [number, number])[];
  /** Processes and threads the command may run at once (see launcher-script.ts). */
  budget: number;
  /** What CONFINE applies (launcher-script.ts); bwrap mode: inside the sandbox, with its paths. */
  confine: {
    landlock?: { abi: number; fs: number; net: number; scoped: number; rules: readonly (readonly [number, string])[] };
    /** The seccomp filter as hex (seccomp.ts). */
    bpf: string;
    /** bwrap mode: a tmpfs mounted at the first word with the mount options after it. */
    tmpfs?: string;
    mkdir?: readonly string[];
    /** bwrap mode: mounts (and every mount below them) set noexec, nosuid, nodev. */
    noexec?: readonly string[];
  };
  /**
   * The call's folder (0700, with home/ and tmp/ in it): made by the supervisor, or taken over from an
   * earlier call (`reused`) if it is still exactly so; after the command, removed, or kept when it is
   * (LaunchEnd.kept).
   */
  folders?: { root: string; reused: boolean };
  /** A folder the supervisor measures while the command runs: stopped past `bytes` (apparent size) or `entries`. */
  watch?: { path: string; bytes: number; entries: number };
  /** A file the confined process writes (created, never replaced) just before the program starts: a script's code. */
  file?: { path: string; content: string };
  /** Anonymous memory the command's processes may hold together (bytes), checked by its supervisor. */
  memory?: number;
  /**
   * The caller's kernel identity: the command's process takes it (every uid and gid, exactly these
   * supplementary groups) before it is confined, and bubblewrap runs as it (see `become` in
   * launcher/confine.pl). Absent: the server's own ids, as before.
   */
  identity?: KernelIdentity;
}

export type { KernelIdentity };

export interface LaunchEnd {
  /** Exit code, or -1 when it did not exit by itself. */
  code: number;
  /** Number of the signal that ended it, or 0. */
  signal: number;
  /** CPU time and peak memory of all its processes. */
  userMs: number;
  systemMs: number;
  maxRssKb: number;
  /** The supervisor stopped it: its call folders passed their cap, it ran more tasks than its budget, its processes held more memory than theirs, or the launcher went away. */
  stoppedFor?: 'call_folders' | 'processes' | 'memory' | 'launcher';
  /** What the status pipe said (see launcher-script.ts), or why the launcher could not start it. */
  status: string;
  /** The launcher or the call's supervisor died: the command was killed (or never started). */
  lost?: string;
  /** The call's folders are in place and empty, for another call. */
  kept?: boolean;
}

export interface LaunchEvents {
  /** The command's process exists; its captured streams (absent where they go to files). */
  started(streams: { stdout?: net.Socket; stderr?: net.Socket }): void;
  /** Every process of the command is stopped (after `stop`). */
  held(): void;
  /** It ended and every process it started is gone; called once. */
  ended(end: LaunchEnd): void;
}

export interface Launched {
  /** SIGKILL to every process of the command. */
  kill(): void;
  /** SIGSTOP to every process; `held` follows. */
  stop(): void;
  /** SIGCONT to every process. */
  cont(): void;
  /** Lowers the priority of every process (never raises it). */
  nice(value: number): void;
}

/** After a kill, how long the supervisor may take before it is killed itself and the call answered. */
const KILL_GRACE_MS = 15_000;

interface Call {
  events: LaunchEvents;
  supervisor?: number;
  /** Write end of the supervisor's control pipe, once open. */
  ctl?: number;
  /** Orders given before the command started. */
  queued: string[];
  watchdog?: NodeJS.Timeout;
  /** Answered: no order goes out any more (its control descriptor is closed, its number may be reused). */
  done?: boolean;
}

interface Server {
  child: ChildProcess;
  calls: Map<number, Call>;
  pending: string;
  /** /proc/<launcher>/stat held open (that process's, never a later one's with its pid): read once per command. */
  stat?: number;
}

let server: Server | undefined;
let nextId = 1;

/**
 * The launcher's header: the system call numbers it uses, the perl that runs the inner launcher, and
 * this process's call folders (where and by what name: the launcher removes them once it is gone).
 */
function header(perl: string, arch: ArchCalls): string {
  const names = ['prctl', 'prlimit64', 'capget', 'capset', 'mount', 'mount_setattr', 'pidfd_open', 'getrusage', 'clock_gettime', 'close_range', 'setgroups', 'setresgid', 'setresuid', 'getresuid', 'getresgid', 'getgroups', 'setfsuid', 'setfsgid', 'openat', 'close'] as const;
  const folders = Buffer.from(path.join(os.tmpdir(), `shed-call-${process.pid}-`)).toString('hex');
  return [...names.map((n) => `nr.${n}=${arch.nr[n] ?? -1}`), `perl=${perl}`, `folders=${folders}`].join(' ');
}

function startServer(perl: string, arch: ArchCalls): Server {
  const child = spawn(perl, ['-e', SERVER_SCRIPT, '--', header(perl, arch), INNER_SCRIPT], {
    cwd: '/',
    env: { PATH: SYSTEM_PATH, LC_ALL: 'C' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const s: Server = { child, calls: new Map(), pending: '' };
  child.unref();
  child.stdin!.on('error', () => undefined);
  (child.stdin as net.Socket).unref();
  (child.stdout as net.Socket).unref();
  child.stdout!.setEncoding('latin1');
  child.stdout!.on('data', (chunk: string) => {
    s.pending += chunk;
    let nl: number;
    while ((nl = s.pending.indexOf('\n')) >= 0) {
      const line = s.pending.slice(0, nl);
      s.pending = s.pending.slice(nl + 1);
      answer(s, line);
    }
  });
  // Its supervisors outlive it by a moment (they kill their commands, then answer through the same
  // pipe): what is still open once the pipe has ended, or after a bound, is answered here.
  const died = () => {
    if (server === s) server = undefined;
    if (s.stat !== undefined) fs.close(s.stat, () => undefined);
    s.stat = undefined;
    const answerAll = () => {
      for (const [id, call] of s.calls) end(s, id, call, lostEnd(call.supervisor === undefined ? 'the command launcher stopped before the command started' : 'the command launcher stopped while the command ran; the command was killed'));
    };
    child.stdout!.once('end', answerAll);
    setTimeout(answerAll, 2000);
  };
  child.once('exit', died);
  child.once('error', died);
  return s;
}

/** The command was killed because its launcher or supervisor died (or was never started). */
function lostEnd(why: string): LaunchEnd {
  return { ...refusedEnd(''), stoppedFor: 'launcher', lost: why };
}

/** The command never started: `status` says why. */
function refusedEnd(status: string): LaunchEnd {
  return { code: -1, signal: 0, userMs: 0, systemMs: 0, maxRssKb: 0, status };
}

function end(s: Server, id: number, call: Call, result: LaunchEnd): void {
  if (!s.calls.delete(id)) return;
  call.done = true;
  if (call.watchdog) clearTimeout(call.watchdog);
  if (call.ctl !== undefined) fs.close(call.ctl, () => undefined); // the supervisor sees EOF: it kills what is left
  call.ctl = undefined;
  if (s.calls.size === 0) (s.child.stdout as net.Socket).unref();
  call.events.ended(result);
}

const unhex = (h: string | undefined) => (h === undefined || h === '-' ? '' : Buffer.from(h, 'hex').toString());

function answer(s: Server, line: string): void {
  const [kind, idText, ...f] = line.split(' ');
  const id = Number(idText);
  const call = s.calls.get(id);
  if (call === undefined) return;
  if (kind === 'S') opened(s, id, call, f);
  else if (kind === 'H') call.events.held();
  else if (kind === 'E') {
    const [code, signal, userUs, systemUs, rss, why, kept, status] = f;
    end(s, id, call, {
      code: Number(code), signal: Number(signal), userMs: Number(userUs) / 1000, systemMs: Number(systemUs) / 1000, maxRssKb: Number(rss),
      ...(why === 'call_folders' || why === 'processes' || why === 'memory' || why === 'launcher' ? { stoppedFor: why } : {}),
      ...(kept === '1' ? { kept: true } : {}),
      status: unhex(status),
    });
  } else if (kind === 'D') end(s, id, call, lostEnd('the supervisor of the command ended unexpectedly; the command was killed'));
  else if (kind === 'F') end(s, id, call, refusedEnd(unhex(f[0])));
}

/** The command started: open our ends of its pipes, then tell its supervisor (O) and pass on what was ordered meanwhile. */
function opened(s: Server, id: number, call: Call, [sup, out, err, ctl]: string[]): void {
  call.supervisor = Number(sup);
  const proc = `/proc/${sup}/fd/`;
  const streams: { stdout?: net.Socket; stderr?: net.Socket } = {};
  try {
    call.ctl = fs.openSync(proc + ctl, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
    const reader = (fd: string | undefined) => (fd === undefined || fd === '-' ? undefined : new net.Socket({ fd: fs.openSync(proc + fd, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK), readable: true, writable: false }));
    const stdout = reader(out);
    const stderr = reader(err);
    if (stdout) streams.stdout = stdout;
    if (stderr) streams.stderr = stderr;
  } catch (e) {
    streams.stdout?.destroy();
    streams.stderr?.destroy();
    // A supervisor already gone (its launcher died and this process read its start late, a loaded
    // machine): its own answer, or the launcher's end, follows and answers the call.
    if (exited(call.supervisor)) return;
    // Its output cannot be read here (a /proc that hides the launcher's descriptors): the supervisor
    // is told to go, and takes the command with it.
    signal(call.supervisor, 'SIGTERM');
    end(s, id, call, { ...refusedEnd(''), lost: `its output pipes could not be opened (${(e as Error).message})` });
    return;
  }
  send(call, 'O', ...call.queued.splice(0));
  call.events.started(streams);
}

/** The process exited (reaped, or a zombie whose descriptors are closed). */
function exited(pid: number): boolean {
  try {
    return ended(fs.readFileSync(`/proc/${pid}/stat`, 'latin1'));
  } catch {
    return true;
  }
}

const statBuffer = Buffer.alloc(512);

/** The launcher died an instant ago (its exit not yet heard here): one read of its stat file. */
function launcherExited(s: Server): boolean {
  if (s.child.exitCode !== null || s.child.signalCode !== null) return true;
  try {
    s.stat ??= fs.openSync(`/proc/${s.child.pid}/stat`, fs.constants.O_RDONLY);
    return ended(statBuffer.toString('latin1', 0, fs.readSync(s.stat, statBuffer, 0, statBuffer.length, 0)));
  } catch {
    return true; // reaped: its stat file answers ESRCH
  }
}

/** A /proc/<pid>/stat line says the process is a zombie or dead. */
function ended(stat: string): boolean {
  const state = stat[stat.lastIndexOf(')') + 2];
  return state === 'Z' || state === 'X';
}

function signal(pid: number | undefined, name: NodeJS.Signals): void {
  try {
    if (pid !== undefined) process.kill(pid, name);
  } catch {
    // already gone
  }
}

function send(call: Call, ...orders: string[]): void {
  if (call.done) return;
  if (call.ctl === undefined) {
    call.queued.push(...orders);
    return;
  }
  try {
    fs.writeSync(call.ctl, orders.map((o) => `${o}\n`).join(''));
  } catch {
    // the supervisor is gone: its E or D answers the call
  }
}

/** One request: key/value pairs, NUL-separated, behind its byte length. Lists repeat their key. */
function encode(id: number, spec: LaunchSpec): Buffer | undefined {
  const f: string[] = [];
  const put = (key: string, ...values: (string | number)[]) => values.forEach((v) => f.push(key, String(v)));
  const fd = (v: 'pipe' | 'merge' | number) => (typeof v === 'number' ? `fd:${v}` : v);
  // These first: the launcher reads them without parsing the rest.
  put('id', id);
  put('mode', spec.mode);
  put('budget', spec.budget);
  if (spec.identity) {
    put('uid', spec.identity.uid);
    put('gid', spec.identity.gid);
    put('groups', ...spec.identity.groups);
  }
  put('cwd', spec.cwd);
  put('stdout', fd(spec.stdout));
  put('stderr', fd(spec.stderr));
  put('nice', spec.nice);
  if (spec.niceAfterMs) put('nice_after', spec.niceAfterMs);
  put('argv', ...spec.argv);
  if (spec.bwrap) put('bwrap', ...spec.bwrap);
  put('env', ...Object.entries(spec.env).map(([k, v]) => `${k}=${v}`));
  put('limit', ...spec.limits.map(([res, value]) => `${res} ${value}`));
  const c = spec.confine;
  if (c.landlock) {
    put('abi', c.landlock.abi);
    put('fs', c.landlock.fs);
    put('net', c.landlock.net);
    put('scoped', c.landlock.scoped);
    put('rule', ...c.landlock.rules.map(([rights, p]) => `${rights} ${p}`));
  }
  if (c.bpf !== '') put('bpf', c.bpf);
  if (c.tmpfs !== undefined) put('tmpfs', c.tmpfs);
  put('mkdir', ...(c.mkdir ?? []));
  put('noexec', ...(c.noexec ?? []));
  if (spec.folders !== undefined) put('folders', `${spec.folders.reused ? 1 : 0} ${spec.folders.root}`);
  if (spec.watch) put('watch', `${spec.watch.bytes} ${spec.watch.entries} ${spec.watch.path}`);
  if (spec.file) {
    put('file', spec.file.path);
    // In pieces: in bwrap mode each travels as one argument of the inner launcher (at most 128 KiB each).
    put('filedata', ...pieces(spec.file.content));
  }
  if (spec.memory !== undefined) put('memory', spec.memory);
  if (f.some((x) => x.includes('\0'))) return undefined;
  const payload = Buffer.from(f.join('\0'));
  return Buffer.concat([Buffer.from(`${payload.length}\n`), payload]);
}

/** `text` cut into pieces of at most 32,768 UTF-16 units (under 128 KiB of UTF-8 each), never inside a surrogate pair. */
function pieces(text: string): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; ) {
    let end = Math.min(text.length, at + 32_768);
    if (end < text.length && /[\ud800-\udbff]/.test(text[end - 1]!)) end--;
    out.push(text.slice(at, end));
    at = end;
  }
  return out.length > 0 ? out : [''];
}

/**
 * Starts a command. `perl` and `arch` describe this system (they start the launcher the first
 * time). Every outcome arrives through `events.ended`, exactly once.
 */
export function launch(perl: string, arch: ArchCalls, spec: LaunchSpec, events: LaunchEvents): Launched {
  // A launcher that died an instant ago (its exit not yet heard here) is sent nothing more.
  if (server !== undefined && launcherExited(server)) server = undefined;
  const s = (server ??= startServer(perl, arch));
  const id = nextId++;
  const call: Call = { events, queued: [] };
  const message = encode(id, spec);
  s.calls.set(id, call);
  if (message === undefined) {
    end(s, id, call, refusedEnd('an argument or variable holds a NUL byte'));
  } else {
    (s.child.stdout as net.Socket).ref();
    s.child.stdin!.write(message);
  }
  return {
    kill() {
      if (!s.calls.has(id)) return;
      send(call, 'K');
      call.watchdog ??= setTimeout(() => {
        // The supervisor did not answer: kill it (its command dies with it) and answer the call.
        signal(call.supervisor, 'SIGKILL');
        end(s, id, call, lostEnd('the command did not end after it was killed'));
      }, KILL_GRACE_MS);
    },
    stop: () => send(call, 'S'),
    cont: () => send(call, 'C'),
    nice: (value) => send(call, `N${value}`),
  };
}

/** Commands this process has started and not yet heard end. */
export function commandsRunning(): number {
  return server?.calls.size ?? 0;
}

/** The launcher's process id, if it runs (for tests that kill it). */
export function launcherPid(): number | undefined {
  return server?.child.pid;
}
