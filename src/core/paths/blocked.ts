/**
 * Sensitive files (issue 16, valves blocked_patterns and allowed_extensions): files no function
 * reads, writes or lists and no command may name. Off by default (both valves empty).
 *
 * blocked_patterns: comma-separated, case-insensitive globs (* ? [..]). A pattern without a slash
 * matches any one path component, a file or a folder name (`.env`, `*.pem`, `id_rsa*`); a trailing
 * slash only says it is meant as a folder (`.ssh/` is the same as `.ssh`); a pattern with a slash
 * inside matches consecutive components anywhere (`.git/config` matches proj/.git/config). Inside a
 * blocked folder everything is blocked.
 *
 * allowed_extensions: when set, a FILE must have one of them (folders are not affected; a new path
 * whose name has no dot may become a folder and passes). Enforced on function paths and on existing
 * files named in command arguments; it does not mask files from commands that walk folders.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError, showValue } from '../errors.js';

export interface BlockRules {
  patterns: { text: string; parts: RegExp[] }[];
  /** Lower-case extensions without the dot; undefined = every extension. */
  extensions: ReadonlySet<string> | undefined;
}

export interface BlockValves {
  blocked_patterns?: string;
  allowed_extensions?: string;
}

const cache = new Map<string, BlockRules | undefined>();

/** The rules of these valves, or undefined when both are empty (the default: nothing blocked). */
export function blockRules(valves: BlockValves): BlockRules | undefined {
  const patternsText = valves.blocked_patterns ?? '';
  const extText = valves.allowed_extensions ?? '';
  const key = `${patternsText}\u0000${extText}`;
  if (cache.has(key)) return cache.get(key);
  const patterns = splitList(patternsText).map((text) => ({
    text,
    parts: text.replace(/\/+$/, '').split('/').filter(Boolean).map(globToRegExp),
  })).filter((p) => p.parts.length > 0);
  const exts = splitList(extText).map((e) => e.replace(/^\*?\./, '').toLowerCase());
  const rules = patterns.length === 0 && exts.length === 0 ? undefined : { patterns, extensions: exts.length > 0 ? new Set(exts) : undefined };
  if (cache.size > 100) cache.clear();
  cache.set(key, rules);
  return rules;
}

function splitList(text: string): string[] {
  return text.split(',').map((s) => s.trim()).filter(Boolean);
}

/** One path component's glob as an anchored, case-insensitive expression. */
function globToRegExp(glob: string): RegExp {
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end === -1) out += '\\[';
      else {
        const body = glob.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\');
        out += `[${body}]`;
        i = end;
      }
    } else out += c.replace(/[.+^${}()|\\\]]/g, '\\$&');
  }
  return new RegExp(`^${out}$`, 'i');
}

/** The pattern that blocks this zone-relative path (or one of its folders), if any. */
export function blockedPattern(rules: BlockRules, rel: string): string | undefined {
  const parts = rel.split('/').filter((p) => p !== '' && p !== '.');
  for (const p of rules.patterns) {
    const n = p.parts.length;
    for (let start = 0; start + n <= parts.length; start++) {
      if (p.parts.every((re, k) => re.test(parts[start + k]!))) return p.text;
    }
  }
  return undefined;
}

export type EntryKind = 'file' | 'dir' | 'new';

/** Why this path is blocked (a pattern, or its extension), or undefined when it is allowed. */
export function blockReason(rules: BlockRules, rel: string, kind: EntryKind): { pattern?: string; extension?: string } | undefined {
  const pattern = blockedPattern(rules, rel);
  if (pattern !== undefined) return { pattern };
  if (rules.extensions && kind !== 'dir') {
    const name = rel.split('/').pop() ?? '';
    const dot = name.lastIndexOf('.');
    if (kind === 'new' && dot <= 0) return undefined; // may become a folder
    const ext = dot > 0 ? name.slice(dot + 1).toLowerCase() : '';
    if (!rules.extensions.has(ext)) return { extension: ext };
  }
  return undefined;
}

/** The BLOCKED_PATH error: names the pattern (or extension) and the valve, and says what to do. */
export function blockedError(param: string, input: string, why: { pattern?: string; extension?: string }, allowed?: ReadonlySet<string>): Error {
  const reason =
    why.pattern !== undefined
      ? `matches the blocked pattern '${why.pattern}' (admin setting blocked_patterns)`
      : `has ${why.extension ? `the extension '.${why.extension}'` : 'no extension'}, which is not among the allowed extensions (admin setting allowed_extensions: ${[...(allowed ?? [])].join(', ')})`;
  return shedError('BLOCKED_PATH', `${param} ${showValue(input)} ${reason}; Fileshed does not read, write or run commands on such files.`, {
    details: { parameter: param, received: input, ...(why.pattern !== undefined ? { pattern: why.pattern } : { extension: why.extension ?? '' }) },
    hint: 'Leave this file alone and work with other files. If the user really needs it, only an admin can change these settings.',
  });
}

/**
 * Throws BLOCKED_PATH when `rel` (as the caller wrote it, `input`) or the real location `abs` it
 * resolved to (through links) is blocked. `stat` says whether it is a file, a folder or new.
 */
export function requireNotBlocked(rules: BlockRules, zoneRoot: string, rel: string, abs: string, stat: fs.Stats | undefined, param: string, input: string): void {
  if (rel === '') return;
  const kind: EntryKind = stat === undefined ? 'new' : stat.isDirectory() ? 'dir' : 'file';
  const why = blockReason(rules, rel, kind);
  if (why) throw blockedError(param, input, why, rules.extensions);
  const real = path.relative(zoneRoot, abs).split(path.sep).join('/');
  if (real !== rel && !real.startsWith('..')) {
    const viaLink = blockReason(rules, real, kind);
    if (viaLink) throw blockedError(param, input, viaLink, rules.extensions);
  }
}

export interface BlockedEntries {
  /** Zone-relative paths of blocked files (links excluded: what they lead to is found itself). */
  files: string[];
  /** Zone-relative paths of blocked folders (not descended). */
  dirs: string[];
  /** False when the walk stopped at the entry limit: there may be more. */
  complete: boolean;
}

/**
 * Blocked entries below `startRel` of the zone (patterns only), found by a bounded walk that never
 * follows links. `skipRootGit` leaves out a versioned zone's own history folder.
 */
export function findBlocked(rules: BlockRules, zoneRoot: string, startRel = '', opts: { limit?: number; skipRootGit?: boolean } = {}): BlockedEntries {
  const out: BlockedEntries = { files: [], dirs: [], complete: true };
  if (rules.patterns.length === 0) return out;
  const limit = opts.limit ?? 100_000;
  let seen = 0;
  const stack = [startRel];
  while (stack.length > 0) {
    const rel = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(zoneRoot, rel), { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      if (++seen > limit) {
        out.complete = false;
        return out;
      }
      if (rel === '' && opts.skipRootGit && e.name === '.git') continue;
      const child = rel === '' ? e.name : `${rel}/${e.name}`;
      const hit = blockedPattern(rules, child) !== undefined;
      if (e.isDirectory()) {
        if (hit) out.dirs.push(child);
        else stack.push(child);
      } else if (hit && !e.isSymbolicLink()) {
        out.files.push(child);
      }
    }
  }
  return out;
}
