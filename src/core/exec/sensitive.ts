/**
 * Sensitive files and commands (valves blocked_patterns / allowed_extensions).
 *
 * Every mode: an argument that names a blocked path is refused with BLOCKED_PATH, in every form a
 * program reads a path from: as written, inside --opt=value, rev:path, a,b lists, behind the `@`
 * of a response file (`strings @.env`), after a `file:` scheme, through symbolic links (judged where
 * they lead), and as another name (hard link) of a blocked file; so is an existing file whose
 * extension is not allowed. After the command, blocked files it moved to unblocked names are put
 * back and new unblocked hard links to them removed (blocked-identity.ts).
 * Where the sandbox can mask (bwrap: mounts over single entries), blocked files found by a bounded
 * walk of the zone are masked (an empty read-only file over each file, an empty read-only folder
 * over each folder), so grep -r, tar or cat see nothing.
 * Where it cannot (validated; landlock, which cannot deny a subpath of a folder it grants), a
 * command that names a folder holding blocked files (or a recursive reader given no path, which
 * reads the zone root) is refused; commands that only list names (ls, du, find, stat) are let
 * through. The built-in git of versioned zones is checked the same way: diffs and whole-commit
 * views are refused while blocked files exist, unless narrowed with `-- path` or rev:path to
 * non-blocked files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../errors.js';
import { blockedError, blockedPattern, blockReason, type BlockedEntries, type BlockRules } from '../paths/blocked.js';
import { blockedState, identityKey, type BlockedState, type Identities } from '../paths/blocked-identity.js';
import { walkInside } from '../paths/walk.js';
import type { Zone } from '../zones/zones.js';
import type { SandboxMode } from './sandbox.js';

/**
 * Whether this sandbox mode can hide single entries of the zone from a command (bwrap mounts over
 * them). Landlock grants whole folders and cannot deny a subpath, so it follows the rules of
 * validated mode, as every mode that is not listed here does.
 */
export function canMask(sandbox: SandboxMode): boolean {
  return sandbox === 'bwrap';
}

/** Most entries one bounded walk looks at, and most masks one sandbox gets. */
const WALK_LIMIT = 100_000;
const MASK_LIMIT = 2_000;

/** Commands that read folder listings, never file contents. */
const NAME_LISTERS = new Set(['ls', 'du', 'find', 'tree', 'stat', 'dir', 'vdir']);
/** Commands that walk the working folder when they are given no path. */
const RECURSIVE_BY_DEFAULT = new Set(['rg', 'ag']);
const GREPS = new Set(['grep', 'egrep', 'fgrep']);

export interface Masks {
  files: string[];
  dirs: string[];
}

/**
 * What the argument may name: itself, and the parts of --opt=value, rev:path, scheme:path and a,b
 * lists, each also without a leading `@` (a response file: `strings @.env`, curl's `-d @file`,
 * `name=@file`) and without a URI query (`file:x.db?mode=ro`).
 */
function tokens(arg: string): string[] {
  const out = new Set<string>([arg]);
  for (const part of arg.split(/[=:,]/)) if (part !== '') out.add(part);
  for (const t of [...out]) if (t.startsWith('@') && t.length > 1) out.add(t.slice(1));
  // A URI's query or fragment (`file:db.sqlite?mode=ro`) is not part of the name.
  for (const t of [...out]) if (/[?#]/.test(t)) out.add(t.split(/[?#]/)[0]!);
  return [...out].map((t) => t.replace(/^(\.\/)+/, ''));
}

/** Refuses arguments that name blocked paths (as written, or where their links lead) or existing files with a refused extension. */
function checkArguments(rules: BlockRules, zone: Zone, args: readonly string[]): void {
  for (const arg of args) {
    for (const t of tokens(arg)) {
      const pattern = blockedPattern(rules, t);
      if (pattern !== undefined) throw blockedError('args', arg, { pattern });
      if (t.startsWith('-') || t.startsWith('/')) continue;
      // Where the kernel would take it: a link (or a folder link on the way) to a blocked entry is that entry.
      const walked = walkInside(zone.root, t, { followLast: true });
      if (walked.inside) {
        const real = walked.parts.join('/');
        const viaLink = real === t.replace(/\/+$/, '') ? undefined : blockedPattern(rules, real);
        if (viaLink !== undefined) throw blockedError('args', arg, { pattern: viaLink, sameAs: real });
      }
      if (!rules.extensions) continue;
      const st = statInside(zone, t);
      if (!st?.isFile()) continue;
      const why = blockReason(rules, t, 'file');
      if (why) throw blockedError('args', arg, why, rules.extensions);
    }
  }
}

/** Refuses arguments that are another name (a hard link) of a blocked file. */
function checkIdentities(rules: BlockRules, zone: Zone, args: readonly string[], ids: Identities): void {
  if (ids.size === 0) return;
  for (const arg of args) {
    for (const t of tokens(arg)) {
      if (t.startsWith('-') || t.startsWith('/')) continue;
      const st = statInside(zone, t);
      const same = st?.isFile() ? ids.get(identityKey(st)) : undefined;
      if (same !== undefined) throw blockedError('args', arg, { pattern: blockedPattern(rules, same.rel), sameAs: same.rel });
    }
  }
}

function statInside(zone: Zone, rel: string): fs.Stats | undefined {
  if (rel.startsWith('/') || rel.split('/').includes('..')) return undefined;
  try {
    return fs.statSync(path.join(zone.root, rel), { throwIfNoEntry: false });
  } catch {
    return undefined; // a name too long, a file used as a folder: nothing there
  }
}

/** The zone's blocked entries (by pattern and by identity), refusing commands where the walk cannot finish. */
async function blockedIn(zone: Zone, rules: BlockRules): Promise<BlockedState> {
  const state = await blockedState(rules, zone.root, { limit: WALK_LIMIT });
  if (!state.found.complete) {
    throw shedError('BLOCKED_PATH', `${zone.label} holds more than ${WALK_LIMIT} entries: Fileshed cannot check it for blocked files (admin setting blocked_patterns), so commands are refused here.`, {
      details: { parameter: 'cmd', limit: WALK_LIMIT },
      hint: 'Use the file functions (shed_read, shed_patch_text, ...), or clean up the zone.',
    });
  }
  return state;
}

/** The blocked entries at or below folder `rel` ('' is the zone root). */
function under(found: BlockedEntries, rel: string): string[] {
  const all = [...found.dirs, ...found.files];
  return rel === '' ? all : all.filter((b) => b === rel || b.startsWith(`${rel}/`));
}

function folderRefusal(zone: Zone, arg: string, inside: string[]): Error {
  return shedError('BLOCKED_PATH', `Argument '${arg}' is a folder holding blocked files (e.g. '${inside[0]}', admin setting blocked_patterns); without the sandbox a command could read them.`, {
    details: { parameter: 'args', received: arg, blocked: inside.slice(0, 5) },
    hint: `Name the files you need one by one, or work in a folder without blocked files (shed_tree(zone="${zone.name}") shows what is visible).`,
  });
}

export interface SensitivePlan {
  /** What the sandbox must hide (only where it can mask). */
  masks?: Masks;
  /** The blocked files' identities before the command, for `restoreNames` after it. */
  before?: Identities;
}

/**
 * Checks a command against the sensitive-file rules of its zone. Returns the masks the sandbox must
 * apply (`masking`: see canMask) and the identities to check after the command.
 */
export async function checkSensitiveCommand(zone: Zone, cmd: string, args: readonly string[], masking: boolean): Promise<SensitivePlan> {
  const rules = zone.blocked;
  if (!rules) return {};
  checkArguments(rules, zone, args);
  if (rules.patterns.length === 0) return {};
  const { found, ids } = await blockedIn(zone, rules);
  checkIdentities(rules, zone, args, ids);
  if (found.files.length + found.dirs.length === 0) return {};
  if (masking) {
    if (found.files.length + found.dirs.length > MASK_LIMIT) {
      throw shedError('BLOCKED_PATH', `${zone.label} holds more than ${MASK_LIMIT} blocked files or folders; commands are refused here.`, {
        details: { parameter: 'cmd', count: found.files.length + found.dirs.length },
        hint: 'Use the file functions, or ask the user to remove the blocked files.',
      });
    }
    return { masks: { files: found.files, dirs: found.dirs }, before: ids };
  }
  if (NAME_LISTERS.has(cmd)) return { before: ids };
  let namedPath = false;
  for (const arg of args) {
    if (arg.startsWith('-')) continue;
    const rel = arg.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
    const st = statInside(zone, rel === '.' ? '' : rel);
    if (st === undefined) continue;
    namedPath = true;
    if (!st.isDirectory()) continue;
    const inside = under(found, rel === '.' ? '' : rel);
    if (inside.length > 0) throw folderRefusal(zone, arg, inside);
  }
  const recursive = RECURSIVE_BY_DEFAULT.has(cmd) || (GREPS.has(cmd) && args.some((a) => /^-[A-Za-z]*[rR]/.test(a) || a === '--recursive' || a === '--dereference-recursive'));
  if (recursive && !namedPath) throw folderRefusal(zone, '.', under(found, ''));
  return { before: ids };
}

const GIT_CONTENT = new Set(['show', 'diff', 'blame', 'grep', 'cat-file']);
const LOG_PATCH = new Set(['-p', '-u', '--patch', '--full-diff', '--cc', '-m']);

/**
 * The built-in git of versioned zones prints file contents from history without any sandbox:
 * while the zone holds blocked files, content views must be narrowed to non-blocked files.
 */
export async function checkSensitiveGit(zone: Zone, args: readonly string[]): Promise<void> {
  const rules = zone.blocked;
  if (!rules) return;
  checkArguments(rules, zone, args);
  if (rules.patterns.length === 0) return;
  const sub = args.find((a) => !a.startsWith('-'));
  if (sub === undefined) return;
  const rest = args.slice(args.indexOf(sub) + 1);
  const printsContent = GIT_CONTENT.has(sub) || (sub === 'log' && rest.some((a) => LOG_PATCH.has(a)));
  // A restore writes every file of the folders it names: over blocked files too.
  const writes = sub === 'restore' || sub === 'checkout';
  if (!printsContent && !writes) return;
  const { found } = await blockedIn(zone, rules);
  if (found.files.length + found.dirs.length === 0) return;
  const dashes = rest.indexOf('--');
  const pathspecs = dashes >= 0 ? rest.slice(dashes + 1) : [];
  if (writes) {
    for (const spec of pathspecs) {
      const inside = under(found, spec.replace(/^(\.\/)+/, '').replace(/\/+$/, '').replace(/^\.$/, ''));
      if (inside.length > 0) throw folderRefusal(zone, spec, inside);
    }
    return;
  }
  const revPaths = rest.filter((a) => !a.startsWith('-') && a.includes(':'));
  const narrowed = pathspecs.length > 0 || (sub === 'show' && revPaths.length > 0 && rest.filter((a) => !a.startsWith('-')).every((a) => a.includes(':')));
  for (const spec of pathspecs) {
    const rel = spec.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
    const inside = under(found, rel === '.' ? '' : rel);
    if (inside.length > 0) throw folderRefusal(zone, spec, inside);
  }
  if (!narrowed) {
    throw shedError('BLOCKED_PATH', `git ${sub} would show the content of every file, and ${zone.label} holds blocked files (e.g. '${under(found, '')[0]}', admin setting blocked_patterns).`, {
      details: { parameter: 'args', received: args, blocked: under(found, '').slice(0, 5) },
      hint: `Name the files after --: shed_exec(zone="${zone.name}", cmd="git", args=["${sub}", ${sub === 'show' ? '"HEAD", ' : ''}"--", "notes.md"]).`,
    });
  }
}
