/**
 * The absolute storage path must not reach the model through a command, even
 * encoded past the output scrubber (base64, hex, written to a file and read back). The secret here
 * is the server path of the storage base. Where a command runs in the zone's real folder (landlock
 * and validated modes) the environment holds relative or neutral values and the commands whose only
 * purpose is to print the working folder are refused; under bubblewrap everything is /zone- or
 * /tmp-style and they run.
 */
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectRan, expectRefused, makeArena, MODES, type Arena } from './exec-harness.js';

/** Every form of `secret` a response might carry: plain, hex, base64 at the three alignments. */
function encodings(secret: string): string[] {
  const bytes = Buffer.from(secret);
  const forms = [secret, bytes.toString('hex')];
  for (let k = 0; k < 3; k++) {
    const slice = bytes.subarray(k, k + Math.floor((bytes.length - k) / 3) * 3);
    forms.push(slice.toString('base64'));
  }
  return forms;
}

describe.each(MODES)('%s mode', (mode) => {
  let a: Arena;
  let secrets: string[];
  beforeEach(() => {
    a = makeArena(mode);
    a.put('f.txt', 'inside\n');
    // The storage base (a /tmp/shed-test-* folder here; /app/backend/data/... in a deployment).
    secrets = [...new Set([a.s.base, fs.realpathSync(a.s.base)])];
  });
  afterEach(() => a.finish());

  /** No form of the storage path in the response, nor in what its output decodes to. */
  function noServerPath(text: string): void {
    const decoded = [text];
    for (const token of text.match(/[A-Za-z0-9+/=]{16,}/g) ?? []) decoded.push(Buffer.from(token, 'base64').toString('latin1'));
    for (const token of text.match(/[0-9a-fA-F]{16,}/g) ?? []) decoded.push(Buffer.from(token.length % 2 ? token.slice(1) : token, 'hex').toString('latin1'));
    const hay = decoded.join('\n');
    for (const secret of secrets) for (const form of encodings(secret)) expect(hay, `the storage path leaked (${form})`).not.toContain(form);
  }

  /** Runs it; if it ran, the response must be clean. */
  async function probe(cmd: string, args: string[], extra: Record<string, unknown> = {}) {
    const r = await a.exec({ zone: 'storage', cmd, args, ...extra });
    noServerPath(JSON.stringify(r));
    return r;
  }

  it.each([
    ['env.HOME|@base64'],
    ['env.TMPDIR|@base64'],
    ['env.PWD|@base64'],
    ['env.OLDPWD|@base64'],
    ['$ENV|tostring|@base64'],
  ])('jq -n %j reveals no server path', async (program) => {
    expectRan(await probe('jq', ['-n', '-r', program]));
  });

  it('every environment value is relative or neutral (no storage path; under bwrap no absolute path but /zone, /tmp/... and PATH)', async () => {
    const d = expectRan(await probe('jq', ['-n', '-c', 'env']));
    const env = JSON.parse(d.stdout as string) as Record<string, string>;
    for (const [key, value] of Object.entries(env)) {
      if (key === 'PATH' || value.startsWith('/dev/')) continue;
      // ImageMagick's policy (core/services/exec/launcher/magick.ts): a read-only bind holding policy.xml alone under bwrap.
      if (mode === 'bwrap' && key === 'MAGICK_CONFIGURE_PATH' && value === '/etc/fileshed-imagemagick') continue;
      if (mode !== 'bwrap') expect(value.startsWith('/'), `${key}=${value}`).toBe(false);
      else if (value.startsWith('/')) expect(value === '/zone' || value === '/tmp' || value.startsWith('/tmp/'), `${key}=${value}`).toBe(true);
    }
    // bubblewrap sets PWD to the folder it starts the command in, /zone; elsewhere nothing sets it.
    expect(env.PWD).toBe(mode === 'bwrap' ? '/zone' : undefined);
    expect(env.OLDPWD).toBeUndefined();
  });

  it('awk ENVIRON written to a file and read back in hex reveals nothing', async () => {
    const r = await probe('awk', ['BEGIN { for (k in ENVIRON) print k "=" ENVIRON[k] }'], { stdout_file: 'env.txt' });
    if (r.success) expectRan(await probe('xxd', ['-p', 'env.txt']));
    else expectRefused(r);
  });

  it('pwd: refused where commands run in the real folder (landlock, validated); under bwrap it prints /zone. Its output read back encoded reveals nothing', async () => {
    const r = await probe('pwd', [], { stdout_file: 'pwd.txt' });
    if (mode !== 'bwrap') {
      expectRefused(r, 'COMMAND_FORBIDDEN');
      expect(r.error?.hint).toBeTruthy();
      expect(fs.existsSync(`${a.zone}/pwd.txt`)).toBe(false);
    } else {
      expectRan(r);
      expect(fs.readFileSync(`${a.zone}/pwd.txt`, 'utf8')).toBe('/zone\n');
      expectRan(await probe('base64', ['pwd.txt']));
      expectRan(await probe('xxd', ['-p', 'pwd.txt']));
    }
  });

  it.each([
    ['realpath', ['.']],
    ['realpath', ['f.txt']],
    ['realpath', ['-s', '.']],
    ['realpath', ['--relative-base=.', '.']],
    ['readlink', ['-f', '.']],
    ['readlink', ['-fn', 'f.txt']],
    ['readlink', ['-e', '.']],
    ['readlink', ['-m', 'nothing']],
    ['readlink', ['--canonicalize', '.']],
    ['df', ['.']],
    ['df', []],
    ['stat', ['-c', '%m', '.']],
    ['stat', ['--printf=%m\\n', 'f.txt']],
  ] as [string, string[]][])('%s %j: refused in landlock and validated modes, harmless under bwrap; its output written to a file and read back encoded reveals nothing', async (cmd, args) => {
    const r = await probe(cmd, args, { stdout_file: 'out.txt' });
    if (mode !== 'bwrap') expectRefused(r, ['ARGUMENT_FORBIDDEN', 'COMMAND_FORBIDDEN']);
    else {
      expect(r.success, JSON.stringify(r)).toBe(true);
      await probe('base64', ['out.txt']);
      await probe('xxd', ['-p', 'out.txt']);
    }
  });

  it('realpath --relative-to=. still works in every mode (relative answers)', async () => {
    a.put('sub/x.txt', 'x\n');
    const d = expectRan(await probe('realpath', ['--relative-to=.', 'sub/x.txt', '.']));
    expect(d.stdout).toBe('sub/x.txt\n.\n');
    fs.symlinkSync('sub/x.txt', `${a.zone}/ln`);
    expect(expectRan(await probe('readlink', ['ln'])).stdout).toBe('sub/x.txt\n'); // plain readlink prints the link's own text
  });

  it.each([
    ['find', ['.', '-printf', '%p %h %H\\n']],
    ['find', ['.', '-maxdepth', '1', '-printf', '%P|%f|%l\\n']],
    ['mktemp', []],
    ['sort', ['-T', '.', 'f.txt']],
    ['ls', ['-la']],
    ['du', ['-a', '.']],
    ['tar', ['-cvf', 'x.tar', 'f.txt']],
  ] as [string, string[]][])('%s %j prints only relative paths', async (cmd, args) => {
    expectRan(await probe(cmd, args));
  });

  it.each([['select hex(file) from pragma_database_list'], ['PRAGMA database_list'], ['.databases']])('sqlite3 %j (the database file path) is refused in every mode', async (sql) => {
    expectRan(await probe('sqlite3', ['db.sqlite', 'create table t(x)']));
    expectRefused(await probe('sqlite3', ['db.sqlite', sql]), 'ARGUMENT_FORBIDDEN');
  });
});
