/**
 * The valves form, generated at run time from the plugin's JSON Schema (`valvesSchema`, the same
 * document as valves.schema.json): one field per property, whatever the plugin version defines.
 * Sections come from key prefixes (SECTIONS below: a small ordered map, not a list of valves); a
 * valve whose prefix is not in the map lands in "Other". A table of contents links to each
 * section (plain anchors: the page runs no script), and each section links back to it.
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

interface Section {
  id: string;
  title: string;
  prefixes: readonly string[];
}

/** Sections in page order, each with the key prefixes of its valves. */
const SECTIONS: readonly Section[] = [
  { id: 'storage', title: 'Storage & quotas', prefixes: ['storage_', 'quota_', 'max_file', 'lock_', 'group_'] },
  { id: 'commands', title: 'Commands, code & sandbox', prefixes: ['sandbox', 'identity_', 'one_trust_domain', 'exec_', 'network_', 'max_output', 'allow_python', 'allow_shell', 'python_'] },
  { id: 'sqlite', title: 'SQLite', prefixes: ['sqlite_'] },
  { id: 'archives', title: 'Archives', prefixes: ['zip_'] },
  { id: 'links', title: 'Links', prefixes: ['public_url', 'link_'] },
  { id: 'functions', title: 'Functions & files', prefixes: ['functions', 'blocked_', 'allowed_', 'read_'] },
  { id: 'undo', title: 'Undo by turn', prefixes: ['undo_'] },
  { id: 'audit', title: 'Audit & maintenance', prefixes: ['audit_', 'uploads_', 'maintenance_'] },
  { id: 'openwebui', title: 'Open WebUI', prefixes: ['openwebui_', 'import_'] },
];
const OTHER: Section = { id: 'other', title: 'Other', prefixes: [] };

export function sectionOf(key: string): Section {
  return SECTIONS.find((s) => s.prefixes.some((prefix) => key.startsWith(prefix))) ?? OTHER;
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
  /** Where a value shown but not stored comes from (public_url: derived from the server's address). */
  note?: string;
}

export function valvesForm(properties: Record<string, ValveProperty>, state: (key: string) => FieldState, hidden: string, disabled: boolean): string {
  const fields = new Map<Section, string[]>();
  for (const [key, prop] of Object.entries(properties)) {
    const section = sectionOf(key);
    fields.set(section, [...(fields.get(section) ?? []), field(key, prop, state(key))]);
  }
  const order = [...SECTIONS, OTHER].filter((s) => fields.has(s));
  const toc = `<nav class="toc" id="sections" aria-label="Settings sections"><h2>Sections</h2><ol>${order
    .map((s) => `<li><a href="#s-${s.id}">${esc(s.title)} <small>${fields.get(s)!.length}</small></a></li>`)
    .join('')}</ol></nav>`;
  const sections = order
    .map((s) => `<fieldset id="s-${s.id}"><legend>${esc(s.title)}</legend><a class="top" href="#sections">Sections ↑</a>${fields.get(s)!.join('')}</fieldset>`)
    .join('');
  const submit = disabled ? '<p class="notice error">Saving is disabled until the config file is valid JSON again.</p>' : '<button type="submit" class="primary" name="_save" value="1">Save settings</button><span class="muted">Saved to the config file; in effect for the next call.</span>';
  return `<div class="settings">${toc}<form method="post" action="/admin/valves" novalidate>${hidden}${sections}<div class="actions">${submit}</div></form></div>`;
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
  // A fixed field shows the value in force and why it is fixed; a default would not apply to it.
  const dflt = s.fixed ? '' : isSecret(p) ? 'Default: not set' : `Default: <code>${esc(shown(s.defaultValue))}</code>`;
  const reset = s.stored && !s.fixed ? ` <button type="submit" class="link" name="_reset" value="${esc(key)}" title="Remove ${esc(key)} from the config file">Reset to default</button>` : '';
  const notes = [s.flag ? '<small>Set by <code>--valve</code> on the command line: the flag wins over this form.</small>' : '', s.fixed ? `<small>${esc(s.fixed)}</small>` : '', s.note ? `<small>${esc(s.note)}</small>` : ''].join('');
  const error = s.error ? `<p class="error" id="${errId}">${esc(s.error)}</p>` : '';
  return `<div class="field${s.error ? ' invalid' : ''}" data-valve="${esc(key)}"><label for="${id}">${esc(p.title ?? key)} <small><code>${esc(key)}</code></small></label>
<div class="control">${control}${error}${dflt || reset ? `<div class="row"><small>${dflt}</small>${reset}</div>` : ''}${notes}</div>
<p class="desc">${esc(p.description ?? '')}</p></div>`;
}
