/**
 * shed_lockedit_exec in every sandbox mode: the same policy, executor, quota watch and limits as
 * shed_exec, with the working copy as the only file the command can see or change. Attacks: absolute
 * paths, .. escapes, other files of the zone (read or overwrite), program-running options, links,
 * and an archive bomb extracted beside the working copy (the per-call quota holds here too).
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Result, type Shed } from '../helpers/shed.js';
import { copyPath, exists, listAll, put, read, workBase } from './helpers.js';

const SECRET = `SECRET-${crypto.randomBytes(6).toString('hex')}`;
let outside: string;
beforeAll(() => {
  outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-outside-')));
  fs.writeFileSync(path.join(outside, 'secret.txt'), SECRET);
});
afterAll(() => fs.rmSync(outside, { recursive: true, force: true }));

const MIB = 1024 * 1024;
/** The archive: 30 files of 9 MB of zeros in a zip of about 260 KB. */
let bomb: Buffer;
beforeAll(() => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-bomb-'));
  for (let i = 0; i < 30; i++) {
    const f = path.join(dir, `f${String(i).padStart(2, '0')}.bin`);
    fs.writeFileSync(f, '');
    fs.truncateSync(f, 9 * MIB);
  }
  execFileSync('zip', ['-q', 'bomb.zip', ...fs.readdirSync(dir)], { cwd: dir });
  bomb = fs.readFileSync(path.join(dir, 'bomb.zip'));
  fs.rmSync(dir, { recursive: true, force: true });
});

describe.each(['validated', 'bwrap', 'landlock'] as const)('shed_lockedit_exec (sandbox %s)', (mode) => {
  let s: Shed;
  const responses: string[] = [];
  const exec = async (args: Record<string, unknown>, chat = 'c1'): Promise<Result> => {
    const r = await s.call('shed_lockedit_exec', { zone: 'storage', path: 'docs/r.md', ...args }, { chat });
    responses.push(JSON.stringify(r));
    return r;
  };
  const copy = () => read(copyPath(s, 'docs/r.md'));

  beforeEach(async () => {
    s = makeShed({ sandbox: mode });
    put(s.zonePath('storage', 'docs/r.md'), 'alpha draft\nbeta draft\n');
    put(s.zonePath('storage', 'other.txt'), `other file ${SECRET}\n`);
    put(s.zonePath('storage', 'docs/sibling.txt'), 'sibling\n');
    const r = await s.call('shed_lockedit_open', { zone: 'storage', path: 'docs/r.md' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
  });
  afterEach(() => {
    // Nothing leaks, and every scratch folder is gone.
    for (const text of responses) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(s.base);
    }
    responses.length = 0;
    expect(listAll(path.join(workBase(s), 'scratch'))).toEqual([]);
    expect(read(s.zonePath('storage', 'other.txt'))).toBe(`other file ${SECRET}\n`);
    expect(read(s.zonePath('storage', 'docs/sibling.txt'))).toBe('sibling\n');
    expect(read(path.join(outside, 'secret.txt'))).toBe(SECRET);
    s.cleanup();
  });

  it('sed -i changes the working copy (by its path, and by "."); the file waits for save', async () => {
    const r = await exec({ cmd: 'sed', args: ['-i', 's/draft/final/', 'docs/r.md'] });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data).toMatchObject({ returncode: 0, working_copy_changed: true, sandbox: mode });
    expect(copy()).toBe('alpha final\nbeta final\n');
    const dot = await exec({ cmd: 'sed', args: ['-i', '1s/alpha/ALPHA/', '.'] });
    expect(dot.data!.returncode).toBe(0);
    expect(copy()).toBe('ALPHA final\nbeta final\n');
    expect(read(s.zonePath('storage', 'docs/r.md'))).toBe('alpha draft\nbeta draft\n');
    expect((await s.call('shed_lockedit_save', { zone: 'storage', path: 'docs/r.md' })).success).toBe(true);
    expect(read(s.zonePath('storage', 'docs/r.md'))).toBe('ALPHA final\nbeta final\n');
  });

  it('reads the working copy (cat, wc) and writes in place (truncate)', async () => {
    const cat = await exec({ cmd: 'cat', args: ['docs/r.md'] });
    expect(cat.data!.stdout).toBe('alpha draft\nbeta draft\n');
    expect(cat.data!.working_copy_changed).toBe(false);
    const t = await exec({ cmd: 'truncate', args: ['-s', '5', 'docs/r.md'] });
    expect(t.data!.working_copy_changed).toBe(true);
    expect(copy()).toBe('alpha');
  });

  it('sort -o onto the file replaces the working copy', async () => {
    const r = await exec({ cmd: 'sort', args: ['-r', '-o', 'docs/r.md', 'docs/r.md'] });
    expect(r.data!.returncode).toBe(0);
    expect(copy()).toBe('beta draft\nalpha draft\n');
  });

  it('sees no other file of the zone: reading one fails, writing one changes nothing', async () => {
    const cat = await exec({ cmd: 'cat', args: ['other.txt'] });
    expect(cat.data!.returncode).not.toBe(0);
    const sib = await exec({ cmd: 'cat', args: ['docs/sibling.txt'] });
    expect(sib.data!.returncode).not.toBe(0);
    const cp = await exec({ cmd: 'cp', args: ['docs/r.md', 'other.txt'] });
    expect(cp.data!.returncode).toBe(0); // it wrote into the scratch folder, which is discarded
    const ls = await exec({ cmd: 'ls', args: ['-R'] });
    expect(String(ls.data!.stdout)).not.toContain('sibling');
  });

  it('absolute paths are refused, in plain and option-attached form', async () => {
    for (const args of [['/etc/passwd'], [`${outside}/secret.txt`], [s.zonePath('storage', 'other.txt')]]) {
      const r = await exec({ cmd: 'cat', args });
      expect(r.error!.code).toBe('PATH_ESCAPE');
    }
    expect((await exec({ cmd: 'sort', args: [`-o${outside}/w.txt`, 'docs/r.md'] })).error!.code).toBe('PATH_ESCAPE');
    expect((await exec({ cmd: 'sort', args: [`--output=${outside}/w.txt`, 'docs/r.md'] })).error!.code).toBe('PATH_ESCAPE');
    expect(fs.existsSync(path.join(outside, 'w.txt'))).toBe(false);
  });

  it('.. escapes toward the real zone are refused', async () => {
    for (const arg of ['../other.txt', '../../../data/other.txt', 'docs/../../x', '../../editzone/c1/docs/r.md']) {
      expect((await exec({ cmd: 'cat', args: [arg] })).error!.code).toBe('PATH_ESCAPE');
    }
  });

  it('program-running options and shells are refused like in shed_exec', async () => {
    expect((await exec({ cmd: 'sed', args: ['-i', '1e cat /etc/passwd', 'docs/r.md'] })).error!.code).toBe('ARGUMENT_FORBIDDEN');
    expect((await exec({ cmd: 'sed', args: [`w ${outside}/x`, 'docs/r.md'] })).error!.code).toBe('ARGUMENT_FORBIDDEN');
    expect((await exec({ cmd: 'awk', args: ['{ system("id") }', 'docs/r.md'] })).error!.code).toBe('ARGUMENT_FORBIDDEN');
    expect((await exec({ cmd: 'sort', args: ['--compress-program=sh', 'docs/r.md'] })).error!.code).toBe('ARGUMENT_FORBIDDEN');
    expect((await exec({ cmd: 'bash', args: ['-c', 'id'] })).error!.code).toBe('COMMAND_FORBIDDEN');
    expect((await exec({ cmd: 'ln', args: ['-s', '/etc', 'x'] })).error!.code).toBe('COMMAND_FORBIDDEN');
    expect((await exec({ cmd: 'git', args: ['log'] })).error!.code).toBe('COMMAND_FORBIDDEN');
    expect((await exec({ cmd: 'cat', args: ['docs/r.md; id'] })).error!.code).toBe('ARGUMENT_FORBIDDEN');
    expect(copy()).toBe('alpha draft\nbeta draft\n');
  });

  it('replacing the file by something that is not a file keeps the working copy', async () => {
    const rm = await exec({ cmd: 'rm', args: ['docs/r.md'] });
    expect(rm.data!.returncode).toBe(0);
    expect(rm.data!.note).toContain('kept');
    expect(copy()).toBe('alpha draft\nbeta draft\n');
    const mk = await exec({ cmd: 'mkdir', args: ['-p', 'x'] });
    expect(mk.data!.working_copy_changed).toBe(false);
  });

  it('a failing command reports its exit code in data and message; grep without a match says what its 1 means', async () => {
    const r = await exec({ cmd: 'grep', args: ['nomatch', 'docs/r.md'] });
    expect(r.success).toBe(true);
    expect(r.data!.returncode).toBe(1);
    expect(r.message).toContain('grep ended with exit code 1: no line matched; for grep that is an answer, not an error; the working copy is unchanged.');
    const bad = await exec({ cmd: 'sed', args: ['-n', 's/x', 'docs/r.md'] });
    expect(bad.data!.returncode).not.toBe(0);
    expect(bad.message).toContain(`FAILED with exit code ${bad.data!.returncode}; see stderr`);
  });

  it('needs an open edit of this conversation', async () => {
    expect((await exec({ cmd: 'cat', args: ['docs/r.md'] }, 'c2')).error!.code).toBe('NOT_LOCK_OWNER');
    await s.call('shed_lockedit_cancel', { zone: 'storage', path: 'docs/r.md' });
    const r = await exec({ cmd: 'cat', args: ['docs/r.md'] });
    expect(r.error!.code).toBe('NOT_IN_EDIT_MODE');
    expect(exists(copyPath(s, 'docs/r.md'))).toBe(false);
  });

  it('a timeout stops the command and says how to recover', async () => {
    s.tools.valves = { ...s.tools.valves, exec_timeout_max: 1 };
    const r = await exec({ cmd: 'sleep', args: ['5'], timeout: 1 });
    expect(r.error!.code).toBe('TIMEOUT');
    expect(r.error!.hint).toContain('shed_lockedit_cancel');
  });

  it('an archive bomb unzipped beside the working copy is stopped at the quota, and the disk never holds much more', async () => {
    s.tools.valves = { ...s.tools.valves, quota_per_user_mb: 10, max_file_size_mb: 10 };
    put(s.zonePath('storage', 'bomb.zip'), bomb);
    expect((await s.call('shed_lockedit_open', { zone: 'storage', path: 'bomb.zip' })).success).toBe(true);
    // The largest the scratch folders got while the command ran, measured from outside.
    const scratch = path.join(workBase(s), 'scratch');
    let peak = 0;
    const size = (dir: string): number => {
      let n = 0;
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) n += e.isDirectory() ? size(path.join(dir, e.name)) : (fs.lstatSync(path.join(dir, e.name), { throwIfNoEntry: false })?.size ?? 0);
      return n;
    };
    const poll = setInterval(() => {
      try {
        peak = Math.max(peak, size(scratch));
      } catch {
        // a folder vanished meanwhile
      }
    }, 5);
    const r = await s.call('shed_lockedit_exec', { zone: 'storage', path: 'bomb.zip', cmd: 'unzip', args: ['-o', 'bomb.zip'], timeout: 60 });
    clearInterval(poll);
    responses.push(JSON.stringify(r));
    expect(r.success, JSON.stringify(r.data)).toBe(false);
    expect(r.error!.code).toBe('QUOTA_EXCEEDED');
    expect(r.error!.details!.stopped).toBe(true);
    // Within one max_file_size_mb of the quota (the old code let it write all 270 MB).
    expect(r.error!.details!.over_by_bytes as number).toBeLessThanOrEqual(10 * MIB);
    expect(peak).toBeLessThanOrEqual(20 * MIB + bomb.length);
    expect(fs.readFileSync(copyPath(s, 'bomb.zip')).equals(bomb)).toBe(true);
    await s.call('shed_lockedit_cancel', { zone: 'storage', path: 'bomb.zip' });
  });

  if (mode === 'bwrap') {
    it('inside bubblewrap the command sees only the working copy', async () => {
      const r = await exec({ cmd: 'find', args: [] }); // (an argument "." would stand for the file)
      expect(r.data!.returncode).toBe(0);
      expect(String(r.data!.stdout).split('\n').filter(Boolean).sort()).toEqual(['.', './docs', './docs/r.md']);
    });
  }
});

describe('shed_lockedit_exec with sandbox="bwrap" required', () => {
  it('runs (this machine has bubblewrap) and reports the sandbox', async () => {
    const s = makeShed({ sandbox: 'bwrap' });
    try {
      put(s.zonePath('storage', 'a.txt'), 'a\n');
      await s.call('shed_lockedit_open', { zone: 'storage', path: 'a.txt' });
      const r = await s.call('shed_lockedit_exec', { zone: 'storage', path: 'a.txt', cmd: 'wc', args: ['-l', 'a.txt'] });
      expect(r.data).toMatchObject({ sandbox: 'bwrap', returncode: 0 });
      expect(String(r.data!.stdout)).toContain('1 a.txt');
    } finally {
      s.cleanup();
    }
  });
});
