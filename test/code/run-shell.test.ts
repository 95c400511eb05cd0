/**
 * shed_run_shell end to end, with real sh processes, in both kernel modes: pipes, redirections,
 * loops, here-documents and command substitution work; every program it starts is one of the zone's
 * whitelisted programs (the kernel refuses the rest: interpreters, programs off the list, a program
 * copied into the zone); files_changed and one commit in Documents; read-only Uploads; off by
 * default, refused outside a kernel sandbox.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { KERNEL_MODES, ok, ran } from './helpers.js';

const ON = { allow_shell: true };

/** An installed program that is neither whitelisted nor an interpreter. */
const OFF_LIST = ['id', 'hostname', 'ps', 'whoami'].find((p) => fs.existsSync(`/usr/bin/${p}`) || fs.existsSync(`/bin/${p}`))!;

describe.each(KERNEL_MODES)('%s mode', (mode) => {
  let s: Shed;
  afterEach(() => s?.cleanup());

  it('a pipeline counts the CSV files: ls *.csv | wc -l', async () => {
    s = makeShed({ sandbox: mode, ...ON });
    fs.mkdirSync(s.zonePath('storage', 'data'), { recursive: true });
    for (const f of ['a.csv', 'b.csv', 'c.txt', 'data/d.csv']) fs.writeFileSync(s.zonePath('storage', f), 'x\n');
    const d = ran(await s.call('shed_run_shell', { zone: 'storage', script: 'ls *.csv | wc -l' }));
    expect(d.stdout.trim()).toBe('2');
    expect(d.sandbox).toBe(mode);
    expect(d.files_changed).toEqual([]);
  });

  it('here-documents, command substitution, variables, loops, && and redirections', async () => {
    s = makeShed({ sandbox: mode, ...ON });
    const script = [
      'n=0',
      'for f in one two three; do',
      '  n=$((n + 1))',
      '  echo "$f" >> list.txt',
      'done',
      'count=$(wc -l < list.txt)',
      'cat > report.md <<EOF',
      '# Report',
      'lines: $count, loop: $n, first: $(head -n 1 list.txt)',
      'EOF',
      "cat <<'RAW'",
      'not expanded: $count',
      'RAW',
      'mkdir -p out && sort -r list.txt > out/sorted.txt && echo done',
      'false || echo recovered',
    ].join('\n');
    const d = ran(await s.call('shed_run_shell', { zone: 'storage', script }));
    expect(d.stdout).toBe('not expanded: $count\ndone\nrecovered\n');
    expect(fs.readFileSync(s.zonePath('storage', 'report.md'), 'utf8')).toBe('# Report\nlines: 3, loop: 3, first: one\n');
    expect(fs.readFileSync(s.zonePath('storage', 'out/sorted.txt'), 'utf8')).toBe('two\nthree\none\n');
    expect(d.files_changed).toEqual(['list.txt', 'out/sorted.txt', 'report.md']);
  });

  it('one commit per call in Documents, with what the script changed', async () => {
    s = makeShed({ sandbox: mode, ...ON });
    const d = ran(await s.call('shed_run_shell', { zone: 'documents', script: 'printf "a\\nb\\n" > notes.txt\nseq 1 3 | paste -sd+ > sum.txt' }));
    expect(d.files_changed).toEqual(['notes.txt', 'sum.txt']);
    expect(d.commit).toMatch(/^[0-9a-f]{7,}$/);
    const docs = path.dirname(s.zonePath('documents'));
    const log = execFileSync('git', ['--git-dir=git', '--work-tree=data', 'log', '--format=%s'], { cwd: docs, encoding: 'utf8' });
    expect(log.split('\n').filter((l) => l.startsWith('Run shell'))).toEqual(['Run shell: printf "a\\nb\\n" > notes.txt']);
    expect(fs.readFileSync(s.zonePath('documents', 'sum.txt'), 'utf8')).toBe('1+2+3\n');
  });

  it('the kernel refuses every program off the list: interpreters, other programs, a copy in the zone, the loader', async () => {
    s = makeShed({ sandbox: mode, ...ON });
    const script = [
      'python3 -c "print(1)" && echo RAN-python',
      'perl -e "print 1" && echo RAN-perl',
      `${OFF_LIST} && echo RAN-offlist`,
      'bash -c "echo RAN-bash"',
      'cp /bin/ls ./myls && ./myls && echo RAN-copy',
      'cp /usr/bin/perl ./myperl && echo RAN-copied-perl',
      // The loader must be executable (every program needs it), so it is what a script would run a program with.
      '/lib64/ld-linux-x86-64.so.2 /usr/bin/perl -e "print 1" && echo RAN-loader-perl',
      '/lib64/ld-linux-x86-64.so.2 /usr/bin/python3 -c "print(1)" && echo RAN-loader-python',
      `/lib64/ld-linux-x86-64.so.2 $(command -v ${OFF_LIST}) && echo RAN-loader-offlist`,
      'yq --version && echo RAN-yq',
      'echo end',
    ].join('\n');
    const r = await s.call('shed_run_shell', { zone: 'storage', script });
    const d = ok(r);
    expect(d.stdout).not.toContain('RAN-');
    expect(d.stdout).toContain('end');
    expect(d.stderr).toMatch(/python3: Permission denied/);
    expect(d.stderr).toMatch(new RegExp(`${OFF_LIST}: Permission denied`));
    expect(r.message).toContain("'python3' may not run here");
    // Whitelisted programs run, including sh for a nested script.
    expect(ran(await s.call('shed_run_shell', { zone: 'storage', script: 'sh -c "echo nested" | tr a-z A-Z' })).stdout).toBe('NESTED\n');
  });

  it('read-only Uploads: reading programs run, writes fail', async () => {
    s = makeShed({ sandbox: mode, ...ON });
    fs.mkdirSync(s.zonePath('uploads'), { recursive: true });
    fs.writeFileSync(s.zonePath('uploads', 'in.txt'), 'b\na\n');
    const d = ok(await s.call('shed_run_shell', { zone: 'uploads', script: 'sort in.txt\necho x > new.txt\ntouch other.txt' }));
    expect(d.stdout).toBe('a\nb\n');
    expect(d.returncode).not.toBe(0);
    expect(fs.readdirSync(s.zonePath('uploads'))).toEqual(['in.txt']);
  });

  it('the environment is the call\'s own: no server variables, an empty HOME, git without configuration', async () => {
    s = makeShed({ sandbox: mode, ...ON });
    process.env.FILESHED_TEST_SECRET = 'server-only-value';
    try {
      const d = ran(await s.call('shed_run_shell', { zone: 'storage', script: 'set | grep -c FILESHED_TEST_SECRET; ls -A "$HOME" | wc -l; echo "$PATH"' }));
      expect(d.stdout.split('\n').slice(0, 2)).toEqual(['0', '0']);
      expect(JSON.stringify(d)).not.toContain('server-only-value');
    } finally {
      delete process.env.FILESHED_TEST_SECRET;
    }
  });
});

describe('off, or without a kernel sandbox', () => {
  let s: Shed;
  afterEach(() => s?.cleanup());

  it('off by default: FUNCTION_DISABLED naming allow_shell', async () => {
    s = makeShed({ sandbox: 'landlock' });
    const r = await s.call('shed_run_shell', { zone: 'storage', script: 'echo hi > x.txt' });
    expect(r.error?.code).toBe('FUNCTION_DISABLED');
    expect(r.error?.message).toContain('allow_shell');
    expect(fs.existsSync(s.zonePath('storage', 'x.txt'))).toBe(false);
  });

  it('validated mode refuses with SANDBOX_UNAVAILABLE', async () => {
    s = makeShed({ sandbox: 'validated', ...ON });
    const r = await s.call('shed_run_shell', { zone: 'storage', script: 'echo hi > x.txt' });
    expect(r.error?.code).toBe('SANDBOX_UNAVAILABLE');
    expect(r.error?.hint).toContain('sandbox');
    expect(fs.existsSync(s.zonePath('storage', 'x.txt'))).toBe(false);
  });
});
