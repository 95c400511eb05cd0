/**
 * Function profiles: the `functions` valve (and `functions_admin` for admins) decides
 * which shed_* functions a deployment exposes, among those whose switch is on (FunctionDef.enabledBy:
 * allow_python, allow_shell). This one function decides; the Tools methods, the specs handed to
 * hosts (specsFor, the OpenAPI document, the MCP tool list) and shed_help's list all ask it.
 */
import type { Category, FunctionDef, SwitchValve } from './define.js';

/**
 * Everyday work in at most 15 functions: run commands, write and edit, read and list, tidy up,
 * bring uploads in, archives, SQLite, share a link, help. Names not registered (yet) are skipped.
 */
export const CORE_FUNCTIONS: readonly string[] = [
  'shed_exec',
  'shed_create_file',
  'shed_patch_text',
  'shed_read',
  'shed_tree',
  'shed_delete',
  'shed_rename',
  'shed_import',
  'shed_move_uploads_to_storage',
  'shed_sqlite',
  'shed_zip',
  'shed_unzip',
  'shed_link_create',
  'shed_help',
];

/** Always enabled: the errors of disabled functions send the model there. */
const ALWAYS = 'shed_help';

const CATEGORIES: ReadonlySet<string> = new Set<Category>(['exec', 'code', 'write', 'read', 'files', 'edit', 'bridges', 'archives', 'data', 'links', 'groups', 'info']);

export interface Profile {
  functions: FunctionDef[];
  /** Names in the valve that are neither a function nor a category nor all/core. */
  unknown: string[];
}

export interface ProfileValves {
  functions?: unknown;
  functions_admin?: unknown;
  /** The switches of FunctionDef.enabledBy (raw: hosts may send "true"). */
  allow_python?: unknown;
  allow_shell?: unknown;
}

/** Whether a switch valve is on, read before validation (true, or the text "true" a form sends). */
export function switchedOn(valves: ProfileValves, valve: SwitchValve): boolean {
  const value = (valves as Record<string, unknown>)[valve];
  return value === true || (typeof value === 'string' && value.trim().toLowerCase() === 'true');
}

/**
 * The functions enabled for a caller of this role, in registry order. A token is `all`, `core`, a
 * category (exec, code, write, read, files, edit, bridges, archives, data, links, groups, info) or a
 * function name with or without `shed_`; a token naming a category means the category (so `exec`
 * is the exec category, which holds shed_exec). A valve that is not a string counts as `all` here
 * (the call then fails on the invalid valve with INVALID_VALVES). A function whose switch is off
 * (FunctionDef.enabledBy) is never enabled, whatever the tokens say.
 */
export function enabledFunctions(all: readonly FunctionDef[], valves: ProfileValves, role: string | undefined): Profile {
  const forAdmin = role === 'admin' && typeof valves.functions_admin === 'string' && valves.functions_admin.trim() !== '';
  const raw = forAdmin ? valves.functions_admin : valves.functions;
  const text = typeof raw === 'string' && raw.trim() !== '' ? raw : 'all';
  const wanted = new Set<string>([ALWAYS]);
  const unknown: string[] = [];
  const names = new Set<string>(all.map((f) => f.name));
  for (const token of text.split(/[\s,]+/).map((t) => t.trim().toLowerCase()).filter(Boolean)) {
    if (token === 'all') {
      for (const f of all) wanted.add(f.name);
    } else if (token === 'core') {
      for (const n of CORE_FUNCTIONS) wanted.add(n);
    } else if (CATEGORIES.has(token)) {
      for (const f of all) if (f.category === token) wanted.add(f.name);
    } else {
      const name = token.startsWith('shed_') ? token : `shed_${token}`;
      if (names.has(name)) wanted.add(name);
      else unknown.push(token);
    }
  }
  return { functions: all.filter((f) => wanted.has(f.name as string) && (f.enabledBy === undefined || switchedOn(valves, f.enabledBy))), unknown };
}

const warned = new Set<string>();

/** One warning per distinct unknown name per process, on stderr: a typo must not break every call. */
export function warnUnknown(unknown: readonly string[]): void {
  for (const name of unknown) {
    if (warned.has(name)) continue;
    warned.add(name);
    process.stderr.write(`fileshed: the functions valve names '${name}', which is neither a function nor a category; ignored.\n`);
  }
}
