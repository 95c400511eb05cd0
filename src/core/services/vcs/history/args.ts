/**
 * Argument parsing shared by the git subcommands: options, revisions and `-- paths`, with errors
 * that name the option and list what the subcommand accepts.
 */
import { shedError } from '../../../base/errors.js';
import { normalizeRelative } from '../../../base/paths/resolve.js';
import type { Zone } from '../../../base/zones/zones.js';

export interface GitOutput {
  stdout: string;
  stderr: string;
  returncode: number;
  /** Short id of the commit the subcommand made (restore/checkout). */
  commit?: string;
}

export const ok = (stdout: string, stderr = ''): GitOutput => ({ stdout, stderr, returncode: 0 });
export const fail = (stderr: string, returncode = 128): GitOutput => ({ stdout: '', stderr, returncode });

/** Splits args at `--`: what comes after is always paths. */
export function splitDashDash(args: string[]): { before: string[]; paths: string[] | undefined } {
  const i = args.indexOf('--');
  return i < 0 ? { before: args, paths: undefined } : { before: args.slice(0, i), paths: args.slice(i + 1) };
}

/** A path argument, zone-relative (normalised by the path resolver's rules: no escape, no control characters). */
export function pathArg(zone: Pick<Zone, 'name' | 'label'>, text: string): string {
  return normalizeRelative(text, zone, { param: 'args', allowZoneInPath: true });
}

export function badOption(sub: string, option: string, supported: string): Error {
  return shedError('INVALID_PARAMETER', `git ${sub} does not support the option '${option}' here. Supported: ${supported}.`, {
    details: { parameter: 'args', received: option },
    hint: `Example: shed_exec(zone="documents", cmd="git", args=["${sub}"${sub === 'log' ? ', "--oneline", "-n", "10"' : ''}])`,
  });
}

/** Reads a count option: -n N, -nN, -N, --max-count=N, --max-count N. Returns how many args it used, or 0. */
export function countOption(sub: string, args: string[], i: number): { used: number; value: number } | undefined {
  const a = args[i]!;
  let text: string | undefined;
  let used = 1;
  if (a === '-n' || a === '--max-count') {
    text = args[i + 1];
    used = 2;
  } else if (a.startsWith('--max-count=')) text = a.slice('--max-count='.length);
  else if (/^-n\d+$/.test(a)) text = a.slice(2);
  else if (/^-\d+$/.test(a)) text = a.slice(1);
  else return undefined;
  if (text === undefined || !/^\d+$/.test(text)) {
    throw shedError('INVALID_PARAMETER', `git ${sub} ${a} needs a number of commits, got ${text === undefined ? 'nothing' : `'${text}'`}.`, {
      details: { parameter: 'args', received: a },
      hint: `Example: shed_exec(zone="documents", cmd="git", args=["${sub}", "-n", "5"])`,
    });
  }
  return { used, value: Number(text) };
}
