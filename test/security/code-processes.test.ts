/**
 * Issue 31, classes 2 and 4, as scripts (shed_run_python, shed_run_shell) in both kernel modes:
 * nothing a call makes outlives it (System V shared memory, semaphores, message queues, POSIX shared
 * memory and message queues), and nothing reaches another process of the server's uid (limits,
 * priority, scheduling of the server, the launcher, another call's command). The script's own
 * limits still change, and numpy and pandas (which ask their own CPU affinity) still import.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { launcherPid } from '../../src/core/services/exec/launcher/forkserver.js';
import { makeShed } from '../helpers/shed.js';
import { makeArena, SECRET, type Arena } from './exec-harness.js';

const KERNEL_MODES = ['bwrap', 'landlock'] as const;
const ON = { allow_python: true, allow_shell: true };

beforeAll(() => {
  process.env.FILESHED_TEST_SECRET = SECRET;
});
afterAll(() => {
  delete process.env.FILESHED_TEST_SECRET;
});

/** The System V objects of the host's IPC namespace (the one landlock-mode commands share with us). */
function sysvObjects(): string[] {
  return ['shm', 'sem', 'msg'].flatMap((kind) => fs.readFileSync(`/proc/sysvipc/${kind}`, 'utf8').trim().split('\n').slice(1).map((l) => `${kind} ${l.trim()}`));
}
const devShm = () => fs.readdirSync('/dev/shm').sort();
/** Removes the POSIX message queue `name` if it exists (no mqueue mount here to list): true if it did. */
const mqueueLeft = (name: string) =>
  execFileSync('python3', ['-c', `import ctypes, sys; rt = ctypes.CDLL("librt.so.1"); print(rt.mq_unlink(b"${name}") == 0)`], { encoding: 'utf8' }).trim() === 'True';

/** Python processes whose command line holds `marker`. */
function withMarker(marker: string): number[] {
  const out: number[] = [];
  for (const pid of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const python = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').startsWith('python');
      if (python && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) out.push(Number(pid));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}
const limitsOf = (pid: number) => fs.readFileSync(`/proc/${pid}/limits`, 'utf8');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(KERNEL_MODES)('%s mode', (mode) => {
  let a: Arena | undefined;
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    a?.finish();
    a = undefined;
    for (const c of cleanups.splice(0)) c();
  });

  const py = (code: string, extra: Record<string, unknown> = {}) => a!.call('shed_run_python', { zone: 'storage', code, timeout: 60, ...extra });
  const sh = (script: string) => a!.call('shed_run_shell', { zone: 'storage', script, timeout: 60 });
  const out = (r: { success: boolean; data?: Record<string, unknown>; error?: unknown }) => {
    expect(r.success, JSON.stringify(r.error ?? r.data)).toBe(true);
    return `${String(r.data!.stdout)}${String(r.data!.stderr)}`;
  };

  it('System V shared memory of 256 MiB, semaphores, message queues, POSIX shm and mq: refused, nothing left after the call', async () => {
    a = makeArena(mode, ON);
    const before = { sysv: sysvObjects(), shm: devShm() };
    const code = [
      'import ctypes, os',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'def report(what, r):',
      '    print(("ESCAPED " if r >= 0 else "refused ") + what, r, os.strerror(ctypes.get_errno()))',
      'report("shmget", libc.shmget(0, 256 << 20, 0o1600))',
      'report("shmget-key", libc.shmget(0x5eed, 1 << 20, 0o1600))',
      'report("semget", libc.semget(0, 1, 0o1600))',
      'report("msgget", libc.msgget(0, 0o1600))',
      'rt = ctypes.CDLL("librt.so.1", use_errno=True)',
      'report("mq_open", rt.mq_open(b"/shed-leftover", os.O_CREAT | os.O_RDWR, 0o600, None))',
      'from multiprocessing import shared_memory',
      'try:',
      '    m = shared_memory.SharedMemory(name="shed-leftover", create=True, size=256 << 20)',
      '    print("ESCAPED posix shm", m.name)',
      'except OSError as e:',
      '    print("refused posix shm", type(e).__name__)',
      'try:',
      '    fd = os.open("/dev/shm/shed-leftover-file", os.O_CREAT | os.O_RDWR, 0o600)',
      '    print("ESCAPED /dev/shm file")',
      'except OSError as e:',
      '    print("refused /dev/shm file", type(e).__name__)',
    ].join('\n');
    const text = out(await py(code));
    expect(text).not.toContain('ESCAPED');
    expect(text.match(/^refused /gm)?.length, text).toBe(7);
    expect(text).toMatch(/refused shmget -1 Operation not permitted/);
    // What the host holds after the call: nothing new.
    expect(sysvObjects()).toEqual(before.sysv);
    expect(devShm()).toEqual(before.shm);
    expect(mqueueLeft('/shed-leftover')).toBe(false);
  });

  it('prlimit, setpriority, sched_setaffinity and ioprio_set on the server, its session, the launcher and another call\'s command: refused, each keeps running unchanged', async () => {
    // No arena here: the victim is another user's call, whose folders the arena would count as changes.
    const shed = makeShed({ sandbox: mode, ...ON });
    cleanups.push(() => shed.cleanup());
    const marker = `victim-${process.pid}-${Date.now()}`;
    // Another call's command, running meanwhile (it prints its limits at its end).
    const victimCall = shed.call('shed_run_python', { zone: 'storage', code: 'import time\ntime.sleep(10)\nprint("victim done")', args: [marker], timeout: 60 }, { user: 'bob' });
    let victim: number[] = [];
    for (let i = 0; i < 100 && victim.length === 0; i++) {
      await sleep(50);
      victim = withMarker(marker);
    }
    expect(victim.length, 'the victim command is running').toBeGreaterThan(0);
    const bystander = spawn('sleep', ['1000'], { stdio: 'ignore' });
    try {
      const targets = [process.pid, launcherPid()!, bystander.pid!, ...victim];
      const before = targets.map(limitsOf);
      const code = [
        'import ctypes, os, resource',
        'libc = ctypes.CDLL(None, use_errno=True)',
        `targets = ${JSON.stringify(targets)} + [os.getsid(os.getppid()), os.getppid()]`,
        'targets = [t for t in targets if t not in (0, os.getpid())]',
        'def attempt(what, fn):',
        '    try:',
        '        r = fn()',
        '        print("ESCAPED", what, r)',
        '    except OSError as e:',
        '        print("refused", what, type(e).__name__)',
        'for t in targets:',
        '    attempt(f"prlimit cpu {t}", lambda: resource.prlimit(t, resource.RLIMIT_CPU, (0, 0)))',
        '    attempt(f"prlimit nofile {t}", lambda: resource.prlimit(t, resource.RLIMIT_NOFILE, (3, 3)))',
        '    attempt(f"prlimit fsize {t}", lambda: resource.prlimit(t, resource.RLIMIT_FSIZE, (0, 0)))',
        '    attempt(f"setpriority {t}", lambda: os.setpriority(os.PRIO_PROCESS, t, 19))',
        '    attempt(f"affinity {t}", lambda: os.sched_setaffinity(t, {0}))',
        '    attempt(f"scheduler {t}", lambda: os.sched_setscheduler(t, os.SCHED_IDLE, os.sched_param(0)))',
        '    r = libc.syscall(251, 1, t, 3 << 13)',
        '    print(("ESCAPED" if r == 0 else "refused"), "ioprio", t)',
        'attempt("setpriority of the user", lambda: os.setpriority(os.PRIO_USER, 0, 19))',
        'attempt("setpriority of the group", lambda: os.setpriority(os.PRIO_PGRP, 0, 19))',
        'print("targets", len(targets))',
      ].join('\n');
      const text = out(await shed.call('shed_run_python', { zone: 'storage', code, timeout: 60 }));
      expect(text).not.toContain('ESCAPED');
      const n = Number(/targets (\d+)/.exec(text)?.[1]);
      expect(text.match(/^refused /gm)?.length, text).toBe(7 * n + 2);
      expect(targets.map(limitsOf)).toEqual(before);
      expect(bystander.exitCode).toBeNull();
      const v = await victimCall;
      expect(out(v)).toContain('victim done');
    } finally {
      bystander.kill('SIGKILL');
    }
  });

  it('the script\'s own limits, priority and affinity still change; numpy and pandas import and compute', async () => {
    a = makeArena(mode, ON);
    const code = [
      'import os, resource',
      'resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))',
      'resource.prlimit(0, resource.RLIMIT_CORE, (0, 0))',
      'os.setpriority(os.PRIO_PROCESS, 0, 19)',
      'cpus = os.sched_getaffinity(0)',
      'os.sched_setaffinity(0, cpus)',
      'print("own", resource.getrlimit(resource.RLIMIT_NOFILE), os.getpriority(os.PRIO_PROCESS, 0), len(cpus) > 0)',
      'import numpy, pandas',
      'm = numpy.arange(400.0).reshape(20, 20)',
      'print("numpy", float((m @ m.T).trace()), "pandas", int(pandas.DataFrame({"a": [1, 2, 3]})["a"].sum()))',
    ].join('\n');
    const text = out(await py(code));
    expect(text).toContain('own (64, 64) 19 True');
    expect(text).toContain('numpy 21253400.0 pandas 6');
    const shell = out(await sh('ulimit -n 64\necho "own $(ulimit -n)"'));
    expect(shell).toContain('own 64');
  });
});
