/**
 * The valves form, generated at run time from the plugin's JSON Schema (`valvesSchema`, the same
 * document as valves.schema.json): one field per property, whatever the plugin version defines.
 * Sections come from key prefixes (SECTIONS below: a small ordered map, not a list of valves); a
 * valve whose prefix is not in the map lands in "Other".
 */
import { esc } from './page.js';

export interface ValveProperty {
  title?: string;
  description?: string;
  type?: string;
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  format?: string;
}

/** Key prefix → section title, in page order. */
const SECTIONS: readonly [string, string][] = [
  ['storage_', 'Storage and quotas'],
  ['quota_', 'Storage and quotas'],
  ['max_file', 'Storage and quotas'],
  ['lock_', 'Storage and quotas'],
  ['sandbox', 'Commands'],
  ['exec_', 'Commands'],
  ['network_', 'Commands'],
  ['max_output', 'Output'],
  ['group_', 'Groups'],
  ['sqlite_', 'SQLite'],
  ['zip_', 'Archives'],
  ['import_', 'Import'],
  ['openwebui_', 'Open WebUI and links'],
  ['public_url', 'Open WebUI and links'],
  ['link_', 'Open WebUI and links'],
  ['audit_', 'Audit log'],
  ['uploads_', 'Maintenance'],
  ['maintenance_', 'Maintenance'],
];

export function sectionOf(key: string): string {
  return SECTIONS.find(([prefix]) => key.startsWith(prefix))?.[1] ?? 'Other';
}

export function isSecret(p: ValveProperty): boolean {
  return p.format === 'password';
}

export interface FieldState {
  /** What the input shows: the submitted text after an error, else the value in effect. */
  value: unknown;
  /** The default in effect for this server (plugin default, or the server's own for a few valves). */
  defaultValue: unknown;
  /** The config file sets this valve (so "reset to default" means something). */
  stored: boolean;
  error?: string;
  /** Set by --valve on the command line: the flag wins over the form. */
  flag?: boolean;
  /** Shown but not editable here, with the reason. */
  fixed?: string;
}

export function valvesForm(properties: Record<string, ValveProperty>, state: (key: string) => FieldState, hidden: string, disabled: boolean): string {
  const groups = new Map<string, string[]>();
  for (const [key, prop] of Object.entries(properties)) {
    const section = sectionOf(key);
    const html = field(key, prop, state(key));
    groups.set(section, [...(groups.get(section) ?? []), html]);
  }
  const order = [...new Set([...SECTIONS.map(([, s]) => s), 'Other'])].filter((s) => groups.has(s));
  const sections = order.map((s) => `<fieldset><legend>${esc(s)}</legend>${groups.get(s)!.join('')}</fieldset>`).join('');
  const submit = disabled ? '<p class="notice error">Saving is disabled until the config file is valid JSON again.</p>' : '<button type="submit" class="primary" name="_save" value="1">Save settings</button><span class="muted">Saved to the config file; in effect for the next call.</span>';
  return `<form method="post" action="/admin/valves" novalidate>${hidden}${sections}<div class="actions">${submit}</div></form>`;
}

function shown(v: unknown): string {
  if (v === '' || v === undefined) return '(empty)';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function field(key: string, p: ValveProperty, s: FieldState): string {
  const id = `v-${key}`;
  const errId = `err-${key}`;
  const aria = s.error ? ` aria-invalid="true" aria-describedby="${errId}"` : '';
  const ro = s.fixed ? ' readonly' : '';
  let control: string;
  if (p.type === 'boolean') {
    const on = s.value === true || s.value === 'true';
    // The hidden "false" comes first: an unticked box sends nothing, a ticked one sends a later "true".
    control = `<input type="hidden" name="${esc(key)}" value="false"><label class="switch"><input type="checkbox" role="switch" id="${id}" name="${esc(key)}" value="true"${on ? ' checked' : ''}${aria}${s.fixed ? ' disabled' : ''}><span></span></label>`;
  } else if (Array.isArray(p.enum)) {
    const opts = p.enum.map((o) => `<option value="${esc(o)}"${String(o) === String(s.value) ? ' selected' : ''}>${esc(o)}</option>`).join('');
    control = `<select id="${id}" name="${esc(key)}"${aria}${s.fixed ? ' disabled' : ''}>${opts}</select>`;
  } else if (isSecret(p)) {
    // A secret is never written into the page: empty means "keep the stored one".
    const set = s.stored && s.value !== '' && s.value !== undefined;
    control = `<input type="password" id="${id}" name="${esc(key)}" value="" autocomplete="new-password" placeholder="${set ? '•••••••• (set; leave empty to keep)' : '(not set)'}"${aria}${ro}>`;
  } else if (p.type === 'integer' || p.type === 'number') {
    const min = p.minimum !== undefined ? ` min="${p.minimum}"` : '';
    const max = p.maximum !== undefined ? ` max="${p.maximum}"` : '';
    control = `<input type="number" id="${id}" name="${esc(key)}" value="${esc(s.value)}" step="${p.type === 'integer' ? '1' : 'any'}"${min}${max} inputmode="${p.type === 'integer' ? 'numeric' : 'decimal'}"${aria}${ro}>`;
  } else {
    control = `<input type="text" id="${id}" name="${esc(key)}" value="${esc(s.value)}"${aria}${ro}>`;
  }
  const dflt = isSecret(p) ? 'Default: not set' : `Default: <code>${esc(shown(s.defaultValue))}</code>`;
  const reset = s.stored && !s.fixed ? ` <button type="submit" class="link" name="_reset" value="${esc(key)}" title="Remove ${esc(key)} from the config file">Reset to default</button>` : '';
  const notes = [s.flag ? '<small>Set by <code>--valve</code> on the command line: the flag wins over this form.</small>' : '', s.fixed ? `<small>${esc(s.fixed)}</small>` : ''].join('');
  const error = s.error ? `<p class="error" id="${errId}">${esc(s.error)}</p>` : '';
  return `<div class="field${s.error ? ' invalid' : ''}" data-valve="${esc(key)}"><label for="${id}">${esc(p.title ?? key)} <small><code>${esc(key)}</code></small></label>
<div class="control">${control}${error}<div class="row"><small>${dflt}</small>${reset}</div>${notes}</div>
<p class="desc">${esc(p.description ?? '')}</p></div>`;
}
