/**
 * Sensitive files and commands (issue 16, valves blocked_patterns / allowed_extensions).
 *
 * Every mode: an argument that names a blocked path (also as --opt=value or rev:path) is refused
 * with BLOCKED_PATH, and so is an existing file whose extension is not allowed.
 * bwrap: blocked files found by a bounded walk of the zone are masked (an empty read-only file over
 * each file, an empty read-only folder over each folder), so grep -r, tar or cat see nothing.
 * validated, landlock: nothing can be masked, so a command that names a folder holding blocked files (or a
 * recursive reader given no path, which reads the zone root) is refused; commands that only list
 * names (ls, du, find, stat) are let through. The built-in git of versioned zones is checked the same
 * way: diffs and whole-commit views are refused while blocked files exist, unless narrowed with
 * `-- path` or rev:path to non-blocked files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../errors.js';
import { blockedError, blockedPattern, blockReason, findBlocked, type BlockedEntries, type BlockRules } from '../paths/blocked.js';
import type { Zone } from '../zones/zones.js';
import type { SandboxMode } from './sandbox.js';

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

/** What the argument may name: itself, and the parts of --opt=value, rev:path and a,b lists. */
function tokens(arg: string): string[] {
  const out = new Set<string>([arg]);
  for (const part of arg.split(/[=:,]/)) if (part !== '') out.add(part);
  return [...out].map((t) => t.replace(/^(\.\/)+/, ''));
}

/** Refuses arguments that name blocked paths or existing files with a refused extension. */
function checkArguments(rules: BlockRules, zone: Zone, args: readonly string[]): void {
  for (const arg of args) {
    for (const t of tokens(arg)) {
      const pattern = blockedPattern(rules, t);
      if (pattern !== undefined) throw blockedError('args', arg, { pattern });
      if (!rules.extensions || t.startsWith('-')) continue;
      const st = statInside(zone, t);
      if (!st?.isFile()) continue;
      const why = blockReason(rules, t, 'file');
      if (why) throw blockedError('args', arg, why, rules.extensions);
    }
  }
}

function statInside(zone: Zone, rel: string): fs.Stats | undefined {
  if (rel.startsWith('/') || rel.split('/').includes('..')) return undefined;
  return fs.statSync(path.join(zone.root, rel), { throwIfNoEntry: false });
}

function blockedIn(zone: Zone, rules: BlockRules): BlockedEntries {
  const found = findBlocked(rules, zone.root, '', { limit: WALK_LIMIT, skipRootGit: zone.versioned });
  if (!found.complete) {
    throw shedError('BLOCKED_PATH', `${zone.label} holds more than ${WALK_LIMIT} entries: Fileshed cannot check it for blocked files (admin setting blocked_patterns), so commands are refused here.`, {
      details: { parameter: 'cmd', limit: WALK_LIMIT },
      hint: 'Use the file functions (shed_read, shed_patch_text, ...), or clean up the zone.',
    });
  }
  return found;
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

/**
 * Checks a command against the sensitive-file rules of its zone. Returns the masks the bwrap
 * sandbox must apply (none when the valves are off or the zone holds no blocked file).
 */
export function checkSensitiveCommand(zone: Zone, cmd: string, args: readonly string[], sandbox: SandboxMode): Masks | undefined {
  const rules = zone.blocked;
  if (!rules) return undefined;
  checkArguments(rules, zone, args);
  if (rules.patterns.length === 0) return undefined;
  const found = blockedIn(zone, rules);
  if (found.files.length + found.dirs.length === 0) return undefined;
  if (sandbox === 'bwrap') {
    if (found.files.length + found.dirs.length > MASK_LIMIT) {
      throw shedError('BLOCKED_PATH', `${zone.label} holds more than ${MASK_LIMIT} blocked files or folders; commands are refused here.`, {
        details: { parameter: 'cmd', count: found.files.length + found.dirs.length },
        hint: 'Use the file functions, or ask the user to remove the blocked files.',
      });
    }
    return { files: found.files, dirs: found.dirs };
  }
  if (NAME_LISTERS.has(cmd)) return undefined;
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
  return undefined;
}

const GIT_CONTENT = new Set(['show', 'diff', 'blame', 'grep', 'cat-file']);
const LOG_PATCH = new Set(['-p', '-u', '--patch', '--full-diff', '--cc', '-m']);

/**
 * The built-in git of versioned zones prints file contents from history without any sandbox:
 * while the zone holds blocked files, content views must be narrowed to non-blocked files.
 */
export function checkSensitiveGit(zone: Zone, args: readonly string[]): void {
  const rules = zone.blocked;
  if (!rules) return;
  checkArguments(rules, zone, args);
  if (rules.patterns.length === 0) return;
  const sub = args.find((a) => !a.startsWith('-'));
  if (sub === undefined) return;
  const rest = args.slice(args.indexOf(sub) + 1);
  const printsContent = GIT_CONTENT.has(sub) || (sub === 'log' && rest.some((a) => LOG_PATCH.has(a)));
  if (!printsContent) return;
  const found = blockedIn(zone, rules);
  if (found.files.length + found.dirs.length === 0) return;
  const dashes = rest.indexOf('--');
  const pathspecs = dashes >= 0 ? rest.slice(dashes + 1) : [];
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
