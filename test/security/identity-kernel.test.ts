/**
 * Every command runs as the caller's kernel identity (RunRequest.identity, issue 31): the walls of
 * review 4's classes 1-3 become the kernel's file permissions and process credentials. Each attack runs
 * through the runner directly (below the argument policy), as Python and as shell, once as the caller's
 * uid, where the kernel must refuse it, and (where the attack is harmless to the test) once as the
 * server's uid, as every command ran before, where the same program succeeds: so each test fails on the
 * code without the identity switch.
 *
 * The storage base is laid out here as the identity layout has it: base, users/ 0711 root; users/<id>
 * root:<user gid> 0710; the user's data/ theirs; Uploads server-owned, readable by the user's gid.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executablesFor } from '../../src/core/services/exec/launcher/executables.js';
import type { KernelIdentity } from '../../src/core/services/exec/launcher/forkserver.js';
import { run } from '../../src/core/services/exec/launcher/runner.js';
import type { RunRequest, RunResult } from '../../src/core/services/exec/launcher/run-types.js';
import { sandboxStatus } from '../../src/core/services/exec/launcher/sandbox.js';
import { findProgram } from '../../src/core/services/exec/launcher/system.js';

const ALICE = 2_100_001;
const BOB = 2_100_002;
const alice: KernelIdentity = { uid: ALICE, gid: ALICE, groups: [] };
const bob: KernelIdentity = { uid: BOB, gid: BOB, groups: [] };
const python = findProgram('python3')!;
const sh = findProgram('sh')!;
const TOOLS = ['chmod', 'stat', 'prlimit', 'kill', 'cat', 'sed', 'rm', 'mkdir', 'touch', 'git', 'ls', 'sleep', 'grep', 'wc'];
let abi = 0;
let base: string;
let outside: string;
/** Alice's Storage data, her Uploads of one conversation, Bob's Storage data. */
let aliceData: string;
let aliceUploads: string;
let bobData: string;
let serverFile: string;

function mkdir(p: string, mode: number, uid = 0, gid = 0): string {
  fs.mkdirSync(p, { recursive: true });
  fs.chownSync(p, uid, gid);
  fs.chmodSync(p, mode);
  return p;
}
function file(p: string, text: string, mode: number, uid = 0, gid = 0): string {
  fs.writeFileSync(p, text);
  fs.chownSync(p, uid, gid);
  fs.chmodSync(p, mode);
  return p;
}

beforeAll(async () => {
  abi = (await sandboxStatus('landlock')).landlockAbi!;
  base = mkdir(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-id-base-'))), 0o711);
  file(path.join(base, 'access_auth.sqlite'), 'server state\n', 0o600);
  mkdir(path.join(base, 'users'), 0o711);
  for (const [name, id] of [['alice', ALICE], ['bob', BOB]] as const) {
    mkdir(path.join(base, 'users', name), 0o710, 0, id);
    mkdir(path.join(base, 'users', name, 'Storage'), 0o710, 0, id);
    mkdir(path.join(base, 'users', name, 'Storage', 'data'), 0o700, id, id);
    mkdir(path.join(base, 'users', name, 'Uploads', 'conv'), 0o750, 0, id);
  }
  aliceData = path.join(base, 'users', 'alice', 'Storage', 'data');
  bobData = path.join(base, 'users', 'bob', 'Storage', 'data');
  aliceUploads = path.join(base, 'users', 'alice', 'Uploads', 'conv');
  file(path.join(aliceData, 'mine.txt'), 'mine\n', 0o644, ALICE, ALICE);
  file(path.join(bobData, 'secret-plan.txt'), 'x'.repeat(12345), 0o644, BOB, BOB);
  file(path.join(aliceUploads, 'upload.csv'), 'a,b\n', 0o640, 0, ALICE);
  outside = mkdir(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-id-outside-')), 0o755);
  serverFile = file(path.join(outside, 'server-only.txt'), 'server\n', 0o600);
});
afterAll(() => {
  fs.rmSync(base, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

type Mode = 'landlock' | 'bwrap';
interface Attack {
  program: string;
  args: string[];
  zone?: string;
  readonly?: boolean;
  identity?: KernelIdentity;
}

function request(mode: Mode, a: Attack): RunRequest {
  const extra = a.program === sh ? TOOLS.flatMap((t) => (findProgram(t) ? executablesFor(t, findProgram(t)!) : [])) : [];
  return {
    program: a.program, args: a.args, zoneRoot: a.zone ?? aliceData, readonly: a.readonly ?? false, sandbox: mode, network: false,
    landlock: { abi, executables: [...executablesFor(path.basename(a.program), a.program), ...extra] },
    timeoutSec: 30, memoryMb: 0, cpuSec: 0, maxFileBytes: 1 << 20, maxProcesses: 64, captureBytes: 1 << 16, mergeStderr: true,
    ...(a.identity ? { identity: a.identity } : {}),
  };
}
const text = (r: RunResult) => r.stdout.bytes.toString();
/** Python run as the attacker: prints OK (and what it learned) when the attempt succeeded, else DENIED and the error. */
const py = (code: string): Attack => ({ program: python, args: ['-c', `import os, resource, ctypes\ntry:\n${code.replace(/^/gm, '    ')}\n    print("OK")\nexcept Exception as e:\n    print("DENIED", repr(e))`] });
/** Shell: prints OK when the command succeeded, else DENIED. */
const shell = (script: string): Attack => ({ program: sh, args: ['-c', `if ${script}; then echo OK; else echo DENIED; fi`] });

async function attempt(mode: Mode, a: Attack, identity?: KernelIdentity): Promise<RunResult> {
  const r = await run(request(mode, { ...a, ...(identity ? { identity } : {}) }));
  expect(r.refused, text(r)).toBeUndefined();
  return r;
}
/**
 * How the same attack ran before: every command as the one uid that owned every file (the server's),
 * i.e. as the owner of the target (`as`: that identity; absent: the server's own), possibly in a zone
 * laid out as before (`zone`). It must succeed there; `restore` undoes it.
 */
interface Control {
  as?: KernelIdentity;
  zone?: string;
  restore(): void;
}
/** As Alice the kernel refuses it; as the target's owner (the shared uid of before) the same program succeeds. */
async function refusedAsCaller(mode: Mode, a: Attack, control?: Control): Promise<RunResult> {
  const mine = await attempt(mode, a, alice);
  expect(text(mine), 'as the caller\'s uid').toContain('DENIED');
  // A line of its own: the random temp folder in an error message may hold the letters (…-tyOOKa/…).
  expect(text(mine)).not.toMatch(/^OK\b/m);
  if (control) {
    const before = await attempt(mode, { ...a, ...(control.zone ? { zone: control.zone } : {}) }, control.as);
    expect(text(before), `control: as the server's uid the same attack succeeds: ${a.args.join(' ')}`).toMatch(/^OK\b/m);
    control.restore();
  }
  return mine;
}
const modeOf = (p: string) => fs.statSync(p).mode & 0o7777;

describe.each(['landlock', 'bwrap'] as const)('%s: the command runs as the caller', (mode) => {
  it('every id is the caller\'s, no capability, and what it makes is theirs on disk', async () => {
    const r = await attempt(mode, { program: sh, args: ['-c', 'grep -E "^(Cap(Prm|Eff|Bnd|Amb)):" /proc/self/status; echo made > made.txt'] }, { ...alice, groups: [2_100_100] });
    if (mode === 'landlock') {
      // /proc of its own process is closed to a landlock command: the file it made says who it was.
      expect(r.returncode, text(r)).toBe(0);
    } else {
      expect(text(r)).toMatch(/CapEff:\s+0{16}/);
      expect(text(r)).toMatch(/CapBnd:\s+0{16}/);
    }
    const st = fs.statSync(path.join(aliceData, 'made.txt'));
    expect([st.uid, st.gid]).toEqual([ALICE, ALICE]);
    fs.rmSync(path.join(aliceData, 'made.txt'));
  });

  it('the caller\'s own files work as before: create, sed -i, rm, mkdir, git init', async () => {
    const r = await attempt(mode, {
      program: sh,
      args: ['-c', 'set -e; echo one > a.txt; sed -i s/one/two/ a.txt; cat a.txt; mkdir -p d/e; touch d/e/f; rm -r d; sed -i s/mine/ours/ mine.txt; git init -q repo; ls repo/.git >/dev/null; rm -rf repo; rm a.txt; echo DONE'],
    }, alice);
    expect(text(r)).toContain('two');
    expect(text(r)).toContain('DONE');
    expect(r.returncode).toBe(0);
    expect(fs.readFileSync(path.join(aliceData, 'mine.txt'), 'utf8')).toBe('ours\n');
    fs.writeFileSync(path.join(aliceData, 'mine.txt'), 'mine\n');
  });

  it('it dies with its supervisor: the parent death signal survives the switch (the kernel clears it when the uid changes)', async () => {
    const r = await attempt(mode, { program: python, args: ['-c', 'import ctypes\ns = ctypes.c_int(-1)\nctypes.CDLL(None).prctl(2, ctypes.byref(s))\nprint("PDEATHSIG", s.value)'] }, alice);
    expect(text(r)).toContain('PDEATHSIG 9');
  });

  it('class 1: a file of the server in the zone (its owner_ro or state) cannot have its mode changed', async () => {
    const target = file(path.join(aliceData, 'server-owned.txt'), 'server\n', 0o644);
    // Before: the zone and every file in it were the server's, as the command was.
    const before = mkdir(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-id-before-')), 0o755);
    const old = file(path.join(before, 'server-owned.txt'), 'server\n', 0o644);
    try {
      for (const a of [py(`os.chmod("server-owned.txt", 0o666)`), shell('chmod 666 server-owned.txt')]) {
        const r = await refusedAsCaller(mode, a, { zone: before, restore: () => fs.chmodSync(old, 0o644) });
        expect(text(r)).toMatch(/PermissionError|Operation not permitted|DENIED/);
        expect(modeOf(target)).toBe(0o644);
      }
    } finally {
      fs.rmSync(target);
      fs.rmSync(before, { recursive: true });
    }
  });
});

describe('validated: the command runs as the caller too', () => {
  it('it dies with its supervisor: the parent death signal survives the switch', async () => {
    const r = await run({ ...request('landlock', { program: python, args: ['-c', 'import ctypes\ns = ctypes.c_int(-1)\nctypes.CDLL(None).prctl(2, ctypes.byref(s))\nprint("PDEATHSIG", s.value)'] }), sandbox: 'validated', identity: alice });
    expect(r.refused, text(r)).toBeUndefined();
    expect(text(r)).toContain('PDEATHSIG 9');
  });
});

describe('landlock: class 1, modes outside the zone and in the read-only Uploads', () => {
  it.each([
    ['Python', (p: string) => py(`os.chmod(${JSON.stringify(p)}, 0)`)],
    ['shell', (p: string) => shell(`chmod 0 ${p}`)],
  ])('%s: another user\'s folder', async (_lang, attack) => {
    await refusedAsCaller('landlock', attack(bobData), { as: bob, restore: () => fs.chmodSync(bobData, 0o700) });
    expect(modeOf(bobData)).toBe(0o700);
    // Bob's own commands still work.
    const r = await attempt('landlock', { program: sh, args: ['-c', 'cat secret-plan.txt | wc -c'], zone: bobData }, bob);
    expect(text(r).trim()).toBe('12345');
  });

  it('a file of the server outside the base', async () => {
    for (const a of [py(`os.chmod(${JSON.stringify(serverFile)}, 0o666)`), shell(`chmod 666 ${serverFile}`)]) {
      await refusedAsCaller('landlock', a, { restore: () => fs.chmodSync(serverFile, 0o600) });
      expect(modeOf(serverFile)).toBe(0o600);
      expect(fs.readFileSync(serverFile, 'utf8')).toBe('server\n');
    }
  });

  it('a file of the caller\'s own read-only Uploads', async () => {
    const target = path.join(aliceUploads, 'upload.csv');
    for (const a of [py('os.chmod("upload.csv", 0o666)'), shell('chmod 666 upload.csv')]) {
      await refusedAsCaller('landlock', { ...a, zone: aliceUploads, readonly: true }, { restore: () => fs.chmodSync(target, 0o640) });
      expect(modeOf(target)).toBe(0o640);
      // Still readable: the user's gid reads it.
      const r = await attempt('landlock', { program: sh, args: ['-c', 'cat upload.csv'], zone: aliceUploads, readonly: true }, alice);
      expect(text(r)).toBe('a,b\n');
    }
  });
});

describe('landlock: class 3, nothing learned about another user\'s files', () => {
  const guessed = () => path.join(bobData, 'secret-plan.txt');
  it.each([
    ['Python stat', () => py(`print(os.stat(${JSON.stringify(guessed())}).st_size)`)],
    ['shell stat', () => shell(`stat -c %s ${guessed()}`)],
  ])('%s of a guessed name', async (_what, attack) => {
    const r = await refusedAsCaller('landlock', attack(), { as: bob, restore: () => undefined });
    expect(text(r)).not.toContain('12345');
  });

  const watch = (p: string) =>
    py(`libc = ctypes.CDLL(None, use_errno=True)\nfd = libc.inotify_init1(0)\nassert fd >= 0\nif libc.inotify_add_watch(fd, ${JSON.stringify(p)}.encode(), 0x100 | 0x200 | 0x2) < 0:\n    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))`);
  // Before, each of them belonged to the one uid every command ran as (the server's or the user's).
  it.each([
    ['another user\'s folder', () => bobData, bob],
    ['their home folder', () => path.join(base, 'users', 'bob'), undefined],
    ['users/ (every new user)', () => path.join(base, 'users'), undefined],
  ])('inotify_add_watch on %s', async (_what, target, owner) => {
    await refusedAsCaller('landlock', watch(target()), { ...(owner ? { as: owner } : {}), restore: () => undefined });
  });
});

describe('landlock: class 2, no other process is reached', () => {
  const nofile = (pid: string) => py(`print(resource.prlimit(${pid}, resource.RLIMIT_NOFILE))`);
  it.each([
    ['the server', () => String(process.pid)],
    ['the launcher (its supervisor)', () => 'os.getppid()'],
  ])('prlimit and setpriority on %s are refused', async (_what, pid) => {
    // No control here: the filter refuses limits on any other pid whatever the uid (seccomp.ts), so
    // the server's own uid is refused too; the uid is the second wall for these calls.
    await refusedAsCaller('landlock', nofile(pid()));
    await refusedAsCaller('landlock', py(`os.setpriority(os.PRIO_PROCESS, ${pid()}, 19)`));
    await refusedAsCaller('landlock', shell(`prlimit --pid ${pid() === 'os.getppid()' ? '$PPID' : pid()} --nofile`));
    // The real attack (RLIMIT_CPU 0 would kill it): refused, and the server keeps running.
    const r = await attempt('landlock', py(`resource.prlimit(${pid()}, resource.RLIMIT_CPU, (0, 0))`), alice);
    expect(text(r)).toContain('DENIED');
    expect(resourceCpu()).not.toBe('0');
  });

  it('another user\'s running command: no kill, prlimit or renice reaches it; it runs to its end', async () => {
    const pidFile = path.join(bobData, 'pid');
    const victim = run(request('landlock', { program: sh, args: ['-c', 'echo $$ > pid; sleep 15; echo survived'], zone: bobData, identity: bob }));
    const until = Date.now() + 20_000;
    while (!fs.existsSync(pidFile) || fs.readFileSync(pidFile, 'utf8').trim() === '') {
      if (Date.now() > until) throw new Error('the victim command never started');
      await new Promise((r) => setTimeout(r, 20));
    }
    const pid = fs.readFileSync(pidFile, 'utf8').trim();
    const niceOf = () => fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16];
    // Its supervisor lowers it to nice 10 once it has run 50 ms (priority.ts): from then on it stays.
    while (niceOf() !== '10') {
      if (Date.now() > until) throw new Error('the victim command never went to nice 10');
      await new Promise((r) => setTimeout(r, 20));
    }
    const niceBefore = niceOf();
    for (const a of [
      py(`os.kill(${pid}, 9)`),
      py(`resource.prlimit(${pid}, resource.RLIMIT_CPU, (0, 0))`),
      py(`os.setpriority(os.PRIO_PROCESS, ${pid}, 19)`),
      shell(`kill -9 ${pid}`),
      shell(`prlimit --pid ${pid} --cpu=0:0`),
    ]) {
      // Landlock: the kernel's credential check; bwrap: its own PID namespace does not even hold it.
      for (const mode of ['landlock', 'bwrap'] as const) {
        const r = await attempt(mode, a, alice);
        expect(text(r), `${mode}: ${a.args.join(' ')}`).toContain('DENIED');
      }
    }
    expect(niceOf()).toBe(niceBefore);
    const v = await victim;
    expect(text(v)).toContain('survived');
    expect(v.returncode).toBe(0);
    fs.rmSync(pidFile);
  }, 90_000);
});

/** This process's own RLIMIT_CPU soft limit, as /proc says. */
function resourceCpu(): string {
  const line = fs.readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max cpu time'))!;
  return line.split(/\s{2,}/)[1]!;
}

describe('landlock: the call folders are the caller\'s, and never another user\'s', () => {
  it('HOME and TMPDIR belong to the caller; a folder kept from one user\'s call is never another\'s', async () => {
    const owners = async (who: KernelIdentity) => {
      // As a script (shed_run_shell): its HOME is writable.
      const req = request('landlock', { program: sh, args: ['-c', 'echo x > "$HOME/h" && echo y > "$TMPDIR/t" && ls -lnd "$HOME" "$TMPDIR" && rm "$HOME/h" "$TMPDIR/t"'], zone: who === bob ? bobData : aliceData, identity: who });
      const r = await run({ ...req, script: { env: {} } });
      expect(r.returncode, text(r)).toBe(0);
      return text(r).trim().split('\n').map((l) => l.split(/\s+/).slice(0, 4).join(' '));
    };
    for (const who of [alice, alice, bob, alice]) {
      expect(await owners(who)).toEqual([`drwx------ 2 ${who.uid} ${who.gid}`, `drwx------ 2 ${who.uid} ${who.gid}`]);
    }
  });
});

describe('the launcher never runs a command as an identity it could not take', () => {
  it.each(['landlock', 'bwrap'] as const)('%s: uid 0 asked for is refused, the command does not run', async (mode) => {
    const r = await run(request(mode, { program: sh, args: ['-c', 'echo ran > ran.txt'], identity: { uid: 0, gid: 0, groups: [] } }));
    expect(r.refused).toMatch(/identity/);
    expect(fs.existsSync(path.join(aliceData, 'ran.txt'))).toBe(false);
  });
});

describe('landlock: RLIMIT_NPROC is real under the caller\'s uid', () => {
  it('a fork bomb meets EAGAIN from the kernel at its budget (no supervisor stop needed), and ends', async () => {
    const bomb = py(['import time', 'kids = []', 'try:', '    for i in range(400):', '        pid = os.fork()', '        if pid == 0:', '            time.sleep(3)', '            os._exit(0)', '        kids.append(pid)', 'finally:', '    print("forked", len(kids))'].join('\n'));
    const r = await attempt('landlock', bomb, alice);
    expect(r.stoppedFor).toBeUndefined();
    expect(text(r)).toMatch(/DENIED BlockingIOError|Resource temporarily unavailable/);
    const forked = Number(/forked (\d+)/.exec(text(r))?.[1]);
    expect(forked).toBeGreaterThan(0);
    expect(forked).toBeLessThan(64);
  });
});
