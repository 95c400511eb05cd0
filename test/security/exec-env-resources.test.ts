/**
 * Environment leakage (the server's environment never reaches a command; its HOME is a fresh empty
 * folder of the call, not the zone) and resource abuse (floods, endless output into a file, memory
 * and CPU hogs, sleeping past the timeout), in every mode. Configuration files planted for each
 * program are in exec-config-files.test.ts.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expectOk, expectRan, expectRefused, makeArena, MODES, SECRET, type Arena } from './exec-harness.js';

const MIB = 1024 * 1024;

beforeAll(() => {
  process.env.FILESHED_TEST_SECRET = SECRET;
});
afterAll(() => {
  delete process.env.FILESHED_TEST_SECRET;
});

/** Sleep durations this test process alone uses, so another run of this file on the machine is not mistaken for a leftover. */
const SLEEP_A = String(100_000 + (process.pid % 100_000) * 2);
const SLEEP_B = String(100_001 + (process.pid % 100_000) * 2);
/** Arguments only this test process uses, for the same reason (other suites run yes and tail -f too). */
const FLOOD = `flood-${process.pid}`;
const LOG = `log-${process.pid}.txt`;

/** Command lines of every process on the machine (the sandbox's PID namespace is visible from here). */
function processArgs(): string {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
}

describe.each(MODES)('%s mode', (mode) => {
  let a: Arena;
  afterEach(() => a.finish());

  describe('environment', () => {
    it('the secret is in this process environment (so the tests below mean something)', () => {
      a = makeArena(mode);
      expect(process.env.FILESHED_TEST_SECRET).toBe(SECRET);
    });

    it.each([
      ['printenv', []],
      ['printenv', ['FILESHED_TEST_SECRET']],
      ['env', []],
      ['awk', ['BEGIN { print ENVIRON["FILESHED_TEST_SECRET"] }']],
      ['awk', ['BEGIN { for (k in ENVIRON) print k "=" ENVIRON[k] }']],
      ['cat', ['/proc/self/environ']],
      ['cat', ['/proc/1/environ']],
      ['strings', ['/proc/self/environ']],
      ['cat', ['../../../../../../../../proc/self/environ']],
      ['xxd', ['../../../../../../../../../proc/self/environ']],
      ['sh', ['-c', 'echo $FILESHED_TEST_SECRET']],
    ] as [string, string[]][])('%s %j is refused', async (cmd, args) => {
      a = makeArena(mode);
      expectRefused(await a.exec({ zone: 'storage', cmd, args }));
    });

    it('jq sees only the minimal environment: PATH, LANG, HOME and TMPDIR of the call (no server variables)', async () => {
      a = makeArena(mode);
      const d = expectRan(await a.exec({ zone: 'storage', cmd: 'jq', args: ['-n', '-c', 'env'] }));
      const env = JSON.parse(d.stdout) as Record<string, string>;
      expect(env.FILESHED_TEST_SECRET).toBeUndefined();
      // HOME is an empty folder of the call: in bubblewrap's private /tmp, else outside the zone and named
      // relative to it, so no variable holds a server path.
      if (mode === 'bwrap') expect([env.HOME, env.TMPDIR]).toEqual(['/tmp/home', '/tmp']);
      else {
        expect(env.HOME).toMatch(/^(\.\.\/)+shed-call-[^/]+\/home$/);
        expect(env.TMPDIR).toBe(env.HOME!.replace(/home$/, 'tmp'));
      }
      expect(env.PATH).toBe('/usr/local/bin:/usr/bin:/bin');
      const allowed = ['PATH', 'LANG', 'LC_ALL', 'HOME', 'TMPDIR', 'TERM', 'PAGER', 'GIT_PAGER', 'LESSSECURE', 'LESSKEYIN', 'LESSKEY', 'LESSHISTFILE'];
      allowed.push('XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_CACHE_HOME', 'PYTHONNOUSERSITE', 'PYTHONDONTWRITEBYTECODE', 'PYTHONSAFEPATH', 'TAR_OPTIONS', 'MAGICK_CONFIGURE_PATH', 'LDAPNOINIT');
      if (mode === 'bwrap') allowed.push('PWD'); // bubblewrap's own: /zone
      for (const key of Object.keys(env)) expect(allowed).toContain(key);
      expect(d.stdout).not.toContain(a.zone); // no disk path of the zone
    });

    it('dotfiles in the zone cannot run programs: .lesskey, .sqliterc', async () => {
      a = makeArena(mode);
      a.put('f.txt', 'hello\n');
      a.put('.lesskey', `#env\nLESSOPEN=|touch ${a.outside}/pwn-less %s\nLESSCLOSE=touch ${a.outside}/pwn-less2\n`);
      a.put('.sqliterc', `.shell touch ${a.outside}/pwn-sqlite\n.system touch ${a.outside}/pwn-sqlite2\n`);
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'less', args: ['f.txt'] })).stdout).toBe('hello\n');
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'more', args: ['f.txt'] })).stdout).toContain('hello');
      expect(expectRan(await a.exec({ zone: 'storage', cmd: 'sqlite3', args: ['db.sqlite', 'select 41+1'] })).stdout).toBe('42\n');
      expect(fs.readdirSync(a.outside).sort()).toEqual(['db.sqlite', 'dir', 'secret.txt']);
    });

    it('.curlrc and .wgetrc in the zone are not read (network_mode "safe")', async () => {
      a = makeArena(mode, { network_mode: 'safe' });
      a.put('.curlrc', `url = "file://${a.outside}/secret.txt"\noutput = "${a.outside}/pwn-curl"\n`);
      a.put('.wgetrc', `output_document = ${a.outside}/pwn-wget\n`);
      const c = expectOk(await a.exec({ zone: 'storage', cmd: 'curl', args: ['-o', 'c.out', 'http://127.0.0.1:9/'], timeout: 20 }));
      expect(c.returncode).not.toBe(0);
      const w = expectOk(await a.exec({ zone: 'storage', cmd: 'wget', args: ['-O', 'w.out', 'http://127.0.0.1:9/'], timeout: 20 }));
      expect(w.returncode).not.toBe(0);
      expect(fs.readdirSync(a.outside).sort()).toEqual(['db.sqlite', 'dir', 'secret.txt']);
    });
  });

  describe('resources', () => {
    it('an endless `yes` is stopped, and the server keeps running meanwhile', async () => {
      a = makeArena(mode);
      let ticks = 0;
      const timer = setInterval(() => ticks++, 20);
      const started = Date.now();
      const r = await a.exec({ zone: 'storage', cmd: 'yes', args: [FLOOD], timeout: 20 });
      clearInterval(timer);
      const d = expectOk(r);
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(d.stopped).toMatch(/endless output/);
      expect(d.truncated).toBe(true);
      expect(d.stdout.length).toBeLessThan(60_000);
      expect(d.stdout).toContain('TRUNCATED');
      expect(d.returncode).not.toBe(0);
      expect(ticks).toBeGreaterThan(0); // the event loop was never blocked
      expect(processArgs()).not.toContain(`yes ${FLOOD}`);
    });

    it('endless output into stdout_file stops at the quota (1 MiB) and the call returns', async () => {
      a = makeArena(mode, { quota_per_user_mb: 1 });
      const started = Date.now();
      const d = expectOk(await a.exec({ zone: 'storage', cmd: 'yes', args: ['0123456789'], stdout_file: 'flood.txt', timeout: 30 }));
      expect(Date.now() - started).toBeLessThan(20_000);
      const size = fs.statSync(path.join(a.zone, 'flood.txt')).size;
      expect(size).toBeLessThanOrEqual(MIB);
      expect(size).toBeGreaterThan(MIB / 2);
      expect(d.stdout_file_size).toBe(size);
      expect(d.returncode).not.toBe(0); // stopped by the file size limit
      expect(fs.readdirSync(a.zone)).toEqual(['flood.txt']); // no temp file left
    });

    it('a command cannot grow a file past the quota either (cp of a big file)', async () => {
      a = makeArena(mode, { quota_per_user_mb: 1 });
      a.put('big.bin', Buffer.alloc(700 * 1024, 7));
      const d = expectOk(await a.exec({ zone: 'storage', cmd: 'cp', args: ['big.bin', 'copy.bin'] }));
      expect(d.returncode).not.toBe(0);
      expect(fs.statSync(path.join(a.zone, 'copy.bin')).size).toBeLessThanOrEqual(MIB - 700 * 1024 + 4096);
    });

    it('a memory hog is stopped by the memory limit', async () => {
      a = makeArena(mode, { exec_memory_limit_mb: 64 });
      const started = Date.now();
      const d = expectOk(await a.exec({ zone: 'storage', cmd: 'awk', args: ['BEGIN { s = "x"; while (1) { a[i++] = s; s = s s } }'], timeout: 60 }));
      expect(d.returncode).not.toBe(0);
      expect(Date.now() - started).toBeLessThan(30_000);
    });

    it('sort asking for a 2 GiB buffer under a 64 MiB limit stays inside it (it shrinks the buffer) and still sorts', async () => {
      a = makeArena(mode, { exec_memory_limit_mb: 64 });
      expectRan(await a.exec({ zone: 'storage', cmd: 'seq', args: ['300000', '-1', '1'], stdout_file: 'nums.txt' }));
      expectRan(await a.exec({ zone: 'storage', cmd: 'sort', args: ['-S', '2G', '-n', '-o', 'sorted.txt', 'nums.txt'], timeout: 60 }));
      const lines = fs.readFileSync(path.join(a.zone, 'sorted.txt'), 'utf8').split('\n');
      expect(lines[0]).toBe('1');
      expect(lines[299_999]).toBe('300000');
    });

    it('a CPU hog is stopped by the CPU limit', async () => {
      a = makeArena(mode, { exec_cpu_limit_seconds: 1 });
      const started = Date.now();
      const r = await a.exec({ zone: 'storage', cmd: 'awk', args: ['BEGIN { while (1) x++ }'], timeout: 60 });
      expect(expectOk(r).returncode).not.toBe(0);
      expect(r.message).toContain('FAILED');
      expect(Date.now() - started).toBeLessThan(20_000);
    });

    it('sleep past the timeout → TIMEOUT, and the whole process group is gone', async () => {
      a = makeArena(mode);
      const started = Date.now();
      const r = await a.exec({ zone: 'storage', cmd: 'sleep', args: [SLEEP_A], timeout: 1 });
      expectRefused(r, 'TIMEOUT');
      expect(r.error?.details?.timeout).toBe(1);
      expect(r.error?.hint).toContain('timeout');
      expect(Date.now() - started).toBeLessThan(10_000);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(processArgs()).not.toContain(`sleep ${SLEEP_A}`);
    });

    it('the timeout is clamped to exec_timeout_max', async () => {
      a = makeArena(mode, { exec_timeout_max: 2 });
      const started = Date.now();
      const r = await a.exec({ zone: 'storage', cmd: 'sleep', args: [SLEEP_B], timeout: 100000 });
      expectRefused(r, 'TIMEOUT');
      expect(r.error?.details?.timeout).toBe(2);
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(processArgs()).not.toContain(`sleep ${SLEEP_B}`);
    });

    it('tail -f never ends on its own: stopped by the timeout', async () => {
      a = makeArena(mode);
      a.put(LOG, 'line\n');
      const r = await a.exec({ zone: 'storage', cmd: 'tail', args: ['-f', LOG], timeout: 1 });
      expectRefused(r, 'TIMEOUT');
      expect(r.error?.details?.partial_stdout).toBe('line\n');
      expect(processArgs()).not.toContain(`tail -f ${LOG}`);
    });

    it('max_output=0 is the admin ceiling, not unlimited memory', async () => {
      a = makeArena(mode, { max_output_absolute: 100_000 });
      a.put('big.txt', 'y\n'.repeat(400_000));
      const d = expectOk(await a.exec({ zone: 'storage', cmd: 'cat', args: ['big.txt'], max_output: 0 }));
      expect(d.truncated).toBe(true);
      expect(d.stdout.startsWith('y\n'.repeat(50_000))).toBe(true);
      expect(d.stdout.length).toBeLessThan(101_000);
    });

    it('fork-style tricks are refused (find -exec, xargs, sh)', async () => {
      a = makeArena(mode);
      expectRefused(await a.exec({ zone: 'storage', cmd: 'find', args: ['.', '-exec', 'yes', ';'] }));
      expectRefused(await a.exec({ zone: 'storage', cmd: 'xargs', args: ['-P', '100', 'yes'] }));
      expectRefused(await a.exec({ zone: 'storage', cmd: 'sh', args: ['-c', ':(){ :|:& };:'] }));
    });
  });
});
