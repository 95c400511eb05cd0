import { sandboxReport } from '../core/services/exec/launcher/sandbox.js';
import { separationReport } from '../core/services/ids/separation.js';
import { pythonReport, type PythonReport } from '../core/services/exec/code/python-probe.js';
import type { Valves } from '../core/base/valves.js';
import { engineReport } from '../core/services/db/run.js';
import { defineFunction } from '../registry/define.js';
import { storageKind } from '../core/base/fs/kind.js';
import { coordinationInUse } from '../core/base/locks/lease.js';
import { formatSize } from '../core/base/text/size.js';

const MIB = 1024 * 1024;

export const shedParameters = defineFunction({
  name: 'shed_parameters',
  category: 'info',
  summary: 'Limits and settings in effect (quota, sizes, timeouts, network).',
  description: 'The admin limits: quotas, file size, timeouts, output, network and SQLite modes.',
  params: {},
  example: {},
  needsUser: false,
  async handler(_args, ctx) {
    const v = ctx.valves;
    const kind = storageKind(v.storage_base_path);
    const sandbox = await sandboxReport(v.sandbox, ctx.host.allowsUnconfined !== false);
    const data: Record<string, unknown> = {
      quota_per_user_mb: v.quota_per_user_mb,
      quota_per_group_mb: v.quota_per_group_mb,
      max_file_size_mb: v.max_file_size_mb,
      lock_max_age_hours: v.lock_max_age_hours,
      exec_timeout_default: v.exec_timeout_default,
      exec_timeout_max: v.exec_timeout_max,
      max_output_default: v.max_output_default,
      max_output_absolute: v.max_output_absolute,
      exec_memory_limit_mb: v.exec_memory_limit_mb,
      exec_cpu_limit_seconds: v.exec_cpu_limit_seconds,
      group_default_mode: v.group_default_mode,
      network_mode: v.network_mode,
      sqlite_readonly: v.sqlite_readonly,
      sqlite_journal_mode: v.sqlite_journal_mode,
      sqlite_engine: engineReport(),
      openwebui_api_url: v.openwebui_api_url,
      sandbox,
      separation: separationReport(v, sandbox.active),
      code_execution: await codeExecution(v, sandbox.active === 'validated'),
      host: ctx.host.name,
      // Several instances need a shared filesystem with coherent client caches (README "Several instances").
      storage: { kind: kind.kind, type: kind.type, shared: kind.shared, coordination: coordinationInUse() !== undefined ? 'redis' : 'lock files' },
    };
    // Disk paths are for admins only (SPEC section 4).
    if (ctx.user.role === 'admin') {
      data.storage_base_path = v.storage_base_path;
      data.storage = { ...(data.storage as object), mount: kind.mount, mount_options: kind.options, coordination: coordinationInUse() ?? 'lock files (one host)' };
    }
    data._info = { network_enabled: v.network_mode !== 'disabled', groups_available: true };
    const network = v.network_mode === 'disabled' ? 'no network' : `network ${v.network_mode}`;
    const unconfined = (data.sandbox as { unconfined: boolean }).unconfined ? ' Commands run UNCONFINED (sandbox "validated": argument checks only, no kernel confinement).' : '';
    const code = data.code_execution as CodeExecution;
    const python = code.python.version !== undefined ? ` Python ${code.python.version} (shed_run_python) with ${Object.keys(code.python.packages ?? {}).join(', ') || 'the standard library only'}.` : '';
    return {
      data,
      message: `Quota ${formatSize(v.quota_per_user_mb * MIB)} per user, files up to ${formatSize(v.max_file_size_mb * MIB)}, commands ${v.exec_timeout_default}s by default (max ${v.exec_timeout_max}s), output ${v.max_output_default} characters by default, ${network}.${unconfined}${python}`,
    };
  },
});

/** Code execution as the model sees it: which of shed_run_python and shed_run_shell are on, and Python's version and packages. */
interface CodeExecution {
  python: { enabled: boolean } & Partial<PythonReport>;
  shell: { enabled: boolean };
  network: string;
  /** Set when they are on but cannot run: a script runs only under a kernel sandbox. */
  unavailable?: string;
}

/**
 * While Python is on, its version and which common packages import are asked once per process, by a
 * confined run off the event loop (python-probe.ts); while it is off nobody pays for the probe.
 */
async function codeExecution(v: Valves, unconfined: boolean): Promise<CodeExecution> {
  const network = v.network_mode === 'all' ? 'on' : 'off (only network_mode="all" lets code connect)';
  const python = v.allow_python ? { enabled: true, ...(await pythonReport(v)) } : { enabled: false, command: v.python_command };
  const unavailable = (v.allow_python || v.allow_shell) && unconfined ? 'refused with SANDBOX_UNAVAILABLE: scripts run only in the bwrap or landlock sandbox' : undefined;
  return { python, shell: { enabled: v.allow_shell }, network, ...(unavailable ? { unavailable } : {}) };
}
