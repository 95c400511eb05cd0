/**
 * Which separation is in force, as /healthz, shed_parameters, the admin page and `fileshed doctor`
 * say it (src/core/services/ids/separation.ts), and how a server knows it can switch identities.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { separationReport } from '../../src/core/services/ids/separation.js';
import { canSwitchIdentity } from '../../src/core/services/ids/switch.js';
import { defaultValves } from '../../src/core/base/valves.js';
import { makeShed } from '../helpers/shed.js';
import { requireSeparation } from '../../src/core/services/ids/for-call.js';
import { standaloneHost } from '../../src/core/services/host-bridge.js';
import { Tools } from '../../src/index.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-sep-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function status(capEff: string): string {
  const p = path.join(dir, `status-${capEff}`);
  fs.writeFileSync(p, `Name:\tnode\nUid:\t1000\t1000\t1000\t1000\nCapInh:\t0000000000000000\nCapPrm:\t${capEff}\nCapEff:\t${capEff}\n`);
  return p;
}

describe('separation in force', () => {
  it('a server can switch with root\'s capabilities, or CAP_SETUID and CAP_SETGID; not with one of them or none', () => {
    expect(canSwitchIdentity(status('000001ffffffffff'))).toBe(true);
    expect(canSwitchIdentity(status('00000000000000c0'))).toBe(true);
    expect(canSwitchIdentity(status('0000000000000080'))).toBe(false);
    expect(canSwitchIdentity(status('0000000000000040'))).toBe(false);
    expect(canSwitchIdentity(status('0000000000000000'))).toBe(false);
    expect(canSwitchIdentity(path.join(dir, 'missing'))).toBe(false);
  });

  it('identity when on and possible; else namespaces under bwrap, none under landlock or validated', () => {
    const v = { ...defaultValves(), identity_separation: 'off' as const };
    expect(separationReport(v, 'landlock').separation).toBe('none');
    expect(separationReport(v, 'landlock').reason).toMatch(/identity_separation is off.*one trust domain/);
    expect(separationReport(v, 'bwrap').separation).toBe('namespaces');
    // This test runs as root: on, the server switches.
    const on = separationReport({ ...v, identity_separation: 'auto' }, 'landlock');
    expect(on.can_switch).toBe(process.geteuid!() === 0 || on.can_switch);
    if (process.geteuid!() === 0) expect(on.separation).toBe(on.range_mapped === false ? 'none' : 'identity');
  });

  it('shed_parameters says it', async () => {
    const s = makeShed({ identity_separation: 'auto' });
    try {
      const r = await s.call('shed_parameters');
      const sep = (r.data as { separation: { separation: string; identity_separation: string } }).separation;
      expect(sep.identity_separation).toBe('auto');
      expect(['identity', 'namespaces', 'none']).toContain(sep.separation);
      if (process.geteuid!() === 0) expect(sep.separation).toBe('identity');
    } finally {
      s.cleanup();
    }
  });
});

describe('a server for several users that cannot separate them', () => {
  const off = { ...defaultValves(), identity_separation: 'off' as const };
  it('refuses commands unless the admin accepts one trust domain', () => {
    // serve without --allow-unconfined (unconfinedAllowed false), Landlock, users not separated
    expect(() => requireSeparation(off, 'landlock', false)).toThrow(/cannot keep its users apart/);
    try {
      requireSeparation(off, 'landlock', false);
    } catch (err) {
      expect((err as { code?: string }).code ?? JSON.stringify(err)).toMatch(/SANDBOX_UNAVAILABLE/);
    }
    expect(() => requireSeparation({ ...off, one_trust_domain: true }, 'landlock', false)).not.toThrow();
    // bubblewrap's namespaces separate them; a one-user host (the plugin, mcp, call) is not refused
    expect(() => requireSeparation(off, 'bwrap', false)).not.toThrow();
    expect(() => requireSeparation(off, 'landlock', true)).not.toThrow();
  });

  it('shed_exec over such a host answers SANDBOX_UNAVAILABLE naming the fix', async () => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-trust-'));
    try {
      // What fileshed serve gives the plugin without --allow-unconfined.
      const t = new Tools({ host: { ...standaloneHost, allowsUnconfined: false }, valves: { storage_base_path: base, sandbox: 'landlock', identity_separation: 'off' } });
      const exec = async () => JSON.parse(await t.shed_exec!({ zone: 'storage', cmd: 'ls', __user__: { id: 'alice' } })) as { success: boolean; error?: { code: string; hint?: string } };
      const r = await exec();
      expect(r.success).toBe(false);
      expect(r.error?.code).toBe('SANDBOX_UNAVAILABLE');
      expect(r.error?.hint).toContain('one_trust_domain=true');
      t.valves = { ...t.valves, one_trust_domain: true };
      expect((await exec()).success).toBe(true);
    } finally {
      fs.rmSync(base, { recursive: true, force: true });
    }
  });
});
