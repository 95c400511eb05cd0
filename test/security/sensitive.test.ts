/**
 * Sensitive files: valves blocked_patterns and allowed_extensions. Off by default; when
 * set, no path parameter reaches a blocked file, no command argument names one, and a
 * folder-walking command (grep -r, tar) does not find them: in every mode they are out of the zone
 * while a command runs. Every attack checks that the secret never appears in a response.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockedPattern, blockRules } from '../../src/core/base/blocked/rules.js';
import { makeShed, type Result, type Shed } from '../helpers/shed.js';
import { MODES } from './exec-harness.js';

const SECRET = `SECRET-${crypto.randomBytes(6).toString('hex')}`;
const PATTERNS = '.env, *.pem, .ssh/, .git/config, id_rsa*';

function arrange(s: Shed): void {
  const put = (rel: string, text: string) => {
    const p = s.zonePath('storage', rel);
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, text);
  };
  put('notes.txt', 'hello\n');
  put('.env', `TOKEN=${SECRET}\n`);
  put('keys/server.pem', `${SECRET}\n`);
  put('.ssh/known', `${SECRET}\n`);
  put('proj/.git/config', `url=${SECRET}\n`);
  put('src/app.txt', 'code\n');
  fs.symlinkSync('.env', s.zonePath('storage', 'alias.txt'));
}

/** The secret never leaves: not in any response text. */
function clean(r: Result): Result {
  expect(JSON.stringify(r)).not.toContain(SECRET);
  return r;
}

function blocked(r: Result, pattern?: string): void {
  clean(r);
  expect(r.success, JSON.stringify(r)).toBe(false);
  expect(r.error!.code).toBe('BLOCKED_PATH');
  if (pattern !== undefined) expect(r.error!.message).toContain(`'${pattern}'`);
  expect(r.error!.hint).toBeTruthy();
}

describe('glob rules', () => {
  const rules = blockRules({ blocked_patterns: PATTERNS })!;
  it.each([
    ['.env', '.env'],
    ['a/b/.ENV', '.env'],
    ['keys/Server.PEM', '*.pem'],
    ['.ssh', '.ssh/'],
    ['.ssh/id_ed25519', '.ssh/'],
    ['proj/.git/config', '.git/config'],
    ['id_rsa.pub', 'id_rsa*'],
  ])('%s is blocked by %s', (rel, pattern) => expect(blockedPattern(rules, rel)).toBe(pattern));
  it.each(['notes.txt', '.envrc', 'env', 'pem', 'proj/.git/HEAD', 'a.pem.txt'])('%s is not blocked', (rel) => expect(blockedPattern(rules, rel)).toBeUndefined());
  it('empty valves mean no rules at all', () => expect(blockRules({ blocked_patterns: ' , ', allowed_extensions: '' })).toBeUndefined());
});

describe('off by default', () => {
  const s = makeShed({ sandbox: 'validated' });
  beforeAll(() => arrange(s));
  afterAll(() => s.cleanup());
  it('a .env file reads like any other file', async () => {
    const r = await s.call('shed_read', { zone: 'storage', path: '.env' });
    expect(r.data!.content).toContain(SECRET);
    const c = await s.call('shed_exec', { zone: 'storage', cmd: 'cat', args: ['.env'] });
    expect(c.data!.stdout).toContain(SECRET);
  });
});

describe('path parameters', () => {
  const s = makeShed({ sandbox: 'validated', blocked_patterns: PATTERNS });
  beforeAll(() => arrange(s));
  afterAll(() => s.cleanup());

  it('reads of blocked files are refused, naming the pattern', async () => {
    blocked(await s.call('shed_read', { zone: 'storage', path: '.env' }), '.env');
    blocked(await s.call('shed_read', { zone: 'storage', path: 'KEYS/server.PEM' }), '*.pem');
    blocked(await s.call('shed_read', { zone: 'storage', path: '.ssh/known' }), '.ssh/');
    blocked(await s.call('shed_read_bytes', { zone: 'storage', path: 'proj/.git/config' }), '.git/config');
    blocked(await s.call('shed_hexdump', { zone: 'storage', path: './x/../.env' }), '.env');
  });

  it('a link to a blocked file is judged by where it leads', async () => {
    blocked(await s.call('shed_read', { zone: 'storage', path: 'alias.txt' }), '.env');
  });

  it('writes, renames and moves onto or off blocked names are refused and change nothing', async () => {
    blocked(await s.call('shed_create_file', { zone: 'storage', path: 'sub/.Env', content: 'x' }), '.env');
    expect(fs.existsSync(s.zonePath('storage', 'sub/.Env'))).toBe(false);
    blocked(await s.call('shed_rename', { zone: 'storage', old_path: '.env', new_path: 'plain.txt' }), '.env');
    blocked(await s.call('shed_rename', { zone: 'storage', old_path: 'notes.txt', new_path: 'new.pem' }), '*.pem');
    blocked(await s.call('shed_patch_text', { zone: 'storage', path: '.env', content: 'more' }), '.env');
    expect(fs.readFileSync(s.zonePath('storage', '.env'), 'utf8')).toBe(`TOKEN=${SECRET}\n`);
  });

  it('shed_tree hides blocked entries and counts them', async () => {
    const r = clean(await s.call('shed_tree', { zone: 'storage', depth: 5 }));
    const tree = String(r.data!.tree);
    expect(tree).toContain('notes.txt');
    // Entries are hidden (a link elsewhere may still show a blocked name as its target text: names are not contents).
    for (const name of ['.env', 'server.pem', '.ssh', 'config']) expect(tree).not.toContain(`── ${name}`);
    expect(r.data!.hidden_blocked).toBe(4);
    expect(r.message).toContain('hidden by blocked_patterns');
  });

  it('shed_zip leaves blocked files out of the archive', async () => {
    const r = clean(await s.call('shed_zip', { zone: 'storage', src: '.', dest: 'all.zip' }));
    expect(r.data!.blocked_left_out).toBe(4);
    expect(fs.readFileSync(s.zonePath('storage', 'all.zip')).includes(Buffer.from('.env'))).toBe(false);
    const info = clean(await s.call('shed_zipinfo', { zone: 'storage', path: 'all.zip' }));
    expect(JSON.stringify(info.data)).toContain('notes.txt');
    expect(JSON.stringify(info.data)).not.toMatch(/server\.pem|\.ssh|\.git\/config/);
  });

  it('other files work as usual', async () => {
    const r = await s.call('shed_read', { zone: 'storage', path: 'notes.txt' });
    expect(r.data!.content).toBe('hello\n');
  });
});

describe.each(MODES)('commands (%s)', (mode) => {
  const s = makeShed({ sandbox: mode, blocked_patterns: PATTERNS });
  beforeAll(() => arrange(s));
  afterAll(() => s.cleanup());
  const exec = async (args: Record<string, unknown>) => clean(await s.call('shed_exec', { zone: 'storage', ...args }));

  it('an argument naming a blocked file is refused in every form', async () => {
    blocked(await exec({ cmd: 'cat', args: ['.env'] }), '.env');
    blocked(await exec({ cmd: 'cat', args: ['./keys/server.pem'] }), '*.pem');
    blocked(await exec({ cmd: 'grep', args: ['--file=.env', 'notes.txt'] }), '.env');
    blocked(await exec({ cmd: 'cp', args: ['-r', '.ssh', 'copy'] }), '.ssh/');
  });

  it('commands on other paths work', async () => {
    const r = await exec({ cmd: 'grep', args: ['-r', 'code', 'src'] });
    expect(r.data!.stdout).toContain('src/app.txt');
    const ls = await exec({ cmd: 'ls', args: ['-a'] });
    expect(ls.success).toBe(true);
  });

  it('grep -r over the zone never shows a blocked file (they are not in the zone while it runs)', async () => {
    // -R follows links, which validated mode refuses for the zone's boundary (no kernel there).
    for (const args of [['-r', 'SECRET', '.'], ['-rn', 'SECRET'], [mode === 'validated' ? '-r' : '-R', SECRET.slice(0, 10), 'keys']]) {
      const r = await exec({ cmd: 'grep', args });
      expect(r.success, JSON.stringify(r.error)).toBe(true);
      expect(r.data!.returncode).not.toBe(0); // nothing found
    }
  });

  it('tar of the zone cannot carry a blocked file out', async () => {
    const r = await exec({ cmd: 'tar', args: ['-cf', 'all.tar', '.'] });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    const tar = fs.readFileSync(s.zonePath('storage', 'all.tar'));
    expect(tar.includes(Buffer.from(SECRET))).toBe(false);
    expect(tar.includes(Buffer.from('server.pem'))).toBe(false);
  });

  it('blocked files stay intact after commands', () => {
    expect(fs.readFileSync(s.zonePath('storage', '.env'), 'utf8')).toBe(`TOKEN=${SECRET}\n`);
    expect(fs.readFileSync(s.zonePath('storage', 'keys/server.pem'), 'utf8')).toBe(`${SECRET}\n`);
  });
});

describe('built-in git in Documents', () => {
  const s = makeShed({ sandbox: 'validated', blocked_patterns: PATTERNS });
  beforeAll(async () => {
    fs.mkdirSync(s.zonePath('documents'), { recursive: true });
    fs.writeFileSync(s.zonePath('documents', '.env'), `TOKEN=${SECRET}\n`);
    fs.writeFileSync(s.zonePath('documents', 'notes.md'), 'v1\n');
    const r = await s.call('shed_patch_text', { zone: 'documents', path: 'notes.md', content: 'v2' }); // the first call commits the zone
    expect(r.success, JSON.stringify(r.error)).toBe(true);
  });
  afterAll(() => s.cleanup());
  const git = async (args: string[]) => clean(await s.call('shed_exec', { zone: 'documents', cmd: 'git', args }));

  it('blocked paths are not in any history view; naming one is refused', async () => {
    // The secret is in history (the first commit holds .env), and the next one deleted it: views of every kind work and never show it.
    fs.rmSync(s.zonePath('documents', '.env'));
    expect((await s.call('shed_patch_text', { zone: 'documents', path: 'notes.md', content: 'v3' })).success).toBe(true);
    fs.writeFileSync(s.zonePath('documents', '.env'), `TOKEN=${SECRET}-NOW\n`);
    for (const args of [['show', 'HEAD~1'], ['show', 'HEAD'], ['log', '-p'], ['log', '--stat'], ['diff', 'HEAD~1'], ['diff', 'HEAD~1', 'HEAD'], ['diff', 'HEAD~1', '--', '.'], ['status'], ['show', 'HEAD~1:']]) {
      const r = await git(args);
      expect(r.success, `${args.join(' ')}: ${JSON.stringify(r.error)}`).toBe(true);
      expect(JSON.stringify(r.data), args.join(' ')).not.toMatch(/\.env|TOKEN/);
    }
    expect(String((await git(['log', '-p'])).data!.stdout)).toContain('notes.md');
    blocked(await git(['show', 'HEAD~1:.env']), '.env');
    blocked(await git(['blame', '.env']), '.env');
    blocked(await git(['log', '--', '.env']), '.env');
  });
});

describe('allowed_extensions', () => {
  const s = makeShed({ sandbox: 'validated', allowed_extensions: 'txt, .md' });
  beforeAll(() => {
    fs.mkdirSync(s.zonePath('storage'), { recursive: true });
    fs.writeFileSync(s.zonePath('storage', 'a.txt'), 'a\n');
    fs.writeFileSync(s.zonePath('storage', 'data.csv'), `${SECRET}\n`);
    fs.writeFileSync(s.zonePath('storage', 'Makefile'), `${SECRET}\n`);
  });
  afterAll(() => s.cleanup());

  it('files with other extensions (or none) are refused, folders are not', async () => {
    expect((await s.call('shed_read', { zone: 'storage', path: 'a.txt' })).success).toBe(true);
    const r = clean(await s.call('shed_read', { zone: 'storage', path: 'data.csv' }));
    expect(r.error!.code).toBe('BLOCKED_PATH');
    expect(r.error!.message).toContain(".csv");
    blocked(await s.call('shed_read', { zone: 'storage', path: 'Makefile' }));
    blocked(await s.call('shed_create_file', { zone: 'storage', path: 'x.json', content: '{}' }));
    expect((await s.call('shed_create_file', { zone: 'storage', path: 'dir/b.MD', content: 'b' })).success).toBe(true);
    blocked(await s.call('shed_exec', { zone: 'storage', cmd: 'cat', args: ['data.csv'] }));
    const mk = await s.call('shed_exec', { zone: 'storage', cmd: 'mkdir', args: ['newdir'] });
    expect(mk.data?.returncode).toBe(0);
  });
});
