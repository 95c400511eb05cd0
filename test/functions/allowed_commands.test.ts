/**
 * shed_allowed_commands: per-zone whitelists split into installed and missing (with the Debian
 * package to install), the network rules of the current network_mode, and the sandbox in use.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';

let s: Shed | undefined;
afterEach(() => {
  s?.cleanup();
  s = undefined;
});

const installed = (cmd: string) => ['/usr/local/bin', '/usr/bin', '/bin'].some((d) => fs.existsSync(path.join(d, cmd)));

async function report(valves: Record<string, unknown> = {}) {
  s = makeShed(valves);
  const r = await s.call('shed_allowed_commands', {});
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  expect(r.success).toBe(true);
  return { data: r.data!, message: r.message! };
}

describe('shed_allowed_commands', () => {
  it('has one section per zone, plus network, sandbox, the forbidden list and a summary', async () => {
    const { data, message } = await report();
    expect(Object.keys(data).sort()).toEqual(['documents', 'forbidden', 'network', 'sandbox', 'storage', 'summary', 'uploads']);
    for (const zone of ['uploads', 'storage', 'documents']) {
      expect(Array.isArray(data[zone].available)).toBe(true);
      expect(typeof data[zone].missing).toBe('object');
    }
    expect(message).toMatch(/^\d+ of \d+ allowed commands are installed; sandbox: \w+( \(Landlock ABI \d+\))?; network: disabled\.$/);
    expect(data.summary.whitelist).toBe(data.storage.available.length + Object.keys(data.storage.missing).length);
  });

  it('splits each list into installed and missing, the truth of this machine', async () => {
    const { data } = await report();
    for (const cmd of data.storage.available) expect(installed(cmd), cmd).toBe(true);
    for (const cmd of Object.keys(data.storage.missing)) expect(installed(cmd), cmd).toBe(false);
    expect(data.storage.available).toContain('cat');
    expect(data.storage.available).toContain('grep');
    expect(data.storage.available).toEqual([...data.storage.available].sort());
  });

  it('names the Debian package of each missing command', async () => {
    const { data } = await report();
    const missing = data.storage.missing as Record<string, string>;
    for (const [cmd, pkg] of Object.entries(missing)) expect(pkg, cmd).toMatch(/^[a-z0-9][a-z0-9.+-]*( \(.*\))?$/);
    if (!installed('rg')) expect(missing.rg).toBe('ripgrep');
    if (!installed('xmllint')) expect(missing.xmllint).toBe('libxml2-utils');
    if (!installed('7z')) expect(missing['7z']).toBe('p7zip-full');
  });

  it('Uploads lists only reading commands; Storage adds the writing ones; chmod and shells are nowhere', async () => {
    const { data } = await report();
    const all = (z: string) => [...data[z].available, ...Object.keys(data[z].missing)];
    for (const cmd of ['cat', 'grep', 'sed', 'awk', 'sort', 'tar', 'unzip', 'sqlite3']) expect(all('uploads'), cmd).toContain(cmd);
    for (const cmd of ['rm', 'mv', 'cp', 'touch', 'mkdir', 'zip', 'git', 'tee']) {
      expect(all('uploads'), cmd).not.toContain(cmd);
      expect(all('storage'), cmd).toContain(cmd);
    }
    for (const cmd of ['chmod', 'sh', 'bash', 'python3', 'env', 'xargs', 'ln']) {
      expect(all('storage'), cmd).not.toContain(cmd);
      expect(data.forbidden, cmd).toContain(cmd);
    }
    expect(data.documents.note).toMatch(/built in/);
  });

  it.each([
    ['disabled', { enabled: false, get_only: false }, false, false],
    ['safe', { enabled: true, get_only: true }, true, false],
    ['all', { enabled: true, get_only: false }, true, true],
  ] as const)('network_mode "%s"', async (mode, curl, clone, push) => {
    const { data, message } = await report({ network_mode: mode });
    expect(data.network.mode).toBe(mode);
    expect(data.network.curl).toMatchObject({ ...curl, installed: installed('curl') });
    expect(data.network.wget).toMatchObject({ ...curl, installed: installed('wget') });
    expect(data.network.git_clone_fetch_pull).toBe(clone);
    expect(data.network.git_push).toBe(push);
    expect(data.network.media_urls).toBe(mode !== 'disabled');
    expect(message).toContain(`network: ${mode}`);
  });

  it('sandbox "validated": says so and why', async () => {
    const { data, message } = await report({ sandbox: 'validated' });
    expect(data.sandbox).toMatchObject({ configured: 'validated', active: 'validated' });
    expect(data.sandbox.reason).toMatch(/admin chose/);
    expect(message).toContain('sandbox: validated');
    expect(data.sandbox.sandbox_only.usable_now).toBe(false);
    for (const cmd of ['git', 'ffmpeg', 'pandoc', 'convert', 'exiftool', '7z']) expect(data.sandbox.sandbox_only.commands[cmd], cmd).toMatch(/\w+ \w+ \w+/);
  });

  it.skipIf(!installed('bwrap'))('sandbox "auto" and "bwrap" on a machine where bubblewrap works: bwrap, with the reason', async () => {
    for (const setting of ['auto', 'bwrap']) {
      const { data } = await report({ sandbox: setting });
      expect(data.sandbox).toMatchObject({ configured: setting, active: 'bwrap' });
      expect(data.sandbox.landlock_abi, 'Landlock applies inside bubblewrap too').toBeGreaterThanOrEqual(1);
      expect(data.sandbox.reason).toMatch(/bubblewrap works/);
      expect(data.sandbox.sandbox_only.usable_now).toBe(true);
      s!.cleanup();
      s = undefined;
    }
  });

  it('sandbox "landlock": the mode and the Landlock ABI in force (these machines run Linux with Landlock)', async () => {
    const { data, message } = await report({ sandbox: 'landlock' });
    expect(data.sandbox).toMatchObject({ configured: 'landlock', active: 'landlock' });
    expect(data.sandbox.landlock_abi).toBeGreaterThanOrEqual(1);
    expect(data.sandbox.reason).toMatch(/Landlock \(ABI \d+\) works/);
    expect(message).toContain(`sandbox: landlock (Landlock ABI ${data.sandbox.landlock_abi})`);
    expect(data.sandbox.sandbox_only.usable_now).toBe(true);
  });

  it('needs no parameters and no user', async () => {
    s = makeShed();
    const json = await (s.tools as unknown as Record<string, (a: unknown) => Promise<string>>).shed_allowed_commands!.call(s.tools, {});
    expect(JSON.parse(json).success).toBe(true);
  });
});
