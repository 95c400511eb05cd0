/**
 * shed_run_python end to end, with real Python processes, in both kernel modes: a pandas clean and a
 * matplotlib chart land in the zone, in files_changed and in one commit of Documents; errors teach
 * (the line of a SyntaxError or traceback, the modules there are, the valve that allows the network,
 * no other program); read-only Uploads, blocked files, group ownership, the quota and the timeout hold
 * as for commands; off by default and refused outside a kernel sandbox.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { groupShed, read } from '../groups/setup.js';
import { makeShed, type Shed } from '../helpers/shed.js';
import { KERNEL_MODES, ok, ran } from './helpers.js';

const ON = { allow_python: true };

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe.each(KERNEL_MODES)('%s mode', (mode) => {
  let s: Shed;
  afterEach(() => s?.cleanup());

  it('cleans a CSV with pandas and saves a chart: both in the zone, in files_changed and in one commit of Documents', async () => {
    s = makeShed({ sandbox: mode, ...ON });
    fs.mkdirSync(s.zonePath('documents'), { recursive: true });
    fs.writeFileSync(s.zonePath('documents', 'sales.csv'), 'region,amount\nnorth, 10\nsouth,\nnorth,5\n south ,7\n');
    // Uploaded earlier: a file changed within 100 ms before a call counts as changed by it (coarse timestamps).
    await new Promise((resolve) => setTimeout(resolve, 300));
    const code = [
      'import pandas as pd',
      'import matplotlib.pyplot as plt',
      "df = pd.read_csv('sales.csv')",
      "df['region'] = df['region'].str.strip()",
      "df = df.dropna(subset=['amount'])",
      "df.to_csv('clean.csv', index=False)",
      "totals = df.groupby('region')['amount'].sum()",
      "totals.plot(kind='bar')",
      "plt.savefig('charts/totals.png')",
      'print(totals.to_dict())',
    ].join('\n');
    fs.mkdirSync(s.zonePath('documents', 'charts'));
    const d = ran(await s.call('shed_run_python', { zone: 'documents', code }));
    expect(d.stdout).toContain("'north': 15.0");
    expect(d.sandbox).toBe(mode);
    expect(d.files_changed).toEqual(['charts/totals.png', 'clean.csv']);
    expect(fs.readFileSync(s.zonePath('documents', 'clean.csv'), 'utf8')).toBe('region,amount\nnorth,10.0\nnorth,5.0\nsouth,7.0\n');
    expect(fs.readFileSync(s.zonePath('documents', 'charts/totals.png')).subarray(0, 8)).toEqual(PNG);
    const docs = path.dirname(s.zonePath('documents'));
    const log = execFileSync('git', ['--git-dir=git', '--work-tree=data', 'log', '--format=%s', '--name-only'], { cwd: docs, encoding: 'utf8' });
    const commits = log.split('\n').filter((l) => l.startsWith('Run Python'));
    expect(commits, log).toEqual(['Run Python: import pandas as pd']);
    expect(log).toContain('charts/totals.png');
    expect(log).toContain('clean.csv');
    expect(execFileSync('git', ['--git-dir=git', '--work-tree=data', 'status', '--porcelain', '--', 'clean.csv', 'charts'], { cwd: docs, encoding: 'utf8' })).toBe('');
  });

  it('runs a .py file of the zone with args; it imports a module beside it; HOME and TMPDIR are its own and empty', async () => {
    s = makeShed({ sandbox: mode, ...ON });
    fs.mkdirSync(s.zonePath('storage', 'tools'), { recursive: true });
    fs.writeFileSync(s.zonePath('storage', 'tools/helper.py'), 'def twice(x):\n    return 2 * x\n');
    fs.writeFileSync(
      s.zonePath('storage', 'tools/main.py'),
      'import os, sys, tempfile\nfrom helper import twice\nprint(twice(int(sys.argv[1])), sys.argv[2])\nprint(sorted(os.listdir(os.environ["HOME"])))\nprint(os.environ["MPLBACKEND"], os.getcwd())\nwith tempfile.NamedTemporaryFile() as f: f.write(b"x")\nprint(sorted(os.environ))\n',
    );
    process.env.FILESHED_TEST_SECRET = 'server-only-value';
    try {
      const d = ran(await s.call('shed_run_python', { zone: 'storage', path: 'tools/main.py', args: ['21', 'two words'] }));
      const lines = d.stdout.split('\n');
      expect(lines[0]).toBe('42 two words');
      expect(lines[1]).toBe('[]');
      expect(lines[2]).toBe('Agg /zone');
      expect(d.stdout).not.toContain('FILESHED_TEST_SECRET');
      expect(d.stdout).not.toContain('server-only-value');
      expect(d.files_changed).toEqual([]);
    } finally {
      delete process.env.FILESHED_TEST_SECRET;
    }
    const notPy = await s.call('shed_run_python', { zone: 'storage', path: 'tools/helper.txt' });
    expect(notPy.success).toBe(false);
  });

  it('stdout_file saves the output in the zone (listed in files_changed); max_output cuts what is shown and says so', async () => {
    s = makeShed({ sandbox: mode, ...ON });
    const saved = ran(await s.call('shed_run_python', { zone: 'storage', code: 'for i in range(3): print(i)', stdout_file: 'out/numbers.txt' }));
    expect(fs.readFileSync(s.zonePath('storage', 'out/numbers.txt'), 'utf8')).toBe('0\n1\n2\n');
    expect(saved.files_changed).toEqual(['out/numbers.txt']);
    const cut = ran(await s.call('shed_run_python', { zone: 'storage', code: 'print("x" * 5000)', max_output: 100 }));
    expect(cut.truncated).toBe(true);
    expect(cut.stdout.length).toBeLessThan(1000);
    expect(cut.stdout).toMatch(/stdout_file|head|tail/);
  });

  it('a SyntaxError and a traceback come back as stderr, and the message names the error and its line', async () => {
    s = makeShed({ sandbox: mode, ...ON });
    const syntax = ok(await s.call('shed_run_python', { zone: 'storage', code: 'x = 1\nif x\n    print(x)\n' }));
    expect(syntax.returncode).toBe(1);
    expect(syntax.stderr).toContain('SyntaxError');
    expect(syntax.stderr).toContain('line 2');
    const r = await s.call('shed_run_python', { zone: 'storage', code: 'a = 1\nb = 0\nprint(a / b)\n' });
    const d = ok(r);
    expect(d.returncode).toBe(1);
    expect(d.stderr).toMatch(/File "\/tmp\/main\.py", line 3/);
    expect(d.stderr).not.toContain(s.base);
    expect(r.message).toContain('ZeroDivisionError: division by zero');
    expect(r.message).toContain('line 3');
  });

  it('a missing module is named with the modules that are installed', async () => {
    s = makeShed({ sandbox: mode, ...ON });
    const r = await s.call('shed_run_python', { zone: 'storage', code: 'import sklearnish_not_here\n' });
    expect(ok(r).returncode).toBe(1);
    expect(r.message).toContain("'sklearnish_not_here' is not installed");
    expect(r.message).toMatch(/pandas \d/);
    expect(r.message).toMatch(/numpy \d/);
  });

  it('no other program starts: subprocess, os.system and os.execv fail and the message says why', async () => {
    s = makeShed({ sandbox: mode, ...ON });
    const code = [
      'import os, subprocess',
      'for argv in (["/bin/ls"], ["/bin/sh", "-c", "echo hi"], ["/usr/bin/perl", "-e", "print 1"]):',
      '    try:',
      '        subprocess.run(argv)',
      '        print("RAN", argv)',
      '    except PermissionError as e:',
      '        print("refused", argv[0], e.errno)',
      'print("system", os.system("echo escaped"))',
      'os.execv("/bin/ls", ["ls"])',
    ].join('\n');
    const r = await s.call('shed_run_python', { zone: 'storage', code });
    const d = ok(r);
    expect(d.stdout).not.toContain('RAN');
    expect(d.stdout).not.toContain('escaped');
    expect(d.stdout.match(/^refused /gm)).toHaveLength(3);
    expect(d.stdout).toMatch(/^system [1-9]/m);
    expect(d.returncode).toBe(1);
    expect(r.message).toContain('may start no other program');
  });

  it('the data stack works (numpy, an xlsx through openpyxl and pandas, a chart); a process pool is refused and the message says what works', async () => {
    s = makeShed({ sandbox: mode, ...ON });
    const code = 'import numpy as np, openpyxl, pandas as pd, matplotlib.pyplot as plt\nwb = openpyxl.Workbook(); wb.active.append(["a", "b"]); wb.active.append([1, 2]); wb.save("t.xlsx")\nprint(pd.read_excel("t.xlsx").to_dict("records"), int(np.arange(5).sum()))\nplt.plot([1, 2]); plt.savefig("p.png")\n';
    const d = ran(await s.call('shed_run_python', { zone: 'storage', code }));
    expect(d.stdout).toBe("[{'a': 1, 'b': 2}] 10\n");
    expect(d.files_changed).toEqual(['p.png', 't.xlsx']);
    const pool = await s.call('shed_run_python', { zone: 'storage', code: 'import multiprocessing as mp\nwith mp.Pool(2) as p:\n    print(p.map(abs, [-1]))\n' });
    expect(ok(pool).returncode).toBe(1);
    expect(pool.message).toContain('ThreadPoolExecutor');
  });

  it('no network unless network_mode is "all" ("safe" counts as off), and the message names the valve', async () => {
    const server = net.createServer((c) => c.end('hello from the host\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const code = `import socket\ns = socket.create_connection(("127.0.0.1", ${port}), timeout=5)\nprint(s.recv(100).decode())\n`;
    try {
      for (const network_mode of ['disabled', 'safe']) {
        s = makeShed({ sandbox: mode, ...ON, network_mode });
        const r = await s.call('shed_run_python', { zone: 'storage', code });
        expect(ok(r).returncode, r.message).toBe(1);
        expect(r.data!.stdout).not.toContain('hello');
        expect(r.message).toContain('network_mode="all"');
        s.cleanup();
      }
      s = makeShed({ sandbox: mode, ...ON, network_mode: 'all' });
      // With the network on, bwrap shares the host's network namespace: loopback is the host's.
      expect(ran(await s.call('shed_run_python', { zone: 'storage', code })).stdout).toContain('hello from the host');
    } finally {
      server.close();
    }
  });

  it('read-only Uploads: code reads there and writes nothing', async () => {
    s = makeShed({ sandbox: mode, ...ON });
    fs.mkdirSync(s.zonePath('uploads'), { recursive: true });
    fs.writeFileSync(s.zonePath('uploads', 'in.csv'), 'a,b\n1,2\n');
    const d = ok(await s.call('shed_run_python', { zone: 'uploads', code: 'print(open("in.csv").read().strip())\nopen("new.txt", "w").write("x")\n' }));
    expect(d.stdout).toContain('a,b');
    expect(d.returncode).toBe(1);
    expect(d.stderr).toMatch(/Read-only file system|Permission denied/);
    expect(fs.existsSync(s.zonePath('uploads', 'new.txt'))).toBe(false);
    expect(d.files_changed).toEqual([]);
  });

  it('blocked files are out of reach by name, link and ".."; the script cannot take their place', async () => {
    s = makeShed({ sandbox: mode, ...ON, blocked_patterns: '*.key, secrets/' });
    fs.mkdirSync(s.zonePath('storage', 'secrets'), { recursive: true });
    fs.writeFileSync(s.zonePath('storage', 'id.key'), 'KEY-CONTENT\n');
    fs.writeFileSync(s.zonePath('storage', 'secrets/pw.txt'), 'PW-CONTENT\n');
    const code = [
      'import os',
      'for p in ("id.key", "secrets/pw.txt", "x/../id.key", "./secrets/../id.key"):',
      '    try:',
      '        print("READ", open(p).read())',
      '    except OSError as e:',
      '        print("no", p, type(e).__name__)',
      'for p in ("id.key",):',
      '    try:',
      '        os.link(p, "copy.txt")',
      '    except OSError as e:',
      '        print("no link", type(e).__name__)',
      'os.symlink("id.key", "sym.txt")',
      'try:',
      '    print("READ", open("sym.txt").read())',
      'except OSError as e:',
      '    print("no sym", type(e).__name__)',
      'open("id.key", "w").write("replaced")',
    ].join('\n');
    const d = ok(await s.call('shed_run_python', { zone: 'storage', code }));
    expect(d.stdout).not.toContain('READ');
    expect(JSON.stringify(d)).not.toContain('KEY-CONTENT');
    expect(JSON.stringify(d)).not.toContain('PW-CONTENT');
    expect(fs.readFileSync(s.zonePath('storage', 'id.key'), 'utf8')).toBe('KEY-CONTENT\n');
    expect(fs.readFileSync(s.zonePath('storage', 'secrets/pw.txt'), 'utf8')).toBe('PW-CONTENT\n');
  });

  it("another owner's read-only group file stays as it was; what the caller makes there is the caller's", async () => {
    const g = await groupShed({ sandbox: mode, ...ON, group_default_mode: 'owner' });
    s = g;
    const team = { zone: 'group', group: 'team' };
    ok(await g.call('shed_create_file', { ...team, path: 'f.txt', content: 'alice wrote this\n', mode: 'owner_ro' }));
    const code = 'for p in ("f.txt",):\n    try:\n        open(p, "w").write("bob was here")\n    except OSError as e:\n        print("no", type(e).__name__)\nopen("bob.txt", "w").write("mine")\n';
    const d = ok(await g.call('shed_run_python', { ...team, code }, { user: 'bob' }));
    expect(read(g.groupPath('f.txt'))).toBe('alice wrote this\n');
    expect(d.files_changed).toContain('bob.txt');
    // bob's new file is his (group_default_mode "owner"): alice's code cannot change it.
    ok(await g.call('shed_run_python', { ...team, code: 'try:\n    open("bob.txt", "w").write("alice")\nexcept OSError as e:\n    print(type(e).__name__)\n' }));
    expect(read(g.groupPath('bob.txt'))).toBe('mine');
  });

  it('writing past the quota is stopped and undone; a timeout stops it and says so', async () => {
    s = makeShed({ sandbox: mode, ...ON, quota_per_user_mb: 5 });
    // One file stops at the quota left (its file size limit), and the message says why.
    const one = await s.call('shed_run_python', { zone: 'storage', code: 'with open("big.bin", "wb") as f:\n    for _ in range(64):\n        f.write(b"x" * (1 << 20))\n' });
    expect(ok(one).returncode).toBe(1);
    expect(one.message).toContain('File too large');
    expect(one.message).toMatch(/quota/);
    expect(fs.statSync(s.zonePath('storage', 'big.bin')).size).toBeLessThanOrEqual(5 * 1024 * 1024);
    ok(await s.call('shed_delete', { zone: 'storage', path: 'big.bin' }));
    // Many files pass it together: stopped by the per-call watch, and what it added is removed again.
    const many = await s.call('shed_run_python', { zone: 'storage', code: 'import os\nos.mkdir("parts")\nfor i in range(64):\n    open(f"parts/{i}.bin", "wb").write(b"x" * (1 << 20))\n' });
    expect(many.error?.code, JSON.stringify(many)).toBe('QUOTA_EXCEEDED');
    expect(fs.existsSync(s.zonePath('storage', 'parts'))).toBe(false);
    const t0 = Date.now();
    const slow = await s.call('shed_run_python', { zone: 'storage', code: 'open("before.txt", "w").write("x")\nwhile True: pass\n', timeout: 2 });
    expect(slow.error?.code).toBe('TIMEOUT');
    expect(slow.error?.details?.files_changed).toEqual(['before.txt']);
    expect(Date.now() - t0).toBeLessThan(20_000);
  });
});

describe('off, or without a kernel sandbox', () => {
  let s: Shed;
  afterEach(() => s?.cleanup());

  it('off by default: FUNCTION_DISABLED naming allow_python, and absent from shed_help', async () => {
    s = makeShed({ sandbox: 'landlock' });
    const r = await s.call('shed_run_python', { zone: 'storage', code: 'print(1)' });
    expect(r.error?.code).toBe('FUNCTION_DISABLED');
    expect(r.error?.message).toContain('allow_python');
    expect(JSON.stringify(await s.call('shed_help', {}))).not.toContain('shed_run_python');
    s.cleanup();
    s = makeShed({ sandbox: 'landlock', ...ON });
    expect(JSON.stringify(await s.call('shed_help', {}))).toContain('shed_run_python');
  });

  it('validated mode refuses with SANDBOX_UNAVAILABLE saying what to enable', async () => {
    s = makeShed({ sandbox: 'validated', ...ON });
    const r = await s.call('shed_run_python', { zone: 'storage', code: 'open("x.txt", "w").write("x")' });
    expect(r.error?.code).toBe('SANDBOX_UNAVAILABLE');
    expect(r.error?.hint).toMatch(/sandbox.*(auto|bwrap|landlock)/);
    expect(fs.existsSync(s.zonePath('storage', 'x.txt'))).toBe(false);
  });

  it('shed_parameters lists the Python version and which of the data stack imports', async () => {
    s = makeShed({ sandbox: 'landlock', ...ON });
    const d = ok(await s.call('shed_parameters', {}));
    const py = d.code_execution.python;
    expect(py.enabled).toBe(true);
    expect(py.version).toMatch(/^3\.\d+\.\d+$/);
    expect(py.version).toBe(execFileSync('/usr/bin/python3', ['-c', 'import platform; print(platform.python_version())'], { encoding: 'utf8' }).trim());
    for (const name of ['numpy', 'pandas', 'matplotlib', 'openpyxl']) expect(py.packages[name], name).toMatch(/^\d+\.\d+/);
    expect(d.code_execution.shell.enabled).toBe(false);
  });
});
