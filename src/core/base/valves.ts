/**
 * Admin settings (Valves) and per-user settings (UserValves): one zod schema each, validated on every
 * call and exported as JSON Schema (valves.schema.json) for admin UIs. Defaults follow the Python
 * original's table.
 */
import { z } from 'zod';
import { shedError } from './errors.js';

const int = (min: number) => z.number().int().min(min);

export const ValvesSchema = z.object({
  storage_base_path: z.string().min(1).default('/app/backend/data/user_files').meta({
    title: 'Storage base path',
    description: 'Folder holding users/, groups/ and access_auth.sqlite. Created on first use.',
  }),
  quota_per_user_mb: int(0).default(1000).meta({
    title: 'Quota per user (MB)',
    description: 'Uploads (all conversations) + Storage + Documents (including git history), in MiB.',
  }),
  quota_per_group_mb: int(0).default(2000).meta({
    title: 'Quota per group (MB)',
    description: 'Size limit of each group space (including git history), in MiB.',
  }),
  max_file_size_mb: int(1).default(300).meta({
    title: 'Max file size (MB)',
    description: 'Largest file any write may produce, in MiB.',
  }),
  lock_max_age_hours: int(1).default(24).meta({
    title: 'Lock max age (hours)',
    description: 'A lock older than this counts as expired and can be taken over.',
  }),
  exec_timeout_default: int(1).default(30).meta({
    title: 'Command timeout (s)',
    description: 'Timeout of shed_exec when the call gives none.',
  }),
  exec_timeout_max: int(1).default(300).meta({
    title: 'Command timeout ceiling (s)',
    description: 'Largest timeout a call may ask for.',
  }),
  group_default_mode: z.enum(['owner', 'group', 'owner_ro']).default('group').meta({
    title: 'Default group file mode',
    description: 'Write mode of new group files: owner (only the owner writes), group (all members), owner_ro (nobody).',
  }),
  network_mode: z.enum(['disabled', 'safe', 'all']).default('disabled').meta({
    title: 'Network mode',
    description: 'disabled: no network; safe: downloads only (curl/wget GET, git clone/fetch/pull); all: everything (allows exfiltration).',
  }),
  openwebui_api_url: z.string().default('http://localhost:8080').meta({
    title: 'Open WebUI URL',
    description: 'Base URL of Open WebUI (no /api suffix): session checks, groups, attachments and openwebui download links. Under fileshed serve its default is --openwebui-url; a value set here wins.',
  }),
  max_output_default: int(1).default(50000).meta({
    title: 'Output limit (characters)',
    description: 'Characters returned per output stream or read when the call gives no max_output.',
  }),
  max_output_absolute: int(1).default(5000000).meta({
    title: 'Output ceiling (characters)',
    description: 'Largest max_output a call may ask for (max_output=0 means this ceiling).',
  }),
  read_image_max_kb: int(0).max(20480).default(1024).meta({
    title: 'Image size for models (KiB)',
    description: 'shed_read of a PNG, JPEG, GIF or WebP returns the image itself (at most 1568 px on the long side), re-encoded to stay under this size in KiB; 0 turns image reading off.',
  }),
  exec_memory_limit_mb: int(0).default(512).meta({
    title: 'Command memory limit (MB)',
    description: 'Address-space limit of each command; 0 means no limit.',
  }),
  exec_cpu_limit_seconds: int(0).default(60).meta({
    title: 'Command CPU limit (s)',
    description: 'CPU seconds each command may use; 0 means no limit.',
  }),
  sqlite_readonly: z.boolean().default(false).meta({
    title: 'SQLite read-only',
    description: 'Only read statements (SELECT, WITH ... SELECT, EXPLAIN, PRAGMA reads) are allowed.',
  }),
  sqlite_journal_mode: z.enum(['wal', 'delete', 'truncate', 'memory']).default('wal').meta({
    title: 'SQLite journal mode',
    description: 'Journal mode of databases shed_sqlite writes on Node 24+ (wal: reads never wait for a write; Documents, group spaces and a network or FUSE storage keep delete, since WAL needs memory shared by every writer; memory can lose the file on a crash).',
  }),
  sandbox: z.enum(['auto', 'bwrap', 'landlock', 'validated']).default('auto').meta({
    title: 'Command sandbox',
    description: 'auto (bubblewrap when it works, else Landlock, else commands are refused), bwrap or landlock (required), validated (argument policy only: weaker, no kernel confinement).',
  }),
  identity_separation: z.enum(['off', 'auto', 'required']).default('auto').meta({
    title: 'Commands run as the user',
    description:
      'auto: every command and script in a user\'s own zones runs as that user\'s kernel identity (uid and gid from identity_id_first on) whenever the server can switch (root, or CAP_SETUID+CAP_SETGID), and the user\'s zones are made theirs on first use, closed to every other uid; required: the same, and commands are refused where the server cannot switch; off: every command runs as the server\'s uid (one trust domain, held apart by the sandbox alone).',
  }),
  one_trust_domain: z.boolean().default(false).meta({
    title: 'Accept one trust domain',
    description:
      'Where the server can give users neither their own kernel identity (no root, no CAP_SETUID+CAP_SETGID) nor namespaces of their own (no bubblewrap), every command of every user runs as the server\'s uid, kept apart by Landlock and the filter alone: fileshed serve then refuses commands and scripts unless this is true. Set it only when every user trusts the others (one person, one team).',
  }),
  identity_id_first: int(1000).max(4_000_000_000).default(2_000_000).meta({
    title: 'First kernel id',
    description:
      'Every user gets a uid (and a personal gid of the same number) and every group a gid, allocated once from identity_id_first on and recorded in access_auth.sqlite, the same on every instance sharing the storage. Choose numbers no host account uses and that the server\'s user namespace maps (a rootless or user-namespaced container maps only its own range: then pick one inside it).',
  }),
  identity_id_count: int(1).max(100_000_000).default(1_000_000).meta({
    title: 'Kernel ids available',
    description: 'How many ids from identity_id_first on may be allocated (users and groups together).',
  }),
  allow_python: z.boolean().default(false).meta({
    title: 'Allow Python code',
    description:
      'Turns on shed_run_python: Python code (or a .py file of a zone) run in the user\'s zone under the kernel sandbox alone (bwrap or landlock; never in validated mode), with the same quota, limits, blocked files and group ownership as commands. Off: the function is absent from every host.',
  }),
  allow_shell: z.boolean().default(false).meta({
    title: 'Allow shell scripts',
    description:
      'Turns on shed_run_shell: POSIX sh scripts (pipes, redirections, loops) whose programs are the zone\'s whitelisted commands, under the kernel sandbox alone (bwrap or landlock). Off: the function is absent from every host.',
  }),
  python_command: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._+-]*$/, 'a program name found on the system PATH, e.g. python3')
    .default('python3')
    .meta({
      title: 'Python command',
      description: 'The Python shed_run_python runs: a program name looked up on the system PATH (/usr/local/bin:/usr/bin:/bin), e.g. python3 or python3.12.',
    }),
  sqlite_default_limit: int(1).default(10).meta({
    title: 'SQLite default row limit',
    description: 'Rows a query returns when the call gives no limit and the SQL has no LIMIT.',
  }),
  sqlite_max_rows: int(1).default(10000).meta({
    title: 'SQLite row ceiling',
    description: 'Most rows one query returns (limit=0 means this ceiling); output_csv exports all rows.',
  }),
  zip_max_entries: int(1).default(10000).meta({
    title: 'Unzip: max entries',
    description: 'Archives with more entries (files and folders) are refused by shed_unzip.',
  }),
  zip_max_total_mb: int(1).default(500).meta({
    title: 'Unzip: max total size (MB)',
    description: 'Archives whose declared uncompressed total exceeds this (MiB) are refused by shed_unzip.',
  }),
  zip_max_ratio: int(0).default(100).meta({
    title: 'Unzip: max compression ratio',
    description: 'Archives over 1 MiB uncompressed whose total/compressed ratio exceeds this are refused; 0 disables the check.',
  }),
  import_allowed_paths: z.string().default('').meta({
    title: 'Import: allowed folders',
    description:
      'Comma-separated absolute folders from which shed_import may copy attached files given by a local path (e.g. /app/backend/data/uploads for Open WebUI). Empty: only files under the storage base (outside users/ and groups/, or in the caller\'s own folder). Inline content is always accepted.',
  }),
  audit_log: z.boolean().default(false).meta({
    title: 'Audit log',
    description: 'One JSON line per call (user, function, zone, paths, result, time; never contents) in {storage_base_path}/audit/. fileshed serve turns it on by default.',
  }),
  audit_max_mb: int(1).default(10).meta({
    title: 'Audit log file size (MB)',
    description: 'The audit file is rotated when it reaches this size.',
  }),
  audit_retention_days: int(0).default(90).meta({
    title: 'Audit log retention (days)',
    description: 'Rotated audit files older than this are deleted; 0 keeps them forever.',
  }),
  undo_enabled: z.boolean().default(true).meta({
    title: 'Undo by chat turn',
    description: 'Capture every change of every modifying call, grouped by assistant answer, so shed_undo can take a turn back (SPEC 9.1). The capture store is server state beside each user\'s Storage.',
  }),
  undo_max_turns: int(1).default(200).meta({
    title: 'Undo: turns kept per user',
    description: 'Older turns drop out of the shed_undo list and can no longer be undone.',
  }),
  undo_max_age_days: int(0).default(30).meta({
    title: 'Undo: turn age limit (days)',
    description: 'Turns older than this can no longer be undone; 0 keeps them while the count allows.',
  }),
  undo_max_store_mb: int(0).default(1000).meta({
    title: 'Undo: older versions kept per user (MB)',
    description: 'Past this, the oldest turns can no longer be undone and their stored versions are freed (a turn over it alone is listed as not undoable). The copy of the current files is not counted; 0: no limit.',
  }),
  undo_max_file_mb: int(1).default(100).meta({
    title: 'Undo: largest file kept (MB)',
    description: 'A file over this size is not captured: its change is listed as not undoable (never silently).',
  }),
  uploads_retention_days: int(0).default(0).meta({
    title: 'Uploads retention (days)',
    description: 'Maintenance removes conversation upload folders untouched for longer; 0 keeps them forever.',
  }),
  maintenance_interval_hours: int(0).default(24).meta({
    title: 'Maintenance interval (hours)',
    description: 'How often fileshed serve runs maintenance for all users; 0 turns the schedule off.',
  }),
  sqlite_timeout_seconds: int(1).default(30).meta({
    title: 'SQLite timeout (s)',
    description: 'Longest a SQL statement or CSV import may run; it is then stopped (QUERY_TIMEOUT) and the database is left unchanged.',
  }),
  functions: z.string().default('all').meta({
    title: 'Enabled functions',
    description:
      'Which shed_* functions the model sees and may call: all, core (about a dozen for everyday work), or a comma-separated list of function names (with or without shed_) and categories, e.g. "core,sqlite,archives". shed_help is always on. Unknown names are ignored with a warning.',
  }),
  functions_admin: z.string().default('').meta({
    title: 'Enabled functions (admins)',
    description: 'The same for users whose role is admin; empty means the same as functions.',
  }),
  blocked_patterns: z.string().default('').meta({
    title: 'Blocked file patterns',
    description:
      'Comma-separated, case-insensitive globs of files no function or command may touch, e.g. ".env, *.pem, *.key, id_rsa*, .ssh/, .git/config". A pattern without / matches any path component; one ending in / matches a folder and all it holds. Empty: nothing is blocked.',
  }),
  allowed_extensions: z.string().default('').meta({
    title: 'Allowed file extensions',
    description: 'Comma-separated extensions (e.g. "txt,md,csv,json") that files must have to be read or written by a function; folders are not affected. Empty: every extension.',
  }),
  public_url: z.string().url().default('http://localhost:8765').meta({
    title: 'Public URL',
    description: 'Base URL of fileshed serve as browsers reach it; download links are {public_url}/files/{token}.',
  }),
  link_default_hours: z.number().positive().default(24).meta({
    title: 'Link lifetime (hours)',
    description: 'How long a download link works when shed_link_create gives no expires_hours.',
  }),
  link_max_hours: z.number().positive().default(168).meta({
    title: 'Link max lifetime (hours)',
    description: 'The longest expires_hours a link may ask for (longer is refused, not shortened).',
  }),
  link_backend: z.enum(['standalone', 'openwebui']).default('standalone').meta({
    title: 'Link backend',
    description: 'standalone (signed expiring links served by fileshed serve) or openwebui (files uploaded to Open WebUI, needs a session token).',
  }),
});

/** Per-user settings: none yet (the mechanism stays: hosts pass __user__.valves, validated like the admin's). */
export const UserValvesSchema = z.object({});

export type Valves = z.infer<typeof ValvesSchema>;
export type UserValves = z.infer<typeof UserValvesSchema>;

export function defaultValves(): Valves {
  return ValvesSchema.parse({});
}

const lastValves = new WeakMap<z.ZodObject, { key: string; data: unknown }>();

/** The input's text for the cache (NaN and the infinities told apart); undefined: not cached (a value JSON cannot hold). */
function inputKey(input: Record<string, unknown>): string | undefined {
  try {
    return JSON.stringify(input, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? { nonFinite: String(v) } : v));
  } catch {
    return undefined;
  }
}

/**
 * Validates admin or user valves. Hosts may hand over form values as strings ("1000", "true"), so
 * numeric and boolean strings are accepted; `null` means "use the default" as in Open WebUI.
 */
export function parseValves<T extends z.ZodObject>(schema: T, raw: unknown, label: 'valve' | 'user valve'): z.infer<T> {
  const source = raw !== null && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  const input: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(schema.shape)) {
    const value = source[key];
    if (value === null || value === undefined) continue;
    input[key] = coerceValve(field as z.ZodType, value);
  }
  // Every call parses the same settings: the schema's answer for the last input is kept per schema
  // (keyed by the input's whole JSON text, so any change is parsed again). The answer is frozen:
  // nothing changes valves after parsing, and a shared copy must stay so.
  const key = inputKey(input);
  const last = lastValves.get(schema);
  if (key !== undefined && last !== undefined && last.key === key) return last.data as z.infer<T>;
  const parsed = schema.safeParse(input);
  if (parsed.success) {
    if (key !== undefined) lastValves.set(schema, { key, data: Object.freeze(parsed.data) });
    return parsed.data;
  }
  const issue = parsed.error.issues[0]!;
  const name = String(issue.path[0] ?? '?');
  throw shedError('INVALID_VALVES', `The ${label} '${name}' is invalid: ${issue.message} (got ${JSON.stringify(input[name])}).`, {
    details: { valve: name, received: input[name] },
    hint: `An admin must correct '${name}' in the tool settings; the defaults are listed in valves.schema.json.`,
  });
}

function coerceValve(field: z.ZodType, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const kind = innerKind(field);
  if (kind === 'number' && /^-?\d+$/.test(value.trim())) return Number(value.trim());
  if (kind === 'boolean' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
  return value;
}

function innerKind(field: z.ZodType): string {
  let def = field.def as { type: string; innerType?: z.ZodType };
  while (def.innerType) def = def.innerType.def as typeof def;
  return def.type;
}
