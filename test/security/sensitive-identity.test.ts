/**
 * blocked_patterns judged by what a file is, not only by the name it has now. Each class has several
 * variants and runs in every sandbox mode that works here (bwrap where it works; validated always;
 * a new mode slots into MODES):
 * - renaming or copying a parent folder so blocked content gets an unblocked name (shed_rename, the
 *   bridges, shed_copy_to_group, shed_exec mv/cp with any options);
 * - a blocked path behind a prefix (`@file` response files, `name=@file`, `file:`);
 * - a symbolic or hard link to a blocked file (made by extracting an archive, or already there).
 * Every response is checked for the secret, and every attack ends with attempts to read the content
 * under the name it was given.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Result, type Shed } from '../helpers/shed.js';
import { MODES } from './exec-harness.js';

const SECRET = `SECRET-${crypto.randomBytes(6).toString('hex')}`;
const PATTERNS = '.env, *.pem, .ssh/, .git/config, secrets/*.txt';
let s: Shed;
const put = (rel: string, text: string, zone: 'storage' | 'documents' = 'storage') => {
  const p = s.zonePath(zone, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, text);
};

function arrange(): void {
  put('notes.txt', 'hello\n');
  put('.env', `TOKEN=${SECRET}\n`);
  put('keys/server.pem', `${SECRET}\n`);
  put('home/.ssh/known', `${SECRET}\n`);
  put('proj/.git/config', `url=${SECRET}\n`);
  put('proj/.git/HEAD', 'ref: main\n');
  put('proj/src/app.txt', 'code\n');
  put('secrets/a.txt', `${SECRET}\n`);
}

const clean = (r: Result): Result => {
  expect(JSON.stringify(r)).not.toContain(SECRET);
  return r;
};

const refused = (r: Result): void => {
  clean(r);
  expect(r.success, JSON.stringify(r)).toBe(false);
  expect(r.error!.code).toBe('BLOCKED_PATH');
};

/** No function and no command reads the secret under `rel`: refused, missing, or without the secret. */
async function unreadable(rel: string): Promise<void> {
  clean(await s.call('shed_read', { zone: 'storage', path: rel }));
  clean(await s.call('shed_read_bytes', { zone: 'storage', path: rel }));
  clean(await s.call('shed_exec', { zone: 'storage', cmd: 'cat', args: [rel] }));
  clean(await s.call('shed_exec', { zone: 'storage', cmd: 'grep', args: ['-r', 'SECRET', '.'] }));
}

/** The blocked file is still at its blocked name, intact. */
function intact(rel: string, text: string): void {
  expect(fs.readFileSync(s.zonePath('storage', rel), 'utf8')).toBe(text);
}

describe.each(MODES)('renaming or copying a parent folder (%s)', (mode) => {
  beforeEach(() => {
    s = makeShed({ sandbox: mode, blocked_patterns: PATTERNS });
    arrange();
  });
  afterEach(() => s.cleanup());

  it.each([
    ['proj/.git', 'proj/g', 'proj/g/config'],
    ['proj/.git', 'g2', 'g2/config'],
    ['secrets', 'open', 'open/a.txt'],
  ])('shed_rename %s -> %s is refused', async (from, to, exposed) => {
    refused(await s.call('shed_rename', { zone: 'storage', old_path: from, new_path: to }));
    expect(fs.existsSync(s.zonePath('storage', from))).toBe(true);
    await unreadable(exposed);
  });

  it('a rename that keeps blocked names blocked still works', async () => {
    const r = await s.call('shed_rename', { zone: 'storage', old_path: 'proj', new_path: 'project' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    refused(await s.call('shed_read', { zone: 'storage', path: 'project/.git/config' }));
    const keys = await s.call('shed_rename', { zone: 'storage', old_path: 'keys', new_path: 'k2' });
    expect(keys.success).toBe(true);
  });

  it.each([
    [['proj/.git', 'proj/g'], 'proj/g/config'],
    [['-T', 'proj/.git', 'proj/g2'], 'proj/g2/config'],
    [['-t', 'proj', 'proj/.git'], 'proj/config'],
    [['secrets', 'open'], 'open/a.txt'],
    [['--backup=numbered', 'notes.txt', '.env'], '.env.~1~'],
    [['-b', '-S', '.bak', 'notes.txt', '.env'], '.env.bak'],
  ])('shed_exec mv %j cannot expose it', async (args, exposed) => {
    clean(await s.call('shed_exec', { zone: 'storage', cmd: 'mv', args }));
    await unreadable(exposed);
    if (exposed.startsWith('.env')) intact('.env', `TOKEN=${SECRET}\n`);
    else if (exposed.includes('config')) intact('proj/.git/config', `url=${SECRET}\n`);
  });

  it.each([
    [['-r', 'proj/.git', 'proj/g'], 'proj/g/config'],
    [['-a', 'secrets', 'open'], 'open/a.txt'],
    [['-rl', 'proj/.git', 'hl'], 'hl/config'],
    [['--link', 'secrets/a.txt', 'x.txt'], 'x.txt'],
    [['-rs', 'home/.ssh', 'sym'], 'sym/known'],
  ])('shed_exec cp %j cannot expose it', async (args, exposed) => {
    clean(await s.call('shed_exec', { zone: 'storage', cmd: 'cp', args }));
    await unreadable(exposed);
    intact('proj/.git/config', `url=${SECRET}\n`);
  });

  it('bridges and shed_copy_to_group refuse to rename a folder holding blocked entries', async () => {
    refused(await s.call('shed_copy_storage_to_documents', { src: 'proj/.git', dest: 'g' }));
    refused(await s.call('shed_copy_storage_to_documents', { src: 'secrets', dest: 'open' }));
    expect(fs.existsSync(s.zonePath('documents', 'g'))).toBe(false);
    const kept = await s.call('shed_copy_storage_to_documents', { src: 'proj', dest: 'proj' });
    expect(kept.success, JSON.stringify(kept.error)).toBe(true);
    refused(await s.call('shed_move_documents_to_storage', { src: 'proj/.git', dest: 'moved' }));
    refused(await s.call('shed_read', { zone: 'documents', path: 'proj/.git/config' }));
  });
});

describe.each(MODES)('a blocked path behind a prefix (%s)', (mode) => {
  beforeEach(() => {
    s = makeShed({ sandbox: mode, blocked_patterns: PATTERNS });
    arrange();
  });
  afterEach(() => s.cleanup());

  it.each([
    ['strings', ['@.env']],
    ['strings', ['-n', '3', '@./keys/server.pem']],
    ['cat', ['@.env']],
    ['grep', ['--file=@.env', 'notes.txt']],
    ['wc', ['--files0-from=@secrets/a.txt']],
    ['sqlite3', ['file:.env', '.tables']],
    ['sqlite3', ['file:keys/server.pem?mode=ro', '.tables']],
    ['jq', ['-n', '--rawfile', 'x', '@.env', '$x']],
  ])('%s %j is refused', async (cmd, args) => {
    refused(await s.call('shed_exec', { zone: 'storage', cmd, args }));
  });
});

/** A tar in the zone holding a symbolic link `name` -> `target` and a hard link `hard` -> `.env`. */
function linkTar(entries: { name: string; target: string; hard?: boolean }[]): void {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-tar-'));
  try {
    fs.writeFileSync(path.join(work, '.env'), 'decoy\n');
    for (const e of entries) {
      fs.mkdirSync(path.dirname(path.join(work, e.name)), { recursive: true });
      if (e.hard) fs.linkSync(path.join(work, e.target), path.join(work, e.name));
      else fs.symlinkSync(e.target, path.join(work, e.name));
    }
    execFileSync('tar', ['-cf', s.zonePath('storage', 'evil.tar'), '-C', work, '.env', ...entries.map((e) => e.name)]);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

describe.each(MODES)('links to blocked files (%s)', (mode) => {
  beforeEach(() => {
    s = makeShed({ sandbox: mode, blocked_patterns: PATTERNS });
    arrange();
  });
  afterEach(() => s.cleanup());

  it.each([
    ['l.txt', '.env'],
    ['sub/deep.txt', '../keys/server.pem'],
    ['dir', 'home/.ssh'],
    ['g', 'proj/.git'],
  ])('a symbolic link %s -> %s extracted from a tar', async (name, target) => {
    linkTar([{ name, target }]);
    clean(await s.call('shed_exec', { zone: 'storage', cmd: 'tar', args: ['--keep-old-files', '-xf', 'evil.tar', name] }));
    const inner = target === 'home/.ssh' ? `${name}/known` : target === 'proj/.git' ? `${name}/config` : name;
    await unreadable(inner);
    refused(await s.call('shed_read', { zone: 'storage', path: inner }));
    if (fs.existsSync(s.zonePath('storage', name))) refused(await s.call('shed_exec', { zone: 'storage', cmd: 'cat', args: [inner] }));
  });

  it('a symbolic link extracted by unzip', async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-zip-'));
    fs.symlinkSync('.env', path.join(work, 'z.txt'));
    execFileSync('zip', ['-qy', s.zonePath('storage', 'evil.zip'), 'z.txt'], { cwd: work });
    fs.rmSync(work, { recursive: true, force: true });
    clean(await s.call('shed_exec', { zone: 'storage', cmd: 'unzip', args: ['-o', 'evil.zip'] }));
    await unreadable('z.txt');
  });

  it.each([['hard.txt'], ['sub/h2.txt']])('a hard link %s -> .env extracted from a tar is removed', async (name) => {
    linkTar([{ name, target: '.env', hard: true }]);
    // Extracting over the real .env (tar replaces it with the archive's) must not leave a second name either.
    clean(await s.call('shed_exec', { zone: 'storage', cmd: 'tar', args: ['--keep-old-files', '-xf', 'evil.tar'] }));
    await unreadable(name);
    intact('.env', `TOKEN=${SECRET}\n`);
  });

  it.each([['alias.txt'], ['deep/er/copy.log']])('a hard link %s made before (outside Fileshed) is the blocked file', async (name) => {
    fs.mkdirSync(path.dirname(s.zonePath('storage', name)), { recursive: true });
    fs.linkSync(s.zonePath('storage', '.env'), s.zonePath('storage', name));
    refused(await s.call('shed_read', { zone: 'storage', path: name }));
    refused(await s.call('shed_hexdump', { zone: 'storage', path: name }));
    refused(await s.call('shed_exec', { zone: 'storage', cmd: 'cat', args: [name] }));
    refused(await s.call('shed_exec', { zone: 'storage', cmd: 'strings', args: [`@${name}`] }));
    await unreadable(name);
    const zip = clean(await s.call('shed_zip', { zone: 'storage', src: '.', dest: 'all.zip' }));
    expect(zip.success, JSON.stringify(zip.error)).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'all.zip')).includes(Buffer.from(path.basename(name)))).toBe(false);
  });
});

describe('writes of blocked names by archives and history', () => {
  beforeEach(() => {
    s = makeShed({ sandbox: 'validated', blocked_patterns: PATTERNS });
    arrange();
  });
  afterEach(() => s.cleanup());

  it('shed_unzip leaves entries with blocked names out, and never replaces a blocked file', async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-unzip-'));
    for (const [rel, text] of Object.entries({ '.env': 'EVIL=1\n', 'keys/x.pem': 'pem', 'ok.txt': 'fine', 'proj/.git/config': 'evil' })) {
      fs.mkdirSync(path.dirname(path.join(work, rel)), { recursive: true });
      fs.writeFileSync(path.join(work, rel), text);
    }
    execFileSync('zip', ['-qr', s.zonePath('storage', 'in.zip'), '.'], { cwd: work });
    fs.rmSync(work, { recursive: true, force: true });
    const r = clean(await s.call('shed_unzip', { zone: 'storage', src: 'in.zip', overwrite: true }));
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data!.blocked_left_out).toBe(3);
    expect(fs.readFileSync(s.zonePath('storage', 'ok.txt'), 'utf8')).toBe('fine');
    intact('.env', `TOKEN=${SECRET}\n`);
    intact('proj/.git/config', `url=${SECRET}\n`);
    expect(fs.existsSync(s.zonePath('storage', 'keys/x.pem'))).toBe(false);
  });

  it('git restore/checkout of a folder holding blocked files leaves them alone; naming one is refused', async () => {
    put('proj/.env', 'OLD=1\n', 'documents');
    expect((await s.call('shed_create_file', { zone: 'documents', path: 'proj/notes.md', content: 'v1\n' })).success).toBe(true);
    expect((await s.call('shed_patch_text', { zone: 'documents', path: 'proj/notes.md', content: 'v2\n', overwrite: true })).success).toBe(true);
    fs.writeFileSync(s.zonePath('documents', 'proj/.env'), `NEW=${SECRET}\n`);
    for (const args of [['restore', '--source', 'HEAD~1', '--', 'proj'], ['checkout', 'HEAD~2', '--', 'proj']]) {
      fs.writeFileSync(s.zonePath('documents', 'proj/notes.md'), 'changed\n');
      const r = clean(await s.call('shed_exec', { zone: 'documents', cmd: 'git', args }));
      expect(r.success, JSON.stringify(r.error)).toBe(true);
      expect(fs.readFileSync(s.zonePath('documents', 'proj/notes.md'), 'utf8')).toBe('v1\n');
      expect(fs.readFileSync(s.zonePath('documents', 'proj/.env'), 'utf8')).toBe(`NEW=${SECRET}\n`);
    }
    refused(await s.call('shed_exec', { zone: 'documents', cmd: 'git', args: ['restore', '--source=HEAD~1', '--', 'proj/.env'] }));
    expect(fs.readFileSync(s.zonePath('documents', 'proj/.env'), 'utf8')).toBe(`NEW=${SECRET}\n`);
  });
});
