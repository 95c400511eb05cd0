/**
 * Blocked files judged by what they are, not only by the name they have now (valve
 * blocked_patterns). A pattern blocks names; the content behind a blocked name must not get a name
 * the patterns do not cover:
 *
 * - another hard link to it is the same file (device + inode): it is blocked too, wherever it is
 *   (`requireNotBlocked` in blocked.ts, command arguments, masks, served links);
 * - moving or copying a folder must not rename a blocked entry inside it to an unblocked name
 *   (`proj/.git` → `proj/g` turns `proj/.git/config` into `proj/g/config`): `requireNamesKept`
 *   refuses such a move before it happens (shed_rename, the bridges, shed_copy_to_group);
 * - a command (any program, any mode) cannot be judged by its arguments alone: the identities of the
 *   blocked files are taken before it runs, and `restoreNames` afterwards puts every blocked file
 *   that was moved to an unblocked name back where it was, and removes new unblocked hard links.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError, showValue } from '../errors.js';
import { walkEntriesSliced } from '../fs/walk.js';
import { blockedPattern, findBlocked, type BlockedEntries, type BlockRules } from './blocked.js';

/** Blocked regular files by identity (`dev:ino`): where each is, and how many names it had. */
export type Identities = Map<string, { rel: string; nlink: number }>;

export function identityKey(st: fs.Stats): string {
  return `${st.dev}:${st.ino}`;
}

/** The identities of the blocked regular files `found` holds (named by a pattern, or inside a blocked folder). */
export function blockedIdentities(root: string, found: BlockedEntries): Identities {
  const ids: Identities = new Map();
  for (const rel of [...found.files, ...found.inside]) {
    const st = fs.lstatSync(path.join(root, rel), { throwIfNoEntry: false });
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
    const st = fs.lstatSync(full, { throwIfNoEntry: false });
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

export interface NameRepair {
  /** Blocked files a command had moved to unblocked names, moved back: [unblocked name, blocked name]. */
  restored: [string, string][];
  /** New unblocked hard links to blocked files, removed. */
  unlinked: string[];
}

/**
 * After a command: every blocked file of `before` must still be at its blocked name with no more
 * names than it had. A blocked file found under an unblocked name is moved back (the blocked name is
 * free again; what took it meanwhile gets the unblocked name instead) or, when it is still at its
 * blocked name too, that extra name is removed. Nothing is deleted that is a file's only name.
 */
export async function restoreNames(rules: BlockRules, root: string, before: Identities): Promise<NameRepair> {
  const repair: NameRepair = { restored: [], unlinked: [] };
  const wanted = new Set<string>();
  for (const [key, id] of before) {
    const st = fs.lstatSync(path.join(root, id.rel), { throwIfNoEntry: false });
    if (st === undefined || !st.isFile() || identityKey(st) !== key || st.nlink > id.nlink) wanted.add(key);
  }
  for (const { rel, key } of await unblockedNames(rules, root, wanted)) {
    const home = before.get(key)!.rel;
    const abs = path.join(root, rel);
    const homeAbs = path.join(root, home);
    const atHome = fs.lstatSync(homeAbs, { throwIfNoEntry: false });
    try {
      if (atHome !== undefined && identityKey(atHome) === key) {
        fs.unlinkSync(abs); // the blocked name still holds it: this was an extra name
        repair.unlinked.push(rel);
      } else if (atHome === undefined) {
        fs.mkdirSync(path.dirname(homeAbs), { recursive: true });
        fs.renameSync(abs, homeAbs);
        repair.restored.push([rel, home]);
      } else {
        // Something else took the blocked name (`mv --backup`): the two swap names.
        const spare = `${homeAbs}.shed-swap-${process.pid}`;
        fs.renameSync(homeAbs, spare);
        fs.renameSync(abs, homeAbs);
        fs.renameSync(spare, abs);
        repair.restored.push([rel, home]);
      }
    } catch {
      // The blocked name's folder became a file, or the disk refused: left for the next check.
    }
  }
  return repair;
}
