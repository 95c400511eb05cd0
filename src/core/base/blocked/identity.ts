/**
 * Blocked files judged by what they are, not only by the name they have now (valve
 * blocked_patterns). A pattern blocks names; the content behind a blocked name must not get a name
 * the patterns do not cover:
 *
 * - another hard link to it is the same file (device + inode): it is blocked too, wherever it is
 *   (`requireNotBlocked` in blocked.ts, command arguments, hidden from commands, served links);
 * - moving or copying a folder must not rename a blocked entry inside it to an unblocked name
 *   (`proj/.git` → `proj/g` turns `proj/.git/config` into `proj/g/config`): `requireNamesKept`
 *   refuses such a move before it happens (shed_rename, the bridges, shed_copy_to_group);
 * - a command (any program, any mode) cannot be judged by its arguments alone: every name of every
 *   blocked file (`blockedState`) is out of the zone while it runs (exec/guards/hide-blocked.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError, showValue } from '../errors.js';
import { lstatIfAny } from '../fs/stat.js';
import { walkEntriesSliced } from '../fs/walk.js';
import { blockedPattern, findBlocked, type BlockedEntries, type BlockRules } from './rules.js';

/** Blocked regular files by identity (`dev:ino`): where each is, and how many names it had. */
export type Identities = Map<string, { rel: string; nlink: number }>;

export function identityKey(st: fs.Stats): string {
  return `${st.dev}:${st.ino}`;
}

/** The identities of the blocked regular files `found` holds (named by a pattern, or inside a blocked folder). */
export function blockedIdentities(root: string, found: BlockedEntries): Identities {
  const ids: Identities = new Map();
  for (const rel of [...found.files, ...found.inside]) {
    const st = lstatIfAny(path.join(root, rel));
    if (st?.isFile()) ids.set(identityKey(st), { rel, nlink: st.nlink });
  }
  return ids;
}

/**
 * The unblocked names (zone-relative) of the blocked files whose identity is in `wanted`: hard links
 * or moved files. One lstat per file of the zone, sliced; only asked when a blocked file has several
 * names or went missing.
 */
export async function unblockedNames(rules: BlockRules, root: string, wanted: ReadonlySet<string>): Promise<{ rel: string; key: string }[]> {
  const out: { rel: string; key: string }[] = [];
  if (wanted.size === 0) return out;
  for await (const { full, entry } of walkEntriesSliced(root)) {
    if (!entry.isFile()) continue;
    const rel = path.relative(root, full).split(path.sep).join('/');
    if (blockedPattern(rules, rel) !== undefined) continue;
    const st = lstatIfAny(full);
    if (st?.isFile() && wanted.has(identityKey(st))) out.push({ rel, key: identityKey(st) });
  }
  return out;
}

export interface BlockedState {
  /** Blocked entries; `files` also holds the other (unblocked) names of blocked files, which are blocked too. */
  found: BlockedEntries;
  /** Identities of the blocked files. */
  ids: Identities;
}

/** The zone's blocked entries by pattern and by identity (a bounded, sliced walk; a second one only when a blocked file has hard links). */
export async function blockedState(rules: BlockRules, root: string, opts: { limit?: number } = {}): Promise<BlockedState> {
  const found = await findBlocked(rules, root, '', opts);
  const ids = blockedIdentities(root, found);
  const linked = new Set([...ids].filter(([, id]) => id.nlink > 1).map(([key]) => key));
  for (const other of await unblockedNames(rules, root, linked)) found.files.push(other.rel);
  return { found, ids };
}

/**
 * BLOCKED_PATH when moving or copying the folder `fromRel` to `toRel` would give a blocked entry
 * inside it a name the patterns do not cover. `param` names the destination parameter.
 */
export async function requireNamesKept(rules: BlockRules | undefined, fromRoot: string, fromRel: string, toRel: string, param: string, input: string): Promise<void> {
  if (rules === undefined || rules.patterns.length === 0) return;
  const found = await findBlocked(rules, fromRoot, fromRel);
  for (const rel of [...found.dirs, ...found.files]) {
    const renamed = toRel + rel.slice(fromRel.length);
    if (blockedPattern(rules, renamed) !== undefined) continue;
    const pattern = blockedPattern(rules, rel)!;
    throw shedError('BLOCKED_PATH', `${param} ${showValue(input)} would give the blocked entry '${rel}' (pattern '${pattern}', admin setting blocked_patterns) the name '${renamed}', which is not blocked; Fileshed does not let blocked files change names like that.`, {
      details: { parameter: param, received: input, blocked: rel, would_become: renamed, pattern },
      hint: `Keep the name '${fromRel.split('/').pop()}' (moving the folder as a whole under another folder is fine), or move the other files out one by one and leave '${rel}' where it is.`,
    });
  }
}
