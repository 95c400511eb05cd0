/**
 * Sensitive files and commands (valves blocked_patterns / allowed_extensions).
 *
 * The wall is absence: while a command runs, the zone's blocked entries are not in it
 * (hide-blocked.ts), whatever mode, whatever the arguments, list files or links say. This module
 * finds them (a bounded walk; other names of blocked files by inode) and gives the early, clear
 * error: an argument that names a blocked path is refused with BLOCKED_PATH, in every form a
 * program reads a path from: as written, inside --opt=value, rev:path, a,b lists, behind the `@`
 * of a response file (`strings @.env`), after a `file:` scheme, through symbolic links (judged
 * where they lead), and as another name (hard link) of a blocked file; so is an existing file whose
 * extension is not allowed. The built-in git of versioned zones hides blocked paths from its views
 * (history/command.ts), and refuses an argument naming one the same way (checkSensitiveGit).
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../../../base/errors.js';
import { blockedError, blockedPattern, blockReason, type BlockedEntries, type BlockRules } from '../../../base/blocked/rules.js';
import { blockedState, identityKey, type BlockedState, type Identities } from '../../../base/blocked/identity.js';
import { walkInside } from '../../../base/paths/walk.js';
import type { Zone } from '../../../base/zones/zones.js';

/** Most entries one bounded walk looks at. */
const WALK_LIMIT = 100_000;

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

/**
 * Names a glob pattern must not stand for (globs.ts): blocked by a pattern, as written or where
 * their links lead. They are not in the zone while the command runs (other names of blocked files
 * are refused by the argument check instead).
 */
export function hiddenFromGlobs(zone: Zone): ((rel: string) => boolean) | undefined {
  const rules = zone.blocked;
  if (rules === undefined || rules.patterns.length === 0) return undefined;
  return (rel) => {
    if (blockedPattern(rules, rel) !== undefined) return true;
    const walked = walkInside(zone.root, rel, { followLast: true });
    return walked.inside && blockedPattern(rules, walked.parts.join('/')) !== undefined;
  };
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

/**
 * Checks a command's arguments against the sensitive-file rules of its zone and returns the zone's
 * blocked entries (by pattern, and other names of blocked files), which the executor hides while
 * the command runs; undefined when there are none.
 */
export async function checkSensitiveCommand(zone: Zone, args: readonly string[]): Promise<BlockedEntries | undefined> {
  const rules = zone.blocked;
  if (!rules) return undefined;
  checkArguments(rules, zone, args);
  if (rules.patterns.length === 0) return undefined;
  const { found, ids } = await blockedIn(zone, rules);
  checkIdentities(rules, zone, args, ids);
  return found.files.length + found.dirs.length === 0 ? undefined : found;
}

/**
 * The built-in git of versioned zones prints history in-process, without any sandbox: blocked paths
 * are not in its views (history/command.ts hides them from every diff, patch, status, listing and
 * restore), so only an argument naming one is refused here, early and clearly.
 */
export function checkSensitiveGit(zone: Zone, args: readonly string[]): void {
  if (zone.blocked) checkArguments(zone.blocked, zone, args);
}
