/**
 * The server as the Docker image and the Kubernetes manifests run it: root with every capability
 * dropped but SETUID SETGID CHOWN FOWNER DAC_OVERRIDE KILL SYS_NICE, and no new privileges
 * (setpriv here, as Docker's cap_drop/cap_add and no-new-privileges do). With identity_separation
 * required, users' scripts run as their own uids, their files work, and one user's script changes and
 * learns nothing of another's; with one capability fewer (SETUID), commands are refused, never run as
 * the server.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findProgram } from '../../src/core/services/exec/launcher/system.js';

const { pluginBundleOptions } = createRequire(import.meta.url)('../../build/bundle-options.cjs') as { pluginBundleOptions(outfile: string): Parameters<typeof build>[0] };
const CAPS = ['setuid', 'setgid', 'chown', 'fowner', 'dac_override', 'kill', 'sys_nice'];
const setpriv = findProgram('setpriv');

let dir: string;

const CHILD = `
import fs from 'node:fs';
const [plugin, base, mode] = process.argv.slice(2);
const { Tools } = await import(plugin);
const tools = new Tools();
tools.valves = { ...tools.valves, storage_base_path: base, sandbox: mode, allow_python: true, allow_shell: true, identity_separation: 'required', identity_id_first: 2400000 };
const call = async (fn, args, user) => JSON.parse(await tools[fn]({ ...args, __user__: { id: user, name: user }, __metadata__: { chat_id: 'c1' } }));
const out = {};
out.caps = fs.readFileSync('/proc/self/status', 'utf8').split('\\n').filter((l) => /^Cap(Eff|Bnd)/.test(l));
out.write = await call('shed_run_shell', { zone: 'storage', script: 'set -e; echo one > a.txt; sed -i s/one/two/ a.txt; mkdir d; touch d/f; rm -r d; cat a.txt' }, 'alice');
out.bob = await call('shed_run_shell', { zone: 'storage', script: 'echo mine > b.txt' }, 'bob');
const victim = base + '/users/alice/Storage/data';
out.attack = await call('shed_run_python', { zone: 'storage', code: 'import os\\nfor f in [lambda: os.stat(' + JSON.stringify(victim + '/a.txt') + '), lambda: os.chmod(' + JSON.stringify(victim) + ', 0o777), lambda: os.kill(os.getppid(), 9), lambda: os.setpriority(os.PRIO_PROCESS, os.getppid(), 19)]:\\n    try:\\n        f(); print("LEAKED")\\n    except OSError as e:\\n        print("refused", e.errno)' }, 'bob');
out.created = await call('shed_create_file', { zone: 'storage', path: 'later/c.txt', content: 'x\\n' }, 'alice');
out.append = await call('shed_run_shell', { zone: 'storage', script: 'echo y >> later/c.txt && cat later/c.txt' }, 'alice');
const uid = (p) => { try { return fs.statSync(p).uid; } catch { return null; } };
out.stats = { a: uid(victim + '/a.txt'), c: uid(victim + '/later/c.txt'), b: uid(base + '/users/bob/Storage/data/b.txt'), mode: fs.statSync(victim).mode & 0o7777 };
process.stdout.write(JSON.stringify(out));
process.exit(0);
`;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-caps-'));
  fs.chmodSync(dir, 0o755);
  await build(pluginBundleOptions(path.join(dir, 'plugin.mjs')));
  fs.writeFileSync(path.join(dir, 'child.mjs'), CHILD);
}, 120_000);
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function child(caps: string[], mode: string): Promise<Record<string, any>> { // eslint-disable-line @typescript-eslint/no-explicit-any -- the child's JSON report
  const base = fs.mkdtempSync(path.join(dir, 'base-'));
  const bounding = `-all,${caps.map((c) => `+${c}`).join(',')}`;
  return new Promise((resolve, reject) => {
    const p = spawn(setpriv!, [`--bounding-set=${bounding}`, '--inh-caps=-all', '--no-new-privs', process.execPath, path.join(dir, 'child.mjs'), path.join(dir, 'plugin.mjs'), base, mode], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => {
      try {
        resolve(JSON.parse(out));
      } catch {
        reject(new Error(`child exited ${code}: ${err.slice(0, 2000)} ${out.slice(0, 2000)}`));
      }
    });
  });
}

describe.skipIf(!setpriv || process.geteuid?.() !== 0)('root with only identity separation\'s capabilities', () => {
  // Landlock: what a default container gets (bubblewrap as root without CAP_SYS_ADMIN cannot make its namespaces).
  it('landlock: each user is their own uid; their files work; another user learns and changes nothing', async () => {
    const r = await child(CAPS, 'landlock');
    expect(r.caps.join(' ')).toMatch(/CapBnd:\s+00000000008000eb/);
    expect(r.write.success, JSON.stringify(r.write)).toBe(true);
    expect(r.write.data.stdout).toBe('two\n');
    expect(r.bob.success, JSON.stringify(r.bob)).toBe(true);
    expect(r.attack.data.stdout).not.toContain('LEAKED');
    expect(r.attack.data.stdout.match(/refused/g)?.length).toBe(4);
    expect(r.created.success, JSON.stringify(r.created)).toBe(true);
    expect(r.append.data.stdout).toBe('x\ny\n');
    expect(r.stats.a).toBeGreaterThanOrEqual(2_400_000);
    expect(r.stats.c).toBe(r.stats.a);
    expect(r.stats.b).not.toBe(r.stats.a);
    expect(r.stats.mode & 0o077).toBe(0);
  }, 120_000);

  it('without CAP_SETUID, commands are refused (identity_separation=required), never run as the server', async () => {
    const r = await child(CAPS.filter((c) => c !== 'setuid'), 'landlock');
    expect(r.write.success).toBe(false);
    expect(r.write.error.code).toBe('SANDBOX_UNAVAILABLE');
    expect(r.write.error.message).toMatch(/CAP_SETUID/);
  }, 120_000);
});
