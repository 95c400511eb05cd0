/**
 * Blocked files are out of the zone while a command runs (exec/guards/hide-blocked.ts), in every sandbox
 * mode, so no route reaches one: `..` forms, list files (tar -T, --files-from, --files0-from),
 * response files, -C/--directory, recursive readers and archivers over the whole zone, links that
 * follow (-R, -L, -h), inward symbolic links, and hard links made before or during the command.
 * After every attack: the secret is in no response and in no file the command wrote (archives
 * unpacked to look), no file outside the blocked ones shares a blocked file's inode, and every
 * blocked file is back, byte-identical. The old code leaked through `..` forms and list files in
 * landlock and validated modes (statInside gave up on `..`; list files were refused only in
 * validated mode).
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Result, type Shed } from '../helpers/shed.js';
import { git } from '../vcs/helpers.js';
import { installed, MODES } from './exec-harness.js';

const SECRET = `HIDDEN-${crypto.randomBytes(6).toString('hex')}`;
const PATTERNS = '.env, *.pem, .ssh/';
/** Blocked entries (and the hard link made before) with their content. */
const BLOCKED: Record<string, string> = { '.env': `KEY=${SECRET}\n`, 'sub/k.pem': `${SECRET}\n`, '.ssh/id': `${SECRET}\n`, '.ssh/deep/known': `${SECRET}\n` };
const REFUSALS = ['BLOCKED_PATH', 'ARGUMENT_FORBIDDEN', 'COMMAND_FORBIDDEN'];

let s: Shed;
const zonePath = (rel = '') => s.zonePath('storage', rel);

function arrange(): void {
  const put = (rel: string, text: string | Buffer) => {
    fs.mkdirSync(path.dirname(zonePath(rel)), { recursive: true });
    fs.writeFileSync(zonePath(rel), text);
  };
  for (const [rel, text] of Object.entries(BLOCKED)) put(rel, text);
  put('a.txt', 'hello KEY\n');
  put('.notes', 'a dotfile that is not blocked\n');
  put('sub/b.txt', 'sub KEY\n');
  put('names.txt', '.env\nsub/k.pem\n.ssh/id\nsub/../.env\n');
  put('names0', Buffer.from('.env\0sub/k.pem\0.ssh/id\0'));
  put('resp.txt', '.env sub/k.pem\n');
  fs.symlinkSync('.env', zonePath('inward'));
  fs.symlinkSync('../.ssh', zonePath('sub/keys'));
  fs.linkSync(zonePath('.env'), zonePath('sub/env-copy.txt')); // another name of .env, made before
}

/** Every regular file's bytes in the zone apart from the blocked entries, archives unpacked. */
function written(): { rel: string; bytes: Buffer }[] {
  const envIno = fs.statSync(zonePath('.env')).ino;
  const out: { rel: string; bytes: Buffer }[] = [];
  const visit = (rel: string) => {
    for (const e of fs.readdirSync(zonePath(rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (child in BLOCKED || child === '.ssh' || child === 'sub/env-copy.txt') continue;
      if (e.isDirectory()) visit(child);
      if (!e.isFile()) continue;
      const abs = zonePath(child);
      expect(fs.statSync(abs).ino, `${child} is another name of .env`).not.toBe(envIno);
      let bytes = fs.readFileSync(abs);
      if (/\.(tar|zip)$/.test(child)) {
        const list = child.endsWith('.zip') ? execFileSync('unzip', ['-Z1', abs]) : execFileSync('tar', ['-tf', abs]);
        expect(list.toString(), `${child} holds a blocked entry`).not.toMatch(/(^|\/)(\.env|k\.pem|\.ssh|id|known)$/m);
        const inner = child.endsWith('.zip') ? execFileSync('unzip', ['-p', abs]) : execFileSync('tar', ['-xOf', abs]);
        bytes = Buffer.concat([bytes, inner]);
      }
      out.push({ rel: child, bytes });
    }
  };
  visit('');
  return out;
}

function unharmed(r: Result): void {
  expect(JSON.stringify(r), 'the secret leaked into the response').not.toContain(SECRET);
  if (!r.success) expect(REFUSALS, JSON.stringify(r.error)).toContain(r.error!.code);
  for (const f of written()) expect(f.bytes.includes(SECRET), `${f.rel} holds the secret`).toBe(false);
  for (const [rel, text] of Object.entries(BLOCKED)) expect(fs.readFileSync(zonePath(rel), 'utf8'), `${rel} is back`).toBe(text);
  expect(fs.statSync(zonePath('sub/env-copy.txt')).ino).toBe(fs.statSync(zonePath('.env')).ino);
  const stash = path.join(s.base, 'users', 'alice', 'Storage', 'stash');
  expect(fs.existsSync(stash), 'nothing left aside, nothing stays beside the zone').toBe(false);
}

const ATTACKS: [string, string, string[]][] = [
  ['.. form: tar sub/..', 'tar', ['-cf', 'x.tar', 'sub/..']],
  ['.. form: tar ./sub/../.', 'tar', ['-cf', 'x.tar', './sub/../.']],
  ['.. form: zip -r sub/..', 'zip', ['-qr', 'z.zip', 'sub/..']],
  ['.. form: grep -r a.txt sub/..', 'grep', ['-r', 'KEY', 'a.txt', 'sub/..']],
  ['.. form: cp -r sub/.. copy', 'cp', ['-r', 'sub/..', 'copy']],
  ['list file: tar -T', 'tar', ['-T', 'names.txt', '-cf', 't.tar']],
  ['list file: tar --files-from', 'tar', ['--files-from=names.txt', '-cf', 't.tar']],
  ['list file: sort --files0-from', 'sort', ['--files0-from=names0']],
  ['list file: wc --files0-from', 'wc', ['-c', '--files0-from=names0']],
  ['list file: cat the names of a list (grep -f)', 'grep', ['-r', '-f', 'names.txt', '.']],
  ['response file: strings @resp.txt', 'strings', ['@resp.txt']],
  ['-C: tar -C sub .', 'tar', ['-cf', 'c.tar', '-C', 'sub', '.']],
  ['--directory: tar --directory=sub/.. .', 'tar', ['-cf', 'c.tar', '--directory=sub/..', '.']],
  ['recursive reader: grep -r without a path', 'grep', ['-r', 'KEY']],
  ['recursive reader: grep -rl over .', 'grep', ['-rl', SECRET.slice(0, 10), '.']],
  ['archiver: tar -c .', 'tar', ['-cf', 'all.tar', '.']],
  ['archiver: zip -r .', 'zip', ['-qr', 'all.zip', '.']],
  ['copier: cp -r . copy', 'cp', ['-r', '.', 'copy']],
  ['copier: cp -a . copy', 'cp', ['-a', '.', 'copy']],
  ['hard links made during: cp -al . hl', 'cp', ['-al', '.', 'hl']],
  ['hard links made during: cp -rl sub hl', 'cp', ['-rl', 'sub', 'hl']],
  ['links followed: grep -R', 'grep', ['-R', SECRET.slice(0, 10), '.']],
  ['links followed: cp -rL . copy', 'cp', ['-rL', '.', 'copyL']],
  ['links followed: tar -h', 'tar', ['-hcf', 'h.tar', '.']],
  ['links followed: find -L', 'find', ['-L', '.', '-type', 'f', '-size', '-1k']],
  ['inward link: tar of the link', 'tar', ['-hcf', 'i.tar', 'sub/keys/..']],
  ['diff -r against a copy', 'diff', ['-r', '.', 'sub']],
];

describe.each(MODES)('blocked files are not there while a command runs (%s)', (mode) => {
  beforeEach(() => {
    s = makeShed({ sandbox: mode, blocked_patterns: PATTERNS });
    arrange();
  });
  afterEach(() => s.cleanup());

  it.each(ATTACKS)('%s', async (_name, cmd, args) => {
    unharmed(await s.call('shed_exec', { zone: 'storage', cmd, args }));
  });

  it('ls -a and find list no blocked entry (as shed_tree hides them)', async () => {
    const ls = await s.call('shed_exec', { zone: 'storage', cmd: 'ls', args: ['-aR'] });
    expect(ls.data!.returncode).toBe(0);
    expect(ls.data!.stdout).not.toMatch(/\.env|k\.pem|\.ssh|env-copy/);
    const find = await s.call('shed_exec', { zone: 'storage', cmd: 'find', args: ['.'] });
    expect(find.data!.stdout).not.toMatch(/\.env|k\.pem|\.ssh|env-copy/);
    unharmed(find);
  });

  it('an argument that names a blocked path still gets an early BLOCKED_PATH (the second wall)', async () => {
    for (const args of [['.env'], ['sub/../.env'], ['sub/env-copy.txt'], ['inward'], ['sub/keys/id'], ['@.env']]) {
      const r = await s.call('shed_exec', { zone: 'storage', cmd: 'cat', args });
      expect(r.error?.code, JSON.stringify(args)).toBe('BLOCKED_PATH');
      unharmed(r);
    }
  });

  it('a pattern never stands for a blocked name', async () => {
    const r = await s.call('shed_exec', { zone: 'storage', cmd: 'cat', args: ['.*', 'sub/[bk]*'] });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    // .env, .ssh, sub/k.pem and the link sub/keys -> ../.ssh are not there for a shell either.
    expect(r.data!.expanded.map((e: { names: string[] }) => e.names)).toEqual([['.notes'], ['sub/b.txt']]);
    unharmed(r);
  });

  it('what a command makes at a blocked name is moved aside; the blocked file keeps its place', async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-newcomer-'));
    fs.writeFileSync(path.join(work, '.env'), 'NEW=1\n');
    fs.mkdirSync(path.join(work, 'sub'));
    fs.writeFileSync(path.join(work, 'sub', 'env-copy.txt'), 'mine\n');
    execFileSync('tar', ['-cf', zonePath('in.tar'), '-C', work, '.env', 'sub/env-copy.txt']);
    fs.rmSync(work, { recursive: true, force: true });
    const r = await s.call('shed_exec', { zone: 'storage', cmd: 'tar', args: ['-xf', 'in.tar'] });
    expect(r.data!.returncode, String(r.data!.stderr)).toBe(0);
    expect(r.data!.blocked_names_restored).toEqual({ moved_aside: [{ from: '.env', to: '.env.~1~' }], names_dropped: ['sub/env-copy.txt'] });
    expect(r.message).toContain("'.env' is now '.env.~1~'");
    expect(fs.readFileSync(zonePath('.env'), 'utf8')).toBe(BLOCKED['.env']);
    expect(fs.readFileSync(zonePath('.env.~1~'), 'utf8')).toBe('NEW=1\n');
    // The archive's file took the other name of .env: it keeps it, .env keeps its blocked name.
    expect(fs.readFileSync(zonePath('sub/env-copy.txt'), 'utf8')).toBe('mine\n');
  });

  it('a file the command put where a blocked file\'s folder was is moved aside; a moved folder leaves it in place', async () => {
    const r = await s.call('shed_exec', { zone: 'storage', cmd: 'mv', args: ['sub', 'elsewhere'] });
    expect(r.data!.returncode).toBe(0);
    // sub/ went away with what the command could see; the blocked sub/k.pem is back in a sub/ of its own.
    expect(fs.readFileSync(zonePath('sub/k.pem'), 'utf8')).toBe(BLOCKED['sub/k.pem']);
    expect(fs.readFileSync(zonePath('elsewhere/b.txt'), 'utf8')).toBe('sub KEY\n');
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-newcomer-'));
    fs.writeFileSync(path.join(work, 'sub'), 'a file now\n');
    execFileSync('tar', ['-cf', zonePath('file.tar'), '-C', work, 'sub']);
    fs.rmSync(work, { recursive: true, force: true });
    const t = await s.call('shed_exec', { zone: 'storage', cmd: 'tar', args: ['--recursive-unlink', '-xf', 'file.tar'] });
    expect(t.data!.returncode, String(t.data!.stderr)).toBe(0);
    expect(t.data!.blocked_names_restored.moved_aside).toEqual([{ from: 'sub', to: 'sub.~1~' }]);
    expect(fs.readFileSync(zonePath('sub.~1~'), 'utf8')).toBe('a file now\n');
    unharmed(t);
  });
});

describe.each(MODES)('other zones (%s)', (mode) => {
  beforeEach(() => {
    s = makeShed({ sandbox: mode, blocked_patterns: PATTERNS });
  });
  afterEach(() => s.cleanup());

  it('Uploads (read-only): grep -r and tar -c see no blocked file', async () => {
    const up = s.zonePath('uploads');
    fs.mkdirSync(path.join(up, 'd'), { recursive: true });
    fs.writeFileSync(path.join(up, '.env'), `KEY=${SECRET}\n`);
    fs.writeFileSync(path.join(up, 'd', 'x.pem'), `${SECRET}\n`);
    fs.writeFileSync(path.join(up, 'a.txt'), 'KEY here\n');
    const g = await s.call('shed_exec', { zone: 'uploads', cmd: 'grep', args: ['-r', 'KEY', 'd/..'] });
    expect(g.data!.stdout).toBe('d/../a.txt:KEY here\n');
    const t = await s.call('shed_exec', { zone: 'uploads', cmd: 'tar', args: ['-cf', '-', '.'] });
    expect(JSON.stringify(t)).not.toContain(SECRET);
    expect(fs.readFileSync(path.join(up, '.env'), 'utf8')).toBe(`KEY=${SECRET}\n`);
    expect(fs.readFileSync(path.join(up, 'd', 'x.pem'), 'utf8')).toBe(`${SECRET}\n`);
  });

  it('Documents: a committed blocked file is hidden and comes back unchanged; history gets nothing of it', async () => {
    fs.mkdirSync(s.zonePath('documents'), { recursive: true });
    fs.writeFileSync(s.zonePath('documents', '.env'), `KEY=${SECRET}\n`);
    expect((await s.call('shed_create_file', { zone: 'documents', path: 'n.md', content: 'KEY note' })).success).toBe(true);
    const log = async () => (await s.call('shed_exec', { zone: 'documents', cmd: 'git', args: ['log', '--oneline'] })).data!.stdout as string;
    const before = await log();
    const r = await s.call('shed_exec', { zone: 'documents', cmd: 'tar', args: ['-cf', 'all.tar', '.'] });
    expect(r.data!.returncode).toBe(0);
    expect(fs.readFileSync(s.zonePath('documents', 'all.tar')).includes(SECRET)).toBe(false);
    expect(fs.readFileSync(s.zonePath('documents', '.env'), 'utf8')).toBe(`KEY=${SECRET}\n`);
    const status = await s.call('shed_exec', { zone: 'documents', cmd: 'git', args: ['status', '--porcelain'] });
    expect(status.data!.stdout).toBe('');
    const after = await log();
    expect(after.split('\n').length).toBe(before.split('\n').length + 1); // one commit: all.tar
    expect(git(s.zonePath('documents'), 'show', '--name-only', '--format=', 'HEAD').trim()).toBe('all.tar');
  });
});

describe.runIf(installed('bwrap'))('group spaces', () => {
  it.each(MODES)('%s: grep -r over a group space sees no blocked file', async (mode) => {
    const { groupShed } = await import('../groups/setup.js');
    const t = await groupShed({ sandbox: mode, blocked_patterns: PATTERNS });
    try {
      const root = t.groupPath();
      fs.mkdirSync(path.join(root, 'd'), { recursive: true });
      fs.writeFileSync(path.join(root, '.env'), `KEY=${SECRET}\n`);
      fs.writeFileSync(path.join(root, 'd', 'x.txt'), 'KEY\n');
      const r = await t.call('shed_exec', { zone: 'group', group: 'team', cmd: 'grep', args: ['-r', 'KEY', 'd/..'] }, { user: 'bob' });
      expect(r.data!.stdout).toBe('d/../d/x.txt:KEY\n');
      expect(fs.readFileSync(path.join(root, '.env'), 'utf8')).toBe(`KEY=${SECRET}\n`);
    } finally {
      t.cleanup();
    }
  });
});
