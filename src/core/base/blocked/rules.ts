/**
 * Sensitive files (valves blocked_patterns and allowed_extensions): files no function
 * reads, writes or lists and no command may name. Off by default (both valves empty).
 *
 * blocked_patterns: comma-separated, case-insensitive globs (* ? [..]). A pattern without a slash
 * matches any one path component, a file or a folder name (`.env`, `*.pem`, `id_rsa*`); a trailing
 * slash only says it is meant as a folder (`.ssh/` is the same as `.ssh`); a pattern with a slash
 * inside matches consecutive components anywhere (`.git/config` matches proj/.git/config). Inside a
 * blocked folder everything is blocked.
 *
 * A file is judged by every name it has and by what it is: a symbolic link by where it leads (the
 * resolver), a file with several hard links by its identity (device + inode: another name of a
 * blocked file is blocked too; see identity.ts for moves, copies and commands).
 *
 * allowed_extensions: when set, a FILE must have one of them (folders are not affected; a new path
 * whose name has no dot may become a folder and passes). Enforced on function paths and on existing
 * files named in command arguments; it does not hide files from commands that walk folders.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError, showValue } from '../errors.js';
import { TimeSlice } from '../fs/slice.js';
import { lstatIfAny } from '../fs/stat.js';

export interface BlockRules {
  patterns: { text: string; parts: Glob[] }[];
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
    parts: text.replace(/\/+$/, '').split('/').filter(Boolean).map(compileGlob),
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

/** One glob token: a literal character, `?`, `*`, or a `[...]` set (with `!` for "not"). */
type GlobToken = { kind: 'char'; c: string } | { kind: 'any' } | { kind: 'star' } | { kind: 'set'; negate: boolean; test: (c: string) => boolean };
type Glob = GlobToken[];

/** Compiles one path component's glob (case-insensitive). No RegExp: names are the user's, and matching stays O(name x glob). */
function compileGlob(glob: string): Glob {
  const g = glob.toLowerCase();
  const out: Glob = [];
  for (let i = 0; i < g.length; i++) {
    const c = g[i]!;
    if (c === '*') {
      if (out.at(-1)?.kind !== 'star') out.push({ kind: 'star' });
    } else if (c === '?') out.push({ kind: 'any' });
    else if (c === '[' && g.indexOf(']', i + 2) !== -1) {
      const end = g.indexOf(']', i + 2);
      let body = g.slice(i + 1, end);
      const negate = body.startsWith('!') || body.startsWith('^');
      if (negate) body = body.slice(1);
      const ranges: [string, string][] = [];
      for (let k = 0; k < body.length; k++) {
        if (body[k + 1] === '-' && k + 2 < body.length) {
          ranges.push([body[k]!, body[k + 2]!]);
          k += 2;
        } else ranges.push([body[k]!, body[k]!]);
      }
      out.push({ kind: 'set', negate, test: (ch) => ranges.some(([lo, hi]) => ch >= lo && ch <= hi) !== negate });
      i = end;
    } else out.push({ kind: 'char', c });
  }
  return out;
}

/** Glob match of a whole name: the classic one-star backtracking, linear in name x glob. */
function globMatch(glob: Glob, name: string): boolean {
  const s = name.toLowerCase();
  let gi = 0;
  let si = 0;
  let starAt = -1;
  let resumeAt = 0;
  const one = (t: GlobToken, ch: string) => (t.kind === 'any' ? true : t.kind === 'char' ? t.c === ch : t.kind === 'set' ? t.test(ch) : false);
  while (si < s.length) {
    const t = glob[gi];
    if (t?.kind === 'star') {
      starAt = gi++;
      resumeAt = si;
    } else if (t !== undefined && one(t, s[si]!)) {
      gi++;
      si++;
    } else if (starAt >= 0) {
      gi = starAt + 1;
      si = ++resumeAt;
    } else return false;
  }
  while (glob[gi]?.kind === 'star') gi++;
  return gi === glob.length;
}

/** The pattern that blocks this zone-relative path (or one of its folders), if any. */
export function blockedPattern(rules: BlockRules, rel: string): string | undefined {
  const parts = rel.split('/').filter((p) => p !== '' && p !== '.');
  for (const p of rules.patterns) {
    const n = p.parts.length;
    for (let start = 0; start + n <= parts.length; start++) {
      if (p.parts.every((glob, k) => globMatch(glob, parts[start + k]!))) return p.text;
    }
  }
  return undefined;
}

export type EntryKind = 'file' | 'dir' | 'new';

/** Why this path is blocked (a pattern, or its extension), or undefined when it is allowed. */
export function blockReason(rules: BlockRules, rel: string, kind: EntryKind): BlockWhy | undefined {
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

export interface BlockWhy {
  pattern?: string;
  extension?: string;
  /** The blocked file this one is (the same file under another name: a hard link, or where a link leads). */
  sameAs?: string;
}

/** The BLOCKED_PATH error: names the pattern (or extension) and the valve, and says what to do. */
export function blockedError(param: string, input: string, why: BlockWhy, allowed?: ReadonlySet<string>): Error {
  const reason =
    why.pattern !== undefined
      ? `${why.sameAs !== undefined ? `is the blocked file '${why.sameAs}' under another name, which ` : ''}matches the blocked pattern '${why.pattern}' (admin setting blocked_patterns)`
      : `has ${why.extension ? `the extension '.${why.extension}'` : 'no extension'}, which is not among the allowed extensions (admin setting allowed_extensions: ${[...(allowed ?? [])].join(', ')})`;
  return shedError('BLOCKED_PATH', `${param} ${showValue(input)} ${reason}; Fileshed does not read, write or run commands on such files.`, {
    details: { parameter: param, received: input, ...(why.pattern !== undefined ? { pattern: why.pattern } : { extension: why.extension ?? '' }) },
    hint: 'Leave this file alone and work with other files. If the user really needs it, only an admin can change these settings.',
  });
}

/**
 * Judges entries of one zone: by the path as written, by the real location it resolves to (through
 * links), by extension, and by identity (a file with several hard links may be a blocked file under
 * another name). The blocked files' identities are found once, on the first entry that needs them.
 */
export class BlockJudge {
  private identities: Map<string, string> | undefined;

  constructor(
    readonly rules: BlockRules,
    private readonly zoneRoot: string,
  ) {}

  /** Why `rel` (as written; `abs` is where it really leads, `stat` what is there) is blocked, or undefined. */
  why(rel: string, abs: string, stat: fs.Stats | undefined): BlockWhy | undefined {
    if (rel === '') return undefined;
    const kind: EntryKind = stat === undefined ? 'new' : stat.isDirectory() ? 'dir' : 'file';
    const direct = blockReason(this.rules, rel, kind);
    if (direct) return direct;
    const real = path.relative(this.zoneRoot, abs).split(path.sep).join('/');
    if (real !== rel && !real.startsWith('..')) {
      const viaLink = blockReason(this.rules, real, kind);
      if (viaLink) return viaLink;
    }
    // Another name of a blocked file (a hard link) is the blocked file: only a file with several names can be one.
    if (stat?.isFile() && stat.nlink > 1 && this.rules.patterns.length > 0) {
      const same = this.blockedIdentities().get(`${stat.dev}:${stat.ino}`);
      if (same !== undefined && same !== rel) return { pattern: blockedPattern(this.rules, same), sameAs: same };
    }
    return undefined;
  }

  private blockedIdentities(): Map<string, string> {
    if (this.identities !== undefined) return this.identities;
    this.identities = new Map();
    const found = findBlockedSync(this.rules, this.zoneRoot);
    for (const rel of [...found.files, ...found.inside]) {
      const b = lstatIfAny(path.join(this.zoneRoot, rel));
      if (b?.isFile()) this.identities.set(`${b.dev}:${b.ino}`, rel);
    }
    return this.identities;
  }
}

/**
 * Throws BLOCKED_PATH when `rel` (as the caller wrote it, `input`) or the real location `abs` it
 * resolved to (through links), or the file itself (by identity), is blocked. `stat` says whether it
 * is a file, a folder or new.
 */
export function requireNotBlocked(rules: BlockRules, zoneRoot: string, rel: string, abs: string, stat: fs.Stats | undefined, param: string, input: string): void {
  const why = new BlockJudge(rules, zoneRoot).why(rel, abs, stat);
  if (why) throw blockedError(param, input, why, rules.extensions);
}

export interface BlockedEntries {
  /** Zone-relative paths of blocked files (links excluded: what they lead to is found itself). */
  files: string[];
  /** Zone-relative paths of blocked folders. */
  dirs: string[];
  /** Regular files inside blocked folders (blocked too): their identities count like the files'. */
  inside: string[];
  /** False when the walk stopped at the entry limit: there may be more. */
  complete: boolean;
}

interface WalkOptions {
  limit?: number;
}

/**
 * Blocked entries below `startRel` of the zone (patterns only), found by a bounded walk that never
 * follows links. Sliced (see fs/slice.ts): the user shapes the tree, the walk must not hold the
 * event loop for all of it.
 */
export async function findBlocked(rules: BlockRules, zoneRoot: string, startRel = '', opts: WalkOptions = {}): Promise<BlockedEntries> {
  const slice = new TimeSlice();
  const walk = blockedWalk(rules, zoneRoot, startRel, opts);
  for (let step = walk.next(); ; step = walk.next()) {
    if (step.done) return step.value;
    await slice.tick();
  }
}

/** The same walk in one piece, for the resolver's rare identity check (a file with several hard links). */
export function findBlockedSync(rules: BlockRules, zoneRoot: string, startRel = '', opts: WalkOptions = {}): BlockedEntries {
  const walk = blockedWalk(rules, zoneRoot, startRel, opts);
  for (let step = walk.next(); ; step = walk.next()) if (step.done) return step.value;
}

/** Yields once per folder (a chance to pause), returns what it found. */
function* blockedWalk(rules: BlockRules, zoneRoot: string, startRel: string, opts: WalkOptions): Generator<void, BlockedEntries> {
  const out: BlockedEntries = { files: [], dirs: [], inside: [], complete: true };
  if (rules.patterns.length === 0) return out;
  const limit = opts.limit ?? 100_000;
  let seen = 0;
  // [folder, inside a blocked folder]
  const stack: [string, boolean][] = [[startRel, startRel !== '' && blockedPattern(rules, startRel) !== undefined]];
  while (stack.length > 0) {
    yield;
    const [rel, within] = stack.pop()!;
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
      const child = rel === '' ? e.name : `${rel}/${e.name}`;
      if (within) {
        if (e.isDirectory()) stack.push([child, true]);
        else if (e.isFile()) out.inside.push(child);
        continue;
      }
      const hit = blockedPattern(rules, child) !== undefined;
      if (e.isDirectory()) {
        if (hit) out.dirs.push(child);
        stack.push([child, hit]);
      } else if (hit && !e.isSymbolicLink()) {
        out.files.push(child);
      }
    }
  }
  return out;
}
