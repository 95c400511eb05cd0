import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nodeSqlite } from '../../src/core/services/db/node/sqlite.js';
import { makeShed, type Result, type Shed } from '../helpers/shed.js';

let s: Shed;
beforeEach(() => {
  s = makeShed();
});
afterEach(() => s.cleanup());

async function direct(args: Record<string, unknown>, shed = s): Promise<{ json: string; r: Result }> {
  const json = await shed.tools.shed_parameters!(args);
  return { json, r: JSON.parse(json) as Result };
}

describe('shed_parameters', () => {
  it('returns the effective settings with their defaults and hides the disk path from users', async () => {
    const r = await s.call('shed_parameters');
    expect(r.success).toBe(true);
    expect(r.data).toEqual({
      quota_per_user_mb: 1000,
      quota_per_group_mb: 2000,
      max_file_size_mb: 300,
      lock_max_age_hours: 24,
      exec_timeout_default: 30,
      exec_timeout_max: 300,
      max_output_default: 50000,
      max_output_absolute: 5000000,
      exec_memory_limit_mb: 512,
      exec_cpu_limit_seconds: 60,
      group_default_mode: 'group',
      network_mode: 'disabled',
      sqlite_readonly: false,
      sqlite_journal_mode: 'wal',
      // node:sqlite on the database file where the runtime has it (Node 24, 26), else sql.js (Node 20)
      sqlite_engine: nodeSqlite() ? { engine: 'node:sqlite', mode: expect.stringContaining('file-backed') } : { engine: 'sql.js', mode: expect.stringContaining('in memory') },
      openwebui_api_url: 'http://localhost:8080',
      // bubblewrap is installed on the test machines (CI installs it), so auto finds it; Landlock applies inside it.
      sandbox: { configured: 'auto', active: 'bwrap', reason: 'bubblewrap works on this server', landlock_abi: expect.any(Number), unconfined: false },
      // Off by default: which of the two is on, the Python it would run, and the network rule for code.
      code_execution: { python: { enabled: false, command: 'python3' }, shell: { enabled: false }, network: 'off (only network_mode="all" lets code connect)' },
      // The harness turns identity separation off (test/helpers/shed.ts): bubblewrap's namespaces remain.
      separation: expect.objectContaining({ identity_separation: 'off', separation: 'namespaces' }),
      host: 'standalone',
      // A local test folder, no coordination service: one host.
      storage: { kind: 'local', type: expect.any(String), shared: false, coordination: 'lock files' },
      _info: { network_enabled: false, groups_available: true },
    });
    expect(r.message).toContain('1000.0 MiB');
    expect(r.message).toContain('no network');
  });

  it('never shows storage_base_path to a non-admin, in any field', async () => {
    const { json, r } = await direct({ __user__: { id: 'u1', role: 'user' } });
    expect(r.success).toBe(true);
    expect(r.data).not.toHaveProperty('storage_base_path');
    expect(json).not.toContain(s.base);
  });

  it('shows storage_base_path to an admin', async () => {
    const { r } = await direct({ __user__: { id: 'root', name: 'Root', role: 'admin' } });
    expect(r.success).toBe(true);
    expect(r.data!.storage_base_path).toBe(s.base);
  });

  it('works without any user, and creates nothing on disk', async () => {
    const { json, r } = await direct({});
    expect(r.success).toBe(true);
    expect(r.data!.quota_per_user_mb).toBe(1000);
    expect(json).not.toContain(s.base);
    expect(fs.readdirSync(s.base)).toEqual([]);
  });

  it('reflects the valves an admin set', async () => {
    const custom = makeShed({ quota_per_user_mb: '5', network_mode: 'safe', sandbox: 'validated', sqlite_readonly: true });
    try {
      const r = await custom.call('shed_parameters');
      expect(r.data).toMatchObject({
        quota_per_user_mb: 5,
        network_mode: 'safe',
        sqlite_readonly: true,
        sandbox: { configured: 'validated' },
        _info: { network_enabled: true, groups_available: true },
      });
      expect(r.message).toContain('network safe');
    } finally {
      custom.cleanup();
    }
  });

  it('reports an invalid valve instead of returning half the settings', async () => {
    const bad = makeShed({ network_mode: 'everything' });
    try {
      const r = await bad.call('shed_parameters');
      expect(r.error!.code).toBe('INVALID_VALVES');
      expect(r.error!.message).toContain('network_mode');
    } finally {
      bad.cleanup();
    }
  });

  it('refuses unknown parameters, naming them', async () => {
    const r = await s.call('shed_parameters', { verbose: true });
    expect(r.error!.code).toBe('INVALID_PARAMETER');
    expect(r.error!.message).toContain("'verbose'");
  });
});
