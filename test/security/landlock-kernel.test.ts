/**
 * The Landlock ruleset holds by itself: each attack runs a hostile program directly through the
 * runner (below the argument policy, which would refuse most of them), once under Landlock, where
 * the kernel must stop it, and once in validated mode (no kernel confinement), where the same
 * program succeeds: so each test would fail if the ruleset did not hold. Python plays the attacker
 * (the yq interpreter: the class of program a planted .pth file would run).
 */
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executablesFor } from '../../src/core/services/exec/launcher/executables.js';
import { archCalls } from '../../src/core/services/exec/launcher/launcher.js';
import { INNER_SCRIPT } from '../../src/core/services/exec/launcher/launcher-script.js';
import { run } from '../../src/core/services/exec/launcher/runner.js';
import type { RunRequest, RunResult } from '../../src/core/services/exec/launcher/run-types.js';
import { sandboxStatus } from '../../src/core/services/exec/launcher/sandbox.js';
import { findProgram } from '../../src/core/services/exec/launcher/system.js';

const SECRET = `LANDLOCK-CANARY-${process.pid}`;
const python = findProgram('python3')!;
let abi = 0;
let base: string;
let zone: string;
let outside: string;

beforeAll(async () => {
  abi = (await sandboxStatus('landlock')).landlockAbi!;
  base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-ll-base-')));
  zone = path.join(base, 'users', 'alice', 'Storage', 'data');
  fs.mkdirSync(zone, { recursive: true });
  fs.writeFileSync(path.join(zone, 'mine.txt'), 'mine\n');
  const plant = (rel: string) => {
    fs.mkdirSync(path.dirname(path.join(base, rel)), { recursive: true });
    fs.writeFileSync(path.join(base, rel), `${SECRET}\n`);
  };
  plant('access_auth.sqlite');
  plant('fileshed.json');
  plant('users/alice/Storage/above-zone.txt');
  plant('users/bob/Storage/data/bob.txt');
  plant('groups/team/data/team.txt');
  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-ll-outside-'));
  fs.writeFileSync(path.join(outside, 'secret.txt'), `${SECRET}\n`);
});
afterAll(() => {
  fs.rmSync(base, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

interface Attack {
  program: string;
  args: string[];
  readonly?: boolean;
  network?: boolean;
}

function request(mode: 'landlock' | 'validated', a: Attack): RunRequest {
  return {
    program: a.program, args: a.args, zoneRoot: zone, readonly: a.readonly ?? false, sandbox: mode, network: a.network ?? false,
    landlock: { abi, executables: executablesFor(path.basename(a.program), a.program) },
    timeoutSec: 20, memoryMb: 0, cpuSec: 0, maxFileBytes: 1 << 20, maxProcesses: 64, captureBytes: 1 << 16, mergeStderr: true,
  };
}

const text = (r: RunResult) => r.stdout.bytes.toString();
/** Python code run as the attacker: prints OK when the attempt succeeded, else the error. */
const py = (code: string, extra: Partial<Attack> = {}): Attack => ({ program: python, args: ['-c', `try:\n${code.replace(/^/gm, '    ')}\n    print("OK")\nexcept Exception as e:\n    print("DENIED", repr(e))`], ...extra });

/** Under Landlock the attempt fails; without kernel confinement the same program succeeds. */
async function holds(a: Attack, succeeded: (r: RunResult) => boolean): Promise<RunResult> {
  const confined = await run(request('landlock', a));
  expect(confined.refused, text(confined)).toBeUndefined();
  expect(succeeded(confined), `under Landlock: ${text(confined)}`).toBe(false);
  const open = await run(request('validated', a));
  expect(succeeded(open), `the control run without Landlock should succeed: ${text(open)}`).toBe(true);
  return confined;
}
const leaked = (r: RunResult) => text(r).includes(SECRET);

describe('Landlock: reads outside the zone are refused by the kernel', () => {
  it.each([
    ['the storage base (the server configuration file in it)', 'fileshed.json'],
    ['the access database (link-signing secret, group membership)', 'access_auth.sqlite'],
    ['the folder above the zone', 'users/alice/Storage/above-zone.txt'],
    ["another user's zone", 'users/bob/Storage/data/bob.txt'],
    ['a group space the user did not open', 'groups/team/data/team.txt'],
  ])('%s', async (_what, rel) => {
    const r = await holds({ program: findProgram('cat')!, args: [path.join(base, rel)] }, leaked);
    expect(text(r)).toContain('Permission denied');
  });

  it('a folder outside the storage base', async () => {
    await holds({ program: findProgram('cat')!, args: [path.join(outside, 'secret.txt')] }, leaked);
  });

  it("the server's environment (/proc/<server pid>/environ) and /proc at all", async () => {
    // A command has no capability, so (as root) it cannot read a privileged server's environ even
    // unconfined: the control reads its own instead, which only Landlock refuses.
    await holds({ program: findProgram('cat')!, args: ['/proc/self/environ'] }, (r) => text(r).includes('PATH='));
    const server = await run(request('landlock', { program: findProgram('cat')!, args: [`/proc/${process.pid}/environ`] }));
    expect(text(server)).toContain('Permission denied');
    expect(text(server)).not.toContain('PATH=');
    await holds(py('print(open("/proc/self/status").read()[:20])'), (r) => text(r).includes('OK'));
  });

  it("another call's private folder (its home and temp files)", async () => {
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-call-'));
    try {
      fs.mkdirSync(path.join(other, 'home'));
      fs.writeFileSync(path.join(other, 'home', '.sqliterc'), `${SECRET}\n`);
      await holds({ program: findProgram('cat')!, args: [path.join(other, 'home', '.sqliterc')] }, leaked);
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
  });
});

describe('Landlock: writes outside the zone, and in a read-only zone, are refused by the kernel', () => {
  it('writing into another user\'s zone', async () => {
    const target = path.join(base, 'users', 'bob', 'Storage', 'data', 'planted.txt');
    await holds({ program: findProgram('cp')!, args: ['mine.txt', target] }, () => fs.existsSync(target));
    fs.rmSync(target, { force: true });
  });

  it('overwriting the access database', async () => {
    const db = path.join(base, 'access_auth.sqlite');
    await holds({ program: findProgram('cp')!, args: ['mine.txt', db] }, () => fs.readFileSync(db, 'utf8') === 'mine\n');
    fs.writeFileSync(db, `${SECRET}\n`);
  });

  it('a read-only zone (Uploads, read-only contexts): no new file, no change', async () => {
    const attack: Attack = { program: findProgram('touch')!, args: ['new.txt'], readonly: true };
    const changed = () => fs.existsSync(path.join(zone, 'new.txt'));
    await holds(attack, changed);
    fs.rmSync(path.join(zone, 'new.txt'), { force: true });
    const sed: Attack = { program: findProgram('sed')!, args: ['-i', 's/mine/theirs/', 'mine.txt'], readonly: true };
    await holds(sed, () => fs.readFileSync(path.join(zone, 'mine.txt'), 'utf8') !== 'mine\n');
    fs.writeFileSync(path.join(zone, 'mine.txt'), 'mine\n');
  });
});

describe('Landlock: programs, network, signals and sockets', () => {
  it('only the command\'s own programs run: not a shell, not a file of the zone', async () => {
    fs.copyFileSync(findProgram('true')!, path.join(zone, 'mytrue'));
    fs.chmodSync(path.join(zone, 'mytrue'), 0o755);
    try {
      await holds(py('import os\nos.execv("/bin/sh", ["sh", "-c", "true"])'), (r) => r.returncode === 0 && !text(r).includes('DENIED'));
      await holds(py('import os\nos.execv("./mytrue", ["mytrue"])'), (r) => r.returncode === 0 && !text(r).includes('DENIED'));
    } finally {
      fs.rmSync(path.join(zone, 'mytrue'), { force: true });
    }
  });

  it('TCP connect to a loopback listener is refused without network; allowed with it', async () => {
    const server = net.createServer((c) => c.end('hello'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const connect = `import socket\ns = socket.create_connection(("127.0.0.1", ${port}), timeout=5)\nprint(s.recv(10))`;
      await holds(py(connect), (r) => text(r).includes('OK'));
      const allowed = await run(request('landlock', py(connect, { network: true })));
      expect(text(allowed)).toContain("b'hello'");
    } finally {
      server.close();
    }
  });

  it('TCP bind is refused, even for a command allowed on the network', async () => {
    await holds(py('import socket\ns = socket.socket()\ns.bind(("127.0.0.1", 0))\ns.listen()', { network: true }), (r) => text(r).includes('OK'));
  });

  it('UDP to a loopback listener is refused without network (Landlock does not cover UDP: the seccomp filter does)', async () => {
    const sock = dgram.createSocket('udp4');
    let got = 0;
    sock.on('message', () => got++);
    await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
    const port = sock.address().port;
    try {
      await holds(py(`import socket, time\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.sendto(b"${SECRET}", ("127.0.0.1", ${port}))\ntime.sleep(0.2)`), () => got > 0);
    } finally {
      sock.close();
    }
  });

  it('a Unix socket reached by its path (a server control socket) is refused', async () => {
    const file = path.join(outside, 'control.sock');
    const server = net.createServer((c) => c.end('hello'));
    await new Promise<void>((r) => server.listen(file, r));
    try {
      await holds(py(`import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect(${JSON.stringify(file)})\nprint(s.recv(10))`), (r) => text(r).includes('OK'));
    } finally {
      server.close();
    }
  });

  it('an abstract Unix socket outside the command is refused', async () => {
    const name = `shed-ll-${process.pid}-${Date.now()}`;
    const server = net.createServer((c) => c.end('hello'));
    await new Promise<void>((r) => server.listen(`\0${name}`, r));
    try {
      // Node binds the name padded to the full address length (older libuv) or exact (newer): try both.
      const connect = `import socket\nname = "\\0${name}"\ntry:\n    s = socket.socket(socket.AF_UNIX)\n    s.connect(name)\nexcept ConnectionRefusedError:\n    s = socket.socket(socket.AF_UNIX)\n    s.connect(name.ljust(108, "\\0"))\nprint(s.recv(10))`;
      await holds(py(connect), (r) => text(r).includes('OK'));
    } finally {
      server.close();
    }
  });

  it('signals to the server process are refused (Landlock ABI 6 and later; signal 0: the permission check alone)', async () => {
    await holds(py(`import os\nos.kill(${process.pid}, 0)`), (r) => text(r).includes('OK'));
  });
});

describe('the launcher fails closed', () => {
  it('a ruleset the kernel refuses: the program never runs, the status pipe says why', async () => {
    const marker = path.join(zone, 'ran.txt');
    const nr = Object.entries(archCalls()!.nr).flatMap(([name, n]) => ['nr', `${name}=${n}`]);
    const child = spawn(findProgram('perl')!, ['-e', INNER_SCRIPT, ...nr, 'abi', String(abi), 'fs', String(2 ** 40), '--', findProgram('touch')!, marker], {
      cwd: zone,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    let status = '';
    (child.stdio[3] as NodeJS.ReadableStream).on('data', (d: Buffer) => (status += d.toString()));
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect(code).toBe(125);
    expect(status).toMatch(/^landlock_create_ruleset: /);
    expect(fs.existsSync(marker)).toBe(false);
  });
});
