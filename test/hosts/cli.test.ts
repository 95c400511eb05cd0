/**
 * The `fileshed` command as a person meets it (dist/cli.mjs as a real process): --version, each
 * command's --help, a pipe closed early (`fileshed list | head`), runtime errors in one line and
 * usage only for usage errors, secrets given as arguments warned about, `fileshed doctor`, and a
 * server on every interface that refuses to start without the address browsers reach it at.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { CLI, serve, tempBase } from './helpers.js';
import { CHROMIUM, launchChromium } from '../helpers/chromium.js';

const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { version: string };

function cli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('basics', () => {
  it('--version prints the version', () => {
    for (const flag of ['--version', '-V']) {
      const r = cli([flag]);
      expect(r.status).toBe(0);
      expect(r.stdout.trim()).toBe(pkg.version);
    }
  });

  it("each command's --help prints that command's usage, exit 0", () => {
    for (const [command, expected] of [['serve', '--public-url URL'], ['mcp', '--import-dir DIR'], ['call', '<function>'], ['doctor', 'sandbox=auto'], ['groups', 'members <id>']] as const) {
      const r = cli([command, '--help']);
      expect(r.status, command).toBe(0);
      expect(r.stdout).toContain(`fileshed ${command}`);
      expect(r.stdout).toContain(expected);
      expect(r.stderr).toBe('');
    }
    // Only that command's usage.
    expect(cli(['serve', '--help']).stdout).not.toContain('fileshed groups');
  });

  it('a pipe closed early ends the command quietly (fileshed list | head -1)', () => {
    const r = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" "${CLI}" list | head -1`], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stdout).toMatch(/^shed_\w+\n$/);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const spec = spawnSync('bash', ['-c', `set -o pipefail; "${process.execPath}" "${CLI}" spec | head -c 10`], { encoding: 'utf8', timeout: 60_000 });
    expect(spec.stderr).toBe('');
    expect(spec.status).toBe(0);
  });

  it('runtime errors are one line; usage errors show the usage', () => {
    const noRedis = cli(['call', 'shed_tree', '{}', '--base', tempBase(), '--coordination', 'redis://127.0.0.1:1']);
    expect(noRedis.status).toBe(1);
    expect(noRedis.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^fileshed call: the coordination service redis:\/\/127\.0\.0\.1:1 does not answer/)]);

    const unknownFn = cli(['call', 'shed_nope', '{}', '--base', tempBase()]);
    expect(unknownFn.status).toBe(2); // a mistake in the command line: said with the call's usage
    expect(unknownFn.stderr).toMatch(/^fileshed call: unknown function 'shed_nope'; 'fileshed list' names them\.\n\nUsage:\n {2}fileshed call <function>/);

    const badPort = cli(['serve', '--port', 'http', '--base', tempBase()]);
    expect(badPort.status).toBe(1);
    expect(badPort.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^fileshed serve: --port must be 0-65535, got 'http'/)]);

    const unknownOption = cli(['serve', '--prot', '8765']);
    expect(unknownOption.status).toBe(2);
    expect(unknownOption.stderr).toContain('unknown option --prot');
    expect(unknownOption.stderr).toContain('fileshed serve [--host');
    expect(unknownOption.stderr).not.toContain('fileshed groups');

    const missingValue = cli(['call', 'shed_tree', '--base']);
    expect(missingValue.status).toBe(2);
    expect(missingValue.stderr).toContain('--base needs a value');
    expect(missingValue.stderr).toContain("fileshed call <function> ['<json args>']");
  });

  it('a port in use is said in one line', async () => {
    const first = await serve(['--access-log', 'off']);
    try {
      const r = cli(['serve', '--port', new URL(first.url).port, '--base', tempBase()]);
      expect(r.status).toBe(1);
      expect(r.stderr.trim()).toMatch(/^fileshed serve: port \d+ on 127\.0\.0\.1 is already in use/);
    } finally {
      await first.stop();
    }
  });
});

describe('secrets', () => {
  it('a secret given as an argument still works, with a warning saying how to pass it safely', async () => {
    const s = await serve(['--auth', 'api-key', '--api-key', 'fs_cmdline-key-0123456789', '--jwt-secret', 'j'.repeat(32), '--access-log', 'off']);
    try {
      expect(s.stderr()).toMatch(/warning: --api-key on the command line can be read by every user of this machine .*set FILESHED_API_KEY/);
      expect(s.stderr()).toMatch(/warning: --jwt-secret .*FILESHED_JWT_SECRET/);
      const r = await s.post('shed_stats', {}, { Authorization: 'Bearer fs_cmdline-key-0123456789', 'X-OpenWebUI-User-Id': 'u1' });
      expect(r.status).toBe(200);
    } finally {
      await s.stop();
    }
  });

  it('from the environment: no warning', async () => {
    const s = await serve(['--auth', 'api-key', '--access-log', 'off'], { env: { FILESHED_API_KEY: 'fs_env-key-0123456789' } });
    try {
      expect(s.stderr()).not.toContain('warning');
      const r = await s.post('shed_stats', {}, { Authorization: 'Bearer fs_env-key-0123456789', 'X-OpenWebUI-User-Id': 'u1' });
      expect(r.status).toBe(200);
    } finally {
      await s.stop();
    }
  });
});

describe('every interface', () => {
  it('--host 0.0.0.0 without a public URL is refused, saying which address to give', () => {
    const r = cli(['serve', '--host', '0.0.0.0', '--port', '0', '--auth', 'api-key', '--base', tempBase()], { FILESHED_API_KEY: 'fs_k-0123456789abcdef' });
    expect(r.status).toBe(1);
    expect(r.stdout).not.toMatch(/listening/);
    expect(r.stderr).toMatch(/--public-url/);
    expect(r.stderr).toMatch(/browser/);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('with --public-url it starts, says where links point, and links point there', async () => {
    const s = await serve(['--host', '0.0.0.0', '--auth', 'api-key', '--public-url', 'http://files.example.test:9000/', '--access-log', 'off'], { env: { FILESHED_API_KEY: 'fs_k-0123456789abcdef' } });
    try {
      expect(s.stdout.join('\n')).toContain('Links:   http://files.example.test:9000/files/');
      const port = new URL(s.url).port;
      const headers = { 'Content-Type': 'application/json', Authorization: 'Bearer fs_k-0123456789abcdef', 'X-OpenWebUI-User-Id': 'ann' };
      const post = (fn: string, body: unknown) => fetch(`http://127.0.0.1:${port}/${fn}`, { method: 'POST', headers, body: JSON.stringify(body) }).then((r) => r.json() as Promise<{ data: { url: string } }>);
      await post('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'A' });
      const link = await post('shed_link_create', { zone: 'storage', path: 'a.txt' });
      expect(link.data.url).toMatch(/^http:\/\/files\.example\.test:9000\/files\//);
      expect(await (await fetch(link.data.url.replace('http://files.example.test:9000', `http://127.0.0.1:${port}`))).text()).toBe('A');
    } finally {
      await s.stop();
    }
  });

  it.skipIf(!fs.existsSync(CHROMIUM))('a browser opens the link at the public URL (the address it reaches the server at)', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as net.AddressInfo).port;
        probe.close(() => resolve(p));
      });
    });
    const publicUrl = `http://127.0.0.1:${port}`;
    const key = 'fs_k-0123456789abcdef';
    const s = spawn(process.execPath, [CLI, 'serve', '--host', '0.0.0.0', '--port', String(port), '--auth', 'api-key', '--public-url', publicUrl, '--access-log', 'off', '--base', tempBase()], { env: { ...process.env, FILESHED_API_KEY: key }, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise((r) => s.once('exit', r));
    await new Promise<void>((resolve) => s.stdout.on('data', (d: Buffer) => d.toString().includes('listening') && resolve()));
    const chromium = await launchChromium();
    try {
      const headers = { 'Content-Type': 'application/json', Authorization: `Bearer ${key}`, 'X-OpenWebUI-User-Id': 'ann' };
      const post = (fn: string, body: unknown) => fetch(`${publicUrl}/${fn}`, { method: 'POST', headers, body: JSON.stringify(body) }).then((r) => r.json() as Promise<{ data: { url: string } }>);
      await post('shed_create_file', { zone: 'storage', path: 'shared/report.md', content: '# Report' });
      const link = await post('shed_link_create', { zone: 'storage', path: 'shared' });
      expect(link.data.url.startsWith(`${publicUrl}/files/`)).toBe(true);
      const page = await chromium.browser.newPage();
      const res = await page.goto(link.data.url);
      expect(res?.status()).toBe(200);
      expect(await page.$eval('a[href="report.md"]', (e) => e.textContent)).toContain('report.md');
    } finally {
      await chromium.close();
      s.kill('SIGTERM');
      await exited;
    }
  });

  it('a public URL that no browser can open is refused', () => {
    const r = cli(['serve', '--public-url', 'http://0.0.0.0:8765', '--port', '0', '--base', tempBase()]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/not an address a browser can open/);
  });
});

describe('fileshed doctor', () => {
  it('tells what the sandbox can do here, with the probes the server uses', () => {
    const r = cli(['doctor']);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^bubblewrap {4}(works|does not work: .+)$/m);
    expect(r.stdout).toMatch(/^Landlock {6}(works \(ABI \d+\)|does not work: .+)$/m);
    expect(r.stdout).toMatch(/^sandbox=auto {2}(runs commands under (bwrap|landlock)|refuses commands)/m);
    expect(r.stdout).toMatch(/^perl {10}\/\S+perl$/m);
    expect(r.stdout).toMatch(/^tools {9}\d+ of \d+ allowed commands installed/m);
    // The server's own verdict agrees with the doctor's.
    const auto = /runs commands under (\w+)/.exec(r.stdout)?.[1];
    const params = JSON.parse(cli(['call', 'shed_allowed_commands', '{}', '--base', tempBase()]).stdout) as { data: { sandbox: { active: string } } };
    expect(params.data.sandbox.active).toBe(auto ?? 'none (commands refused)');
    expect(r.status).toBe(auto ? 0 : 1);
  });
});

describe('fileshed call reads the config file fileshed serve uses', () => {
  it("the config file's valves apply (a blocked file stays unreadable, Python is on); --valve wins over them; --config names another file", () => {
    const base = tempBase();
    try {
      fs.mkdirSync(`${base}/users/local/Storage/data`, { recursive: true });
      fs.writeFileSync(`${base}/users/local/Storage/data/keys.secret`, 'hunter2\n');
      fs.writeFileSync(`${base}/fileshed.json`, JSON.stringify({ valves: { blocked_patterns: '*.secret', allow_python: true } }), { mode: 0o600 });
      const read = cli(['call', 'shed_read', '{"zone":"storage","path":"keys.secret"}', '--base', base]);
      expect(read.status).toBe(1);
      expect(JSON.parse(read.stdout).error.code).toBe('BLOCKED_PATH');
      expect(read.stdout).not.toContain('hunter2');
      const py = cli(['call', 'shed_run_python', '{"zone":"storage","code":"print(6*7)"}', '--base', base]);
      expect(JSON.parse(py.stdout).data?.stdout, py.stdout).toBe('42\n');
      // FILESHED_BASE finds the same base and config file.
      expect(JSON.parse(cli(['call', 'shed_read', '{"zone":"storage","path":"keys.secret"}'], { FILESHED_BASE: base }).stdout).error.code).toBe('BLOCKED_PATH');
      const flag = cli(['call', 'shed_read', '{"zone":"storage","path":"keys.secret"}', '--base', base, '--valve', 'blocked_patterns=']);
      expect(JSON.parse(flag.stdout).data.content).toContain('hunter2');
      fs.writeFileSync(`${base}/other.json`, JSON.stringify({ valves: {} }));
      expect(JSON.parse(cli(['call', 'shed_run_python', '{"zone":"storage","code":"print(1)"}', '--base', base, '--config', `${base}/other.json`]).stdout).error.code).toBe('FUNCTION_DISABLED');
      fs.writeFileSync(`${base}/fileshed.json`, '{ not json');
      const broken = cli(['call', 'shed_tree', '{"zone":"storage"}', '--base', base]);
      expect(broken.status).toBe(1);
      expect(broken.stderr).toMatch(/^fileshed call: the config file .*fileshed\.json cannot be used: .*Fix it, or name another with --config FILE\.\n$/);
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});
