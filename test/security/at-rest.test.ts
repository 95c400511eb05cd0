/**
 * Files at rest: a server started under the common umask 022 still keeps everything it stores to
 * its own user. The storage base is 0700 (created so, or tightened at start), secrets are 0600,
 * and every file and folder beneath (users' files, git objects, command output, databases, the
 * link database, the config file, the audit log) has no group or other permission. Where the
 * tests run as root, a real second local user (nobody) is refused reading them.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateStorageBase } from '../../src/core/base/fs/private.js';
import { CLI, json, serve, type Served } from '../hosts/helpers.js';

const mode = (p: string) => fs.lstatSync(p).mode & 0o777;

/**
 * Every path under `root` (itself included) whose mode lets group or others read or write. Search
 * alone (x) is allowed: under identity separation (the default as root) users' commands run as their
 * own uid and pass through the base, `users/` (0711: no listing) and their own folders (0710, group =
 * their own gid) to reach their zone.
 */
function openToOthers(root: string): string[] {
  const open: string[] = [];
  const walk = (p: string) => {
    const st = fs.lstatSync(p);
    if (!st.isSymbolicLink() && (st.mode & 0o066) !== 0) open.push(`${path.relative(root, p) || '.'} ${(st.mode & 0o777).toString(8)}`);
    if (st.isDirectory()) for (const name of fs.readdirSync(p)) walk(path.join(p, name));
  };
  walk(root);
  return open;
}

const asRoot = process.getuid?.() === 0 && fs.existsSync('/usr/bin/setpriv');
/** Runs a command as the local user nobody (65534); its exit status. */
const asNobody = (...argv: string[]) => spawnSync('/usr/bin/setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', ...argv], { encoding: 'utf8' }).status;

describe('fileshed serve under umask 022', () => {
  let s: Served;
  beforeAll(async () => {
    // The parent lets everyone through, so only the base's own mode keeps others out.
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-rest-'));
    fs.chmodSync(parent, 0o755);
    const base = path.join(parent, 'new-base');
    s = await serve(['--access-log', 'access.log'], { base, umask: '022' });
    const calls: [string, Record<string, unknown>][] = [
      ['shed_create_file', { zone: 'storage', path: 'private/notes.txt', content: 'my notes' }],
      ['shed_create_file', { zone: 'documents', path: 'cv.md', content: '# CV' }],
      ['shed_exec', { zone: 'storage', cmd: 'cp', args: ['private/notes.txt', 'copy.txt'] }],
      ['shed_sqlite', { zone: 'storage', path: 'db.sqlite', query: 'CREATE TABLE t (x)' }],
      ['shed_link_create', { zone: 'storage', path: 'private/notes.txt' }],
    ];
    for (const [fn, args] of calls) expect((await json(await s.post(fn, args))).success, fn).toBe(true);
  });
  afterAll(async () => {
    await s.stop();
  });

  it('creates the base 0700 (0711 under identity separation) and its secrets 0600', () => {
    expect([0o700, 0o711]).toContain(mode(s.base));
    expect(mode(path.join(s.base, 'fileshed.json'))).toBe(0o600);
    expect(mode(path.join(s.base, 'access_auth.sqlite'))).toBe(0o600);
    expect(fs.readdirSync(path.join(s.base, 'audit')).length).toBeGreaterThan(0);
  });

  it('leaves nothing beneath open to group or others', () => {
    expect(fs.existsSync(path.join(s.base, 'users', 'local', 'Documents', 'git', 'objects'))).toBe(true); // the history, beside the zone
    expect(openToOthers(s.base)).toEqual([]);
  });

  it.runIf(asRoot)('another local user (nobody) can read none of it', () => {
    const control = path.join(path.dirname(s.base), 'control.txt'); // beside the base, in a folder open to all
    fs.writeFileSync(control, 'readable', { mode: 0o644 });
    expect(asNobody('cat', control)).toBe(0); // the check can pass: nobody reads an open file
    expect(asNobody('cat', path.join(s.base, 'users', 'local', 'Storage', 'data', 'private', 'notes.txt'))).not.toBe(0);
    expect(asNobody('cat', path.join(s.base, 'access_auth.sqlite'))).not.toBe(0);
    expect(asNobody('ls', s.base)).not.toBe(0);
  });
});

describe('a base left open by an older version', () => {
  it('is tightened at start: the base 0700, the link database and the config file 0600', async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-rest-old-'));
    fs.chmodSync(base, 0o755);
    fs.writeFileSync(path.join(base, 'access_auth.sqlite'), '', { mode: 0o644 });
    fs.writeFileSync(path.join(base, 'fileshed.json'), '{"server":{"link_secret":"secret-0123456789abcdef"}}', { mode: 0o644 });
    fs.chmodSync(path.join(base, 'fileshed.json'), 0o644);
    const s = await serve(['--access-log', 'off'], { base, umask: '022' });
    try {
      expect(mode(base)).toBe(0o700);
      expect(mode(path.join(base, 'access_auth.sqlite'))).toBe(0o600);
      expect(mode(path.join(base, 'fileshed.json'))).toBe(0o600);
      expect(s.stderr()).not.toContain('warning');
    } finally {
      await s.stop();
    }
  });

  it('a base that cannot be tightened gives a warning naming it, never silence', () => {
    expect(privateStorageBase('/proc/1')).toMatch(/^the storage base is readable by other local users: \/proc\/1 is mode 555 and could not be made 700 \(EPERM\)/);
  });
});

describe('fileshed mcp under umask 022', () => {
  it('keeps the files of a desktop user to that user', async () => {
    const base = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-rest-mcp-')), 'data');
    const client = new Client({ name: 'rest', version: '1' });
    await client.connect(new StdioClientTransport({ command: '/bin/sh', args: ['-c', 'umask 022 && exec "$@"', 'sh', process.execPath, CLI, 'mcp', '--base', base], stderr: 'pipe' }));
    try {
      const r = await client.callTool({ name: 'shed_create_file', arguments: { zone: 'storage', path: 'a/b.txt', content: 'desk' } });
      expect(r.isError).toBe(false);
      await client.callTool({ name: 'shed_link_create', arguments: { zone: 'storage', path: 'a/b.txt' } });
      expect(mode(base)).toBe(0o700);
      expect(openToOthers(base)).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
