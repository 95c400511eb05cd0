/**
 * The attack corpus written as Python (shed_run_python) and as shell scripts (shed_run_shell), in
 * both kernel modes: the argument policy cannot judge a script, so every attack below meets the
 * kernel alone. The arena (exec-harness.ts) checks after each one that every canary outside the
 * zone is byte-identical and unread, nothing appeared or vanished outside the zones, and the secret
 * is in no response. Bombs are contained and leave the server able to serve (another user's call
 * right after); their effect on other users' latency over HTTP is measured in
 * code-serve-isolation.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { groupShed, read } from '../groups/setup.js';
import { makeShed } from '../helpers/shed.js';
import { makeArena, SECRET, type Arena } from './exec-harness.js';

const KERNEL_MODES = ['bwrap', 'landlock'] as const;
const ON = { allow_python: true, allow_shell: true, blocked_patterns: '*.key, private/' };
const LOADER = '/lib64/ld-linux-x86-64.so.2';

beforeAll(() => {
  process.env.FILESHED_TEST_SECRET = SECRET;
});
afterAll(() => {
  delete process.env.FILESHED_TEST_SECRET;
});

/** Runs one script as alice in Storage; the answer is recorded for the arena's secret check. */
async function py(a: Arena, code: string, extra: Record<string, unknown> = {}) {
  return a.call('shed_run_python', { zone: 'storage', code, timeout: 60, ...extra });
}
async function sh(a: Arena, script: string, extra: Record<string, unknown> = {}) {
  return a.call('shed_run_shell', { zone: 'storage', script, timeout: 60, ...extra });
}

/** A script's answer: it ran (success), and none of its probes printed a success marker. */
function contained(r: { success: boolean; data?: Record<string, unknown>; error?: unknown }, marker = 'ESCAPED'): Record<string, unknown> {
  expect(r.success, JSON.stringify(r.error)).toBe(true);
  expect(String(r.data!.stdout), String(r.data!.stderr)).not.toContain(marker);
  return r.data!;
}

/** Processes whose working folder is `dir` (a call's processes work in its zone). */
function processesIn(dir: string): string[] {
  const out: string[] = [];
  for (const pid of fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      if (fs.readlinkSync(`/proc/${pid}/cwd`) === dir) out.push(`${pid} ${fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ')}`);
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Python that tries each of `targets` with `op` and prints ESCAPED on success. */
const tryEach = (targets: string[], op: string) =>
  `import os, sys\nfor t in ${JSON.stringify(targets)}:\n    try:\n        ${op}\n        print("ESCAPED", t)\n    except Exception as e:\n        print("refused", t, type(e).__name__)\n`;

describe.each(KERNEL_MODES)('%s mode', (mode) => {
  let a: Arena;
  afterEach(() => a.finish());

  const arena = () => {
    a = makeArena(mode, ON);
    return a;
  };

  /** Absolute paths of secrets outside the zone, and the zone-relative ways to them. */
  const readTargets = (x: Arena) => {
    const base = x.s.base;
    for (const [file, content] of [[path.join(base, 'access_auth.sqlite'), `${SECRET}\n`], [path.join(x.outside, 'fileshed.json'), JSON.stringify({ api_key: SECRET })]] as const) {
      fs.writeFileSync(file, content);
      // Unread as far as the arena tells (it dates every canary's access time in 2000).
      fs.utimesSync(file, new Date('2000-01-01T00:00:00Z'), new Date());
    }
    return [
      path.join(x.outside, 'secret.txt'),
      path.join(x.outside, 'fileshed.json'),
      path.join(base, 'access_auth.sqlite'),
      path.join(base, 'users', 'bob', 'Storage', 'data', 'bob-secret.txt'),
      path.join(base, 'users', 'alice', 'Storage', 'above-secret.txt'),
      path.join(base, 'users', 'alice', 'Uploads', 'c2', 'other-chat.txt'),
      x.rel(path.join(base, 'users', 'bob', 'Documents', 'data', 'bob-doc.txt')),
      x.rel(path.join(x.outside, 'dir', 'inner.txt')),
      `/proc/${process.pid}/environ`,
      `/proc/${process.pid}/cmdline`,
      `/proc/${process.ppid}/environ`,
      '/proc/1/environ',
    ];
  };

  it('reads: other users, the base, access_auth.sqlite, the config file, the server\'s /proc — as Python', async () => {
    const x = arena();
    const targets = readTargets(x);
    const d = contained(await py(x, tryEach(targets, 'data = open(t, "rb").read()\n        assert b"KANARIE" in data')));
    expect(String(d.stdout).match(/^refused /gm)).toHaveLength(targets.length);
    contained(await py(x, tryEach([x.s.base, path.join(x.s.base, 'users'), x.outside, '/proc/1/root'], 'os.listdir(t)')));
  });

  it('reads of the same, as a shell script (cat, grep -r, tar, cp)', async () => {
    const x = arena();
    const targets = readTargets(x);
    const script = targets.map((t) => `cat '${t}' && echo ESCAPED-cat\ncp '${t}' ./copy.txt && echo ESCAPED-cp`).join('\n') + `\ngrep -r KANARIE '${x.s.base}' /proc/${process.pid}/ 2>/dev/null | head -c 200\ntar -cf x.tar '${x.outside}' && echo ESCAPED-tar\nls '${x.s.base}/users' && echo ESCAPED-ls`;
    contained(await sh(x, script));
    expect(fs.existsSync(path.join(x.zone, 'copy.txt'))).toBe(false);
  });

  it('writes outside, into the repository and into Uploads — as Python and as shell', async () => {
    const x = arena();
    // The repository of Documents exists once a modifying call ran there.
    await x.call('shed_create_file', { zone: 'documents', path: 'a.txt', content: 'a\n' });
    const git = path.join(x.s.base, 'users', 'alice', 'Documents', 'git');
    const configBefore = fs.readFileSync(path.join(git, 'config'), 'utf8');
    const targets = [path.join(x.outside, 'pwn.txt'), path.join(x.s.base, 'users', 'bob', 'Storage', 'data', 'pwn.txt'), x.rel(path.join(x.outside, 'pwn2.txt')), path.join(x.uploads, 'pwn.txt'), '/tmp/../' + x.outside.slice(1) + '/pwn3.txt'];
    contained(await py(x, tryEach(targets, 'open(t, "w").write("pwned")')));
    contained(await sh(x, targets.map((t) => `echo pwned > '${t}' && echo ESCAPED`).join('\n')));
    const headBefore = fs.readFileSync(path.join(git, 'HEAD'), 'utf8');
    const repo = ['../git/hooks/post-commit', '../git/config', '../git/HEAD', `${git}/config`];
    contained(await x.call('shed_run_python', { zone: 'documents', code: tryEach(repo, 'open(t, "a").write("[core]\\n\\thooksPath=/tmp\\n")') }));
    contained(await x.call('shed_run_shell', { zone: 'documents', script: repo.map((t) => `echo pwned >> '${t}' && echo ESCAPED`).join('\n') }));
    contained(await x.call('shed_run_python', { zone: 'uploads', code: tryEach(['pwn.txt', 'sub/pwn.txt'], 'os.makedirs(os.path.dirname(t) or ".", exist_ok=True); open(t, "w").write("x")') }));
    contained(await x.call('shed_run_shell', { zone: 'uploads', script: 'echo x > pwn.txt && echo ESCAPED\nmkdir d && echo ESCAPED' }));
    expect(fs.readdirSync(x.uploads)).toEqual([]);
    expect(fs.existsSync(path.join(git, 'hooks', 'post-commit'))).toBe(false);
    expect(fs.readFileSync(path.join(git, 'HEAD'), 'utf8')).toBe(headBefore);
    expect(fs.readFileSync(path.join(git, 'config'), 'utf8')).toBe(configBefore);
  });

  it('blocked files by every route: name, "..", glob, symbolic and hard links, find — Python and shell', async () => {
    const x = arena();
    x.put('id.key', `${SECRET}\n`);
    x.put('private/notes.txt', `${SECRET}\n`);
    x.put('sub/keep.txt', 'keep\n');
    const routes = ['id.key', './id.key', 'sub/../id.key', 'ID.KEY', 'private/notes.txt', 'sub/../private/notes.txt', path.join(x.zone, 'id.key')];
    contained(await py(x, tryEach(routes, 'assert b"KANARIE" in open(t, "rb").read()')));
    contained(await py(x, 'import os, glob\nfor t in glob.glob("**/*", recursive=True):\n    print("seen", t)\ntry:\n    os.link("id.key", "hard.txt"); print("ESCAPED link")\nexcept Exception as e: print("refused", e)\nos.symlink("id.key", "soft.txt")\ntry:\n    print("ESCAPED" if b"KANARIE" in open("soft.txt","rb").read() else "no")\nexcept Exception as e: print("refused", e)\n'));
    contained(await sh(x, 'cat *.key && echo ESCAPED\ncat sub/../id.key && echo ESCAPED\nfind . -name "*.key"\ncp id.key stolen.txt && echo ESCAPED\ncat private/* && echo ESCAPED\ngrep -r KANARIE . && echo ESCAPED'));
    expect(fs.readFileSync(path.join(x.zone, 'id.key'), 'utf8')).toBe(`${SECRET}\n`);
    expect(fs.existsSync(path.join(x.zone, 'stolen.txt'))).toBe(false);
    // The names a script made in their place do not replace them.
    contained(await py(x, 'open("id.key", "w").write("replaced")\nimport os\nos.makedirs("private", exist_ok=True)\nopen("private/notes.txt", "w").write("replaced")\n'));
    expect(fs.readFileSync(path.join(x.zone, 'id.key'), 'utf8')).toBe(`${SECRET}\n`);
    expect(fs.readFileSync(path.join(x.zone, 'private/notes.txt'), 'utf8')).toBe(`${SECRET}\n`);
  });

  it('network of every kind: TCP, UDP, Unix sockets by path and abstract (network_mode "safe" counts as off)', async () => {
    const x = makeArena(mode, { ...ON, network_mode: 'safe' });
    a = x;
    let reached = 0;
    const tcp = net.createServer((c) => {
      reached++;
      c.end();
    });
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    const udp = dgram.createSocket('udp4');
    udp.on('message', () => reached++);
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
    const sockPath = path.join(x.zone, 'srv.sock');
    const unixIn = net.createServer(() => reached++);
    await new Promise<void>((r) => unixIn.listen(sockPath, r));
    const abstractName = `fileshed-test-${process.pid}`;
    const unixAbstract = net.createServer(() => reached++);
    await new Promise<void>((r) => unixAbstract.listen(`\0${abstractName}`, r));
    try {
      const tcpPort = (tcp.address() as net.AddressInfo).port;
      const udpPort = udp.address().port;
      const code = [
        'import socket',
        'def attempt(name, fn):',
        '    try:',
        '        fn(); print("ESCAPED", name)',
        '    except Exception as e:',
        '        print("refused", name, type(e).__name__)',
        `attempt("tcp", lambda: socket.create_connection(("127.0.0.1", ${tcpPort}), timeout=3))`,
        `attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("127.0.0.1", ${udpPort})))`,
        `attempt("tcp6", lambda: socket.create_connection(("::1", ${tcpPort}), timeout=3))`,
        'attempt("unix-path", lambda: socket.socket(socket.AF_UNIX).connect("srv.sock"))',
        `attempt("unix-abstract", lambda: socket.socket(socket.AF_UNIX).connect("\\0${abstractName}"))`,
        'attempt("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))',
        'attempt("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))',
        'attempt("packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))',
        'attempt("dns", lambda: socket.getaddrinfo("example.com", 80))',
      ].join('\n');
      const r = await py(x, code);
      const d = contained(r);
      expect(String(d.stdout).match(/^refused /gm)).toHaveLength(9);
      contained(await sh(x, `printf x > /dev/tcp/127.0.0.1/${tcpPort} && echo ESCAPED\ngit ls-remote http://127.0.0.1:${tcpPort}/ && echo ESCAPED`));
      await new Promise((r2) => setTimeout(r2, 200));
      expect(reached).toBe(0);
    } finally {
      tcp.close();
      udp.close();
      unixIn.close();
      unixAbstract.close();
    }
  });

  it('starting any other program from Python: os.system, subprocess, ctypes execve, an ELF in the zone, the loader, memfd', async () => {
    const x = arena();
    // An ELF the user put in the zone (any function can write one): a copy of cat.
    x.put('mycat', fs.readFileSync('/bin/cat'), 0o755);
    const secret = path.join(x.outside, 'secret.txt');
    const code = String.raw`
import ctypes, os, shutil, subprocess
def attempt(name, fn):
    try:
        fn()
        print("ESCAPED", name)
    except Exception as e:
        print("refused", name, type(e).__name__)
def system():
    if os.system("echo hi > sys.txt") != 0: raise OSError("system failed")
attempt("os.system", system)
attempt("subprocess", lambda: subprocess.run(["/bin/ls"], check=True))
attempt("shell=True", lambda: subprocess.run("ls", shell=True, check=True))
libc = ctypes.CDLL(None, use_errno=True)
def ctypes_exec():
    argv = (ctypes.c_char_p * 2)(b"/bin/ls", None)
    libc.execve(b"/bin/ls", argv, None)
    raise OSError(ctypes.get_errno(), "execve")
attempt("ctypes-execve", ctypes_exec)
attempt("zone-elf", lambda: subprocess.run(["./mycat", "mycat"], check=True, stdout=subprocess.DEVNULL))
attempt("read-perl", lambda: open("/usr/bin/perl", "rb").read())
attempt("loader-perl", lambda: subprocess.run(["${LOADER}", "/usr/bin/perl", "-e", "print 1"], check=True))
# The loader maps what it can read, so an ELF of the zone runs through it; under the same wall.
attempt("loader-zone-elf-secret", lambda: subprocess.run(["${LOADER}", "./mycat", "${secret}"], check=True))
def memfd():
    fd = os.memfd_create("x")
    os.write(fd, open("mycat", "rb").read())
    os.execve(fd, ["cat"], {})
attempt("memfd-fexecve", memfd)
def execveat():
    r = libc.syscall(322, -100, b"mycat", None, None, 0)
    raise OSError(ctypes.get_errno(), "execveat")
attempt("execveat", execveat)
def tmp_elf():
    shutil.copy("mycat", "/tmp/x"); os.chmod("/tmp/x", 0o755)
    subprocess.run(["/tmp/x", "mycat"], check=True, stdout=subprocess.DEVNULL)
attempt("tmp-elf", tmp_elf)
`;
    const d = contained(await py(x, code));
    expect(String(d.stdout).match(/^refused /gm)?.length, String(d.stdout)).toBe(11);
    expect(fs.existsSync(path.join(x.zone, 'sys.txt'))).toBe(false);
  });

  it('signals to other processes fail; no ptrace; a setsid + double-fork daemon is killed with the call', async () => {
    const x = arena();
    const victim: ChildProcess = spawn('sleep', ['1000'], { stdio: 'ignore' });
    try {
      const code = [
        'import os, signal, ctypes',
        `for pid in (${victim.pid}, ${process.pid}, 1):`,
        '    try:',
        '        os.kill(pid, signal.SIGKILL); print("ESCAPED kill", pid)',
        '    except Exception as e:',
        '        print("refused", pid, type(e).__name__)',
        'libc = ctypes.CDLL(None, use_errno=True)',
        `print("ESCAPED ptrace" if libc.ptrace(16, ${victim.pid}, None, None) == 0 else "refused ptrace")`,
      ].join('\n');
      contained(await py(x, code));
      contained(await sh(x, `kill -9 ${victim.pid} && echo ESCAPED`));
      expect(victim.exitCode).toBeNull();
      expect(victim.signalCode).toBeNull();
      // The daemon ticks into a file of the zone; after the call it must stop.
      const daemon = [
        'import os, time',
        'if os.fork() == 0:',
        '    try: os.setsid()',
        '    except OSError: pass',
        '    if os.fork() == 0:',
        '        os.close(1); os.close(2)',
        '        while True:',
        '            with open("tick.txt", "a") as f: f.write("t")',
        '            time.sleep(0.05)',
        '    os._exit(0)',
        'time.sleep(0.3)',
        'print("parent done")',
      ].join('\n');
      expect((await py(x, daemon)).data?.stdout).toContain('parent done');
      const size = () => fs.statSync(path.join(x.zone, 'tick.txt')).size;
      const first = size();
      await new Promise((r) => setTimeout(r, 1000));
      expect(size(), 'the daemon is still writing after its call ended').toBe(first);
    } finally {
      victim.kill('SIGKILL');
    }
  });

  it('no setuid/setgid files and no device nodes: chmod 4755, install -m 4755, mknod', async () => {
    const x = arena();
    x.put('f.txt', 'x\n');
    contained(await py(x, tryEach(['f.txt'], 'os.chmod(t, 0o4755)') + tryEach(['g.txt'], 'os.close(os.open(t, os.O_CREAT | os.O_WRONLY, 0o6755))') + tryEach(['null'], 'os.mknod(t, 0o666 | 0o020000, os.makedev(1, 3))') + tryEach(['blk'], 'os.mknod(t, 0o666 | 0o060000, os.makedev(8, 0))')));
    contained(await sh(x, 'install -m 4755 f.txt s.txt && echo ESCAPED\ncp f.txt c.txt'));
    for (const name of fs.readdirSync(x.zone)) {
      const st = fs.lstatSync(path.join(x.zone, name));
      expect(st.mode & 0o6000, name).toBe(0);
      expect(st.isCharacterDevice() || st.isBlockDevice(), name).toBe(false);
    }
  });

  it('fork, thread, memory, output and disk bombs are contained, and another user is served right after', async () => {
    const x = makeArena(mode, { ...ON, quota_per_user_mb: 50 });
    a = x;
    // Another user of the same process (its own storage, so the arena's view stays still).
    const other = makeShed({ sandbox: mode });
    const bombs: [string, () => Promise<{ success: boolean; data?: Record<string, unknown>; error?: { code: string } }>][] = [
      ['python fork bomb', () => py(x, 'import os\nwhile True:\n    try: os.fork()\n    except OSError: pass\n', { timeout: 10 })],
      ['shell fork bomb', () => sh(x, 'b() { b | b & }; b', { timeout: 10 })],
      ['thread bomb', () => py(x, 'import threading, time\nwhile True:\n    threading.Thread(target=time.sleep, args=(100,), daemon=True).start()\n', { timeout: 10 })],
      ['memory bomb', () => py(x, 'a = []\nwhile True: a.append(bytearray(64 << 20))\n', { timeout: 20 })],
      ['memory across processes', () => py(x, 'import os, time\nfor _ in range(16):\n    if os.fork() == 0:\n        b = bytearray(300 << 20)\n        for i in range(0, len(b), 4096): b[i] = 1\n        time.sleep(30); os._exit(0)\ntime.sleep(30)\n', { timeout: 40 })],
      ['output bomb', () => py(x, 'import sys\nwhile True: sys.stdout.write("x" * 65536)\n', { timeout: 20 })],
      ['shell output bomb', () => sh(x, 'yes', { timeout: 20 })],
      ['disk bomb (quota)', () => py(x, 'i = 0\nwhile True:\n    open(f"f{i}.bin", "wb").write(b"x" * (4 << 20)); i += 1\n', { timeout: 30 })],
      ['/tmp bomb', () => py(x, 'i = 0\nwhile True:\n    open(f"/tmp/f{i}", "wb").write(b"x" * (4 << 20)); i += 1\n', { timeout: 30 })],
      ['/dev/shm bomb', () => sh(x, 'i=0; while true; do head -c 4194304 /dev/zero > /dev/shm/f$i || exit 3; i=$((i+1)); done', { timeout: 30 })],
    ];
    for (const [name, bomb] of bombs) {
      const t0 = Date.now();
      const r = await bomb();
      // Contained: it ended (stopped, failed or timed out), well before a minute.
      expect(Date.now() - t0, name).toBeLessThan(60_000);
      // A fork bomb whose shell returned at once may end with 0: its processes were killed with the call.
      if (r.success && !name.includes('fork')) expect(r.data!.returncode, `${name}: ${JSON.stringify(r.data).slice(0, 300)}`).not.toBe(0);
      else if (!r.success) expect(['TIMEOUT', 'QUOTA_EXCEEDED'], name).toContain(r.error!.code);
      // Nothing of it is left running (its processes worked in the zone).
      expect(processesIn(x.zone), name).toEqual([]);
      const served = await other.call('shed_exec', { zone: 'storage', cmd: 'echo', args: ['alive'] }, { user: 'bob' });
      expect(served.data?.stdout, `${name}: ${JSON.stringify(served)}`).toBe('alive\n');
    }
    other.cleanup();
    const usage = await x.s.call('shed_stats', {});
    expect(usage.success).toBe(true);
    expect(fs.readdirSync(x.zone).filter((n) => n.endsWith('.bin')).reduce((n, f) => n + fs.statSync(path.join(x.zone, f)).size, 0)).toBeLessThanOrEqual(50 * 1024 * 1024);
  }, 600_000);
});

describe.each(KERNEL_MODES)('%s mode: group spaces', (mode) => {
  it("another owner's group files: neither Python nor the shell changes, replaces or removes them", async () => {
    const g = await groupShed({ sandbox: mode, ...ON });
    try {
      const team = { zone: 'group', group: 'team' };
      for (const [file, fileMode] of [['ro.txt', 'owner_ro'], ['mine.txt', 'owner']]) {
        expect((await g.call('shed_create_file', { ...team, path: file, content: `alice ${file}\n`, mode: fileMode })).success).toBe(true);
      }
      const targets = ['ro.txt', 'mine.txt'];
      const py = await g.call('shed_run_python', { ...team, code: tryEach(targets, 'open(t, "a").write("bob")') + tryEach(targets, 'os.rename(t, t + ".moved")') + tryEach(targets, 'os.unlink(t)') + tryEach(targets, 'os.truncate(t, 0)') }, { user: 'bob' });
      expect(py.success, JSON.stringify(py)).toBe(true);
      const shell = await g.call('shed_run_shell', { ...team, script: 'echo bob >> ro.txt; echo bob > mine.txt; mv ro.txt gone.txt; rm -f mine.txt; cp /dev/null ro.txt; touch -d 2000-01-01 ro.txt' }, { user: 'bob' });
      expect(shell.success, JSON.stringify(shell)).toBe(true);
      expect(read(g.groupPath('ro.txt'))).toBe('alice ro.txt\n');
      expect(read(g.groupPath('mine.txt'))).toBe('alice mine.txt\n');
    } finally {
      g.cleanup();
    }
  });
});
