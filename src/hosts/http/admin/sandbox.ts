/**
 * Sandbox status and allowed commands, from shed_allowed_commands called through the dispatcher
 * (the same data the model sees): active mode and why, commands per zone, missing tools with
 * their Debian package, network rules; and code execution (shed_run_python, shed_run_shell) as
 * shed_parameters reports it: which valve turns each on, whether it is on, whether it can run here.
 */
import { hostApi } from '../../../index.js';
import type { ServerContext } from '../route.js';
import { esc } from './page.js';
import { unconfinedNotice } from './valves.js';

interface Availability {
  available: string[];
  missing: Record<string, string>;
}

export async function sandboxPage(ctx: ServerContext, adminUser: string): Promise<string> {
  const json = await ctx.api.call('shed_allowed_commands', { __user__: { id: adminUser, name: adminUser, email: '', role: 'admin' } }, ctx.valves());
  const env = JSON.parse(json) as { success: boolean; data?: Record<string, unknown>; error?: { message: string } };
  if (!env.success || !env.data) return `<p class="notice error">${esc(env.error?.message ?? 'shed_allowed_commands failed')}</p>`;
  const d = env.data as { sandbox: { configured: string; active: string; reason: string; landlock_abi: number | null; unconfined: boolean }; network: { mode: string }; forbidden: string[] } & Record<string, Availability>;
  const zone = (name: string, a: Availability) => {
    const missing = Object.entries(a.missing);
    return `<h2>${esc(name)}</h2><p>${a.available.length} available: ${a.available.map((c) => `<code>${esc(c)}</code>`).join(' ')}</p>${
      missing.length
        ? `<details><summary>${missing.length} allowed but not installed</summary><div class="table"><table><thead><tr><th>Command</th><th>Debian package</th></tr></thead><tbody>${missing.map(([c, p]) => `<tr><td><code>${esc(c)}</code></td><td><code>${esc(p)}</code></td></tr>`).join('')}</tbody></table></div><p class="muted">Install with <code>apt-get install ${esc([...new Set(missing.map(([, p]) => p))].join(' '))}</code></p></details>`
        : ''
    }`;
  };
  const code = await codeCard(ctx, adminUser, d.sandbox.active, d.sandbox.landlock_abi);
  const storage = ctx.health.healthz().storage;
  const separation = hostApi.separation(ctx.valves(), d.sandbox.active);
  const ready = ctx.health.readyz();
  const warning = d.sandbox.configured === 'validated' ? `<p class="notice ${d.sandbox.unconfined ? 'warn' : 'error'}">${esc(unconfinedNotice(d.sandbox.unconfined))}</p>` : '';
  return `${warning}<div class="grid"><div class="card"><strong>Active mode</strong><p>${esc(d.sandbox.active)}${d.sandbox.unconfined ? ' <strong>(UNCONFINED)</strong>' : ''}${d.sandbox.landlock_abi !== null ? ` (Landlock ABI ${esc(String(d.sandbox.landlock_abi))})` : ''} <small>(valve sandbox = ${esc(d.sandbox.configured)})</small></p><p class="muted">${esc(d.sandbox.reason)}</p></div>
<div class="card"><strong>Separation</strong><p>${esc(separation.separation)} <small>(valve identity_separation = ${esc(separation.identity_separation)})</small></p><p class="muted">${esc(separation.reason)}</p></div>
<div class="card"><strong>Network</strong><p>${esc(d.network.mode)}</p></div>
${code}
<div class="card"><strong>Storage</strong><p>${esc(storage.type)} <small>(${esc(storage.kind)}${storage.shared ? ', shared' : ''})</small></p><p class="muted">Coordination: ${esc(ctx.settings.coordination !== undefined ? 'Redis' : 'lock files (one host)')}. ${ready.ready ? 'Ready' : `Not ready: ${esc(ready.reason ?? '')}`}.${storage.shared && ctx.settings.coordination === undefined ? ' Several hosts on this filesystem need --coordination and coherent mount settings (README).' : ''}</p></div></div>
${zone('Uploads (read-only)', d.uploads!)}${zone('Storage', d.storage!)}${zone('Documents', d.documents!)}
<h2>Never allowed</h2><p>${d.forbidden.map((c) => `<code>${esc(c)}</code>`).join(' ')}</p>`;
}

interface CodeExecution {
  python: { enabled: boolean; command?: string; version?: string; packages?: Record<string, string>; missing?: string[]; error?: string };
  shell: { enabled: boolean };
  network: string;
  unavailable?: string;
}

/** The code execution card: each valve, its state, and what running scripts needs here. */
async function codeCard(ctx: ServerContext, adminUser: string, active: string, abi: number | null): Promise<string> {
  const json = await ctx.api.call('shed_parameters', { __user__: { id: adminUser, name: adminUser, email: '', role: 'admin' } }, ctx.valves());
  const env = JSON.parse(json) as { success: boolean; data?: { code_execution?: CodeExecution }; error?: { message: string } };
  const c = env.data?.code_execution;
  if (!env.success || c === undefined) return `<div class="card"><strong>Code execution</strong><p class="muted">${esc(env.error?.message ?? 'shed_parameters did not report it')}</p></div>`;
  const state = (on: boolean) => (on ? '<strong>on</strong>' : 'off');
  const py = c.python;
  const pyDetail = !py.enabled
    ? ''
    : py.version !== undefined
      ? ` · ${esc(py.command ?? 'python3')} ${esc(py.version)}${py.packages && Object.keys(py.packages).length ? `, with ${Object.keys(py.packages).map(esc).join(', ')}` : ', standard library only'}`
      : ` · <span class="error">${esc(py.error ?? 'Python could not be asked')}</span>`;
  // Landlock below ABI 6 cannot keep signals and abstract sockets among a script's processes (docs/code-execution.md).
  const why =
    c.unavailable ??
    (active === 'landlock' && (abi ?? 0) < 6
      ? `in landlock mode scripts need Landlock ABI 6 or later (Linux 6.12+); this kernel has ABI ${abi ?? 'none'}: use bubblewrap or a newer kernel`
      : active !== 'bwrap' && active !== 'landlock'
        ? `scripts run only in the bwrap or landlock sandbox; the active mode is ${active}`
        : undefined);
  const runs = (py.enabled || c.shell.enabled) && why !== undefined ? `<p class="notice error">Turned on but refused here: ${esc(why)}.</p>` : '';
  return `<div class="card" id="code-execution"><strong>Code execution</strong>
<p>Python (<code>shed_run_python</code>, valve <code>allow_python</code>): ${state(py.enabled)}${pyDetail}</p>
<p>Shell scripts (<code>shed_run_shell</code>, valve <code>allow_shell</code>): ${state(c.shell.enabled)}</p>${runs}
<p class="muted">Network for code: ${esc(c.network)}. Off by default: turn on in <a href="/admin#s-commands">Settings</a>. Scripts need bubblewrap, or Landlock ABI 6+ (Linux 6.12+): the default Docker deployment runs Landlock, so code runs there on a 6.12+ host only.</p></div>`;
}
