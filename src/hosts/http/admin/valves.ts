/**
 * GET /admin (the settings form) and POST /admin/valves (save). Validation is the plugin's own
 * valve parser (hostApi.checkValves: the zod schema), field by field so each error lands at its
 * field; nothing is written unless every field passes. The file is replaced atomically
 * (writeConfigFile: temp + fsync + rename, mode 0600) and holds only values that differ from the
 * defaults. A version (hash of the file as it was when the form was rendered) detects a
 * concurrent edit: the save is refused and the form says which valves differ.
 */
import crypto from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { serving, valvesSchema } from '../../../index.js';
import { readConfigFile, writeConfigFile, type ConfigFile } from '../config-file.js';
import type { ServerContext } from '../route.js';
import type { Admin } from './guard.js';
import { accountOf, csrfField, esc, layout, sendHtml, type PageOptions } from './page.js';
import { isSecret, valvesForm, type FieldState, type ValveProperty } from './valves-form.js';

export const PROPERTIES = (valvesSchema as { properties: Record<string, ValveProperty> }).properties;

interface Loaded {
  config: ConfigFile | undefined;
  version: string;
  error?: string;
}

/** The config file now, with its version; a file that does not parse is reported, never thrown. */
export function loadConfig(file: string): Loaded {
  let text = '';
  try {
    text = serving.readText(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return { config: undefined, version: 'unreadable', error: `The config file cannot be read: ${(err as Error).message}` };
  }
  const version = text === '' ? 'absent' : crypto.createHash('sha256').update(text).digest('hex').slice(0, 32);
  try {
    return { config: readConfigFile(file), version };
  } catch (err) {
    return { config: undefined, version, error: `${(err as Error).message}. The server keeps running with the last valid settings; fix the file by hand (or restore it) to save here again.` };
  }
}

/** Defaults as this server applies them: the plugin's, then the server's own (audit log on, Open WebUI URL). */
function defaults(ctx: ServerContext): Record<string, unknown> {
  return { ...ctx.api.defaultValves(), ...ctx.valveDefaults };
}

function stateOf(ctx: ServerContext, stored: Record<string, unknown>, submitted: Record<string, string> | undefined, errors: Record<string, string>) {
  const effective = ctx.valves();
  const dflt = defaults(ctx);
  return (key: string): FieldState => ({
    value: submitted && key in submitted && !isSecret(PROPERTIES[key]!) ? submitted[key] : effective[key] ?? dflt[key],
    defaultValue: dflt[key],
    stored: Object.hasOwn(stored, key),
    ...(errors[key] ? { error: errors[key] } : {}),
    ...(Object.hasOwn(ctx.settings.flagValves, key) ? { flag: true } : {}),
    ...(key === 'storage_base_path' ? { fixed: "In force: the server's storage folder (--base or FILESHED_BASE), mode 0700." } : {}),
    ...(key === 'public_url' ? publicUrlState(ctx, stored) : {}),
  });
}

/** public_url as the server decides it: --public-url wins over the valve; unset, links use the address it listens on. */
function publicUrlState(ctx: ServerContext, stored: Record<string, unknown>): Partial<FieldState> {
  if (ctx.settings.publicUrl) return { fixed: `In force: --public-url (FILESHED_PUBLIC_URL or server.public_url in the config file), which wins over this valve.` };
  if (Object.hasOwn(stored, 'public_url') || Object.hasOwn(ctx.settings.flagValves, 'public_url')) return {};
  return { note: `Not set: links use ${ctx.publicUrl()}, the address this server listens on. Saving the form leaves it unset unless you change it here.` };
}

/**
 * A value the page showed without the config file holding it (derived by the server, like
 * public_url, or set by a --valve flag) and sent back unchanged: the admin did not type it, so it is
 * not written to the file, where it would pin today's derived value for good.
 */
function shownNotTyped(ctx: ServerContext, stored: Record<string, unknown>, key: string, raw: string): boolean {
  if (Object.hasOwn(stored, key)) return false;
  const shown = ctx.valves()[key];
  return shown !== undefined && String(shown) === raw && JSON.stringify(shown) !== JSON.stringify(defaults(ctx)[key]);
}

/** Said on the settings and sandbox pages while the valve sandbox is "validated". */
export function unconfinedNotice(allowed: boolean): string {
  return allowed
    ? 'UNCONFINED: the valve sandbox is "validated" (allowed by --allow-unconfined): commands run with argument checks alone, without kernel confinement.'
    : 'The valve sandbox is "validated" (set outside this form), but this server was not started with --allow-unconfined: commands are refused until it is set back to "auto" (or the server restarted with the flag).';
}

export function renderValves(ctx: ServerContext, admin: Admin, opts: { submitted?: Record<string, string>; errors?: Record<string, string>; notice?: PageOptions['notice'] } = {}): string {
  const loaded = loadConfig(ctx.settings.configFile);
  const notice = [...(opts.notice ?? [])];
  if (loaded.error) notice.unshift({ kind: 'error', text: loaded.error });
  if (ctx.valves().sandbox === 'validated') notice.unshift({ kind: ctx.settings.allowUnconfined ? 'warn' : 'error', text: unconfinedNotice(ctx.settings.allowUnconfined) });
  const stored = loaded.config?.valves ?? {};
  const hidden = `${csrfField(admin.csrf)}<input type="hidden" name="_version" value="${esc(loaded.version)}">`;
  const form = valvesForm(PROPERTIES, stateOf(ctx, stored, opts.submitted, opts.errors ?? {}), hidden, loaded.error !== undefined);
  const intro = `<p class="muted">Every valve of the plugin (<code>valves.schema.json</code>), saved to <code>${esc(ctx.settings.configFile)}</code> and in effect for the next call.</p>`;
  return layout(intro + form, { title: 'Settings', section: '/admin', ...accountOf(admin, ctx.settings.auth), notice });
}

const FIELD_PREFIX = /^The valve '[^']*' is invalid: /;

/** "validated" on a server of several users needs the admin's --allow-unconfined (commands would refuse otherwise). */
const UNCONFINED_REFUSED = '"validated" runs every user\'s commands with argument checks alone, without kernel confinement: meant for one local user. This server was not started with --allow-unconfined (FILESHED_ALLOW_UNCONFINED=1); restart it with that flag to allow it, or keep "auto".';

/** Saves the form; answers the page itself on errors (status 400 or 409), or redirects after a save. */
export function saveValves(req: IncomingMessage, res: ServerResponse, form: URLSearchParams, ctx: ServerContext, admin: Admin, audit: (action: string, code: string, paths?: string[]) => void): void {
  const loaded = loadConfig(ctx.settings.configFile);
  const submitted: Record<string, string> = {};
  for (const key of Object.keys(PROPERTIES)) {
    const all = form.getAll(key);
    if (all.length > 0) submitted[key] = all[all.length - 1]!;
  }
  const page = (status: number, opts: Parameters<typeof renderValves>[2]) => sendHtml(res, status, renderValves(ctx, admin, opts));
  if (loaded.error || loaded.config === undefined) {
    audit('admin:valves', 'CONFIG_INVALID');
    page(409, { submitted, notice: [{ kind: 'error', text: 'Nothing was saved.' }] });
    return;
  }
  const stored = { ...(loaded.config.valves ?? {}) };
  if (form.get('_version') !== loaded.version) {
    const differs = Object.keys(PROPERTIES).filter((k) => k in submitted && !isSecret(PROPERTIES[k]!) && String(stored[k] ?? defaults(ctx)[k]) !== submitted[k]);
    audit('admin:valves', 'VERSION_CONFLICT');
    page(409, {
      submitted,
      notice: [{ kind: 'warn', text: `Nothing was saved: the config file changed since this form was opened (another admin or a hand edit). Your values are kept below${differs.length ? `; they differ from the saved ones for: ${differs.join(', ')}` : ''}. Check them and save again to overwrite.` }],
    });
    return;
  }
  const reset = form.get('_reset') ?? undefined;
  const candidate: Record<string, unknown> = { ...stored };
  const errors: Record<string, string> = {};
  for (const [key, prop] of Object.entries(PROPERTIES)) {
    if (key === 'storage_base_path') continue; // the server's --base decides it
    if (key === 'public_url' && ctx.settings.publicUrl) continue; // --public-url decides it (the field is read-only)
    if (key === reset) {
      delete candidate[key];
      continue;
    }
    const raw = submitted[key];
    if (raw === undefined || (isSecret(prop) && raw === '')) continue;
    if (shownNotTyped(ctx, stored, key, raw)) continue;
    const one = ctx.api.checkValves({ [key]: raw });
    if (!one.ok) errors[key] = one.message.replace(FIELD_PREFIX, '');
    else if (key === 'sandbox' && raw === 'validated' && !ctx.settings.allowUnconfined) errors[key] = UNCONFINED_REFUSED;
    else candidate[key] = raw;
  }
  if (Object.keys(errors).length > 0) {
    audit('admin:valves', 'INVALID_VALVES', Object.keys(errors));
    page(400, { submitted, errors, notice: [{ kind: 'error', text: `Nothing was saved: ${Object.keys(errors).length} field(s) need a correction (marked below).` }] });
    return;
  }
  const whole = ctx.api.checkValves({ ...candidate, storage_base_path: ctx.storageBase });
  if (!whole.ok) {
    page(400, { submitted, notice: [{ kind: 'error', text: `Nothing was saved: ${whole.message}` }] });
    return;
  }
  // Typed values (numbers, booleans) only where they differ from the default in effect.
  const dflt = defaults(ctx);
  const next: Record<string, unknown> = {};
  for (const key of Object.keys(candidate)) {
    const typed = (whole.valves as Record<string, unknown>)[key];
    if (!(key in PROPERTIES)) next[key] = candidate[key]; // a valve of another plugin version: kept as is
    else if (key !== 'storage_base_path' && JSON.stringify(typed) !== JSON.stringify(dflt[key])) next[key] = typed;
  }
  const changed = [...new Set([...Object.keys(next), ...Object.keys(stored)])].filter((k) => JSON.stringify(next[k]) !== JSON.stringify(stored[k]));
  writeConfigFile(ctx.settings.configFile, { ...loaded.config, valves: next });
  audit('admin:valves', 'OK', changed);
  res.writeHead(303, { Location: `/admin?saved=${encodeURIComponent(changed.join(',') || '-')}`, 'Content-Length': 0, 'Cache-Control': 'no-store' });
  res.end();
  void req;
}
