/**
 * Asks the installed programs how they parse their arguments, for exec-arity.test.ts: which
 * options each lists (its --help), whether each takes no value, a required value or an optional
 * one (glibc getopt's own messages when given the option alone, `=VALUE` or an attached value),
 * whether `--` ends the options and whether options may follow an operand. Every run happens in a
 * scratch folder with standard input empty, C locale, a private HOME/TMPDIR and a short timeout.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export type Arity = 'none' | 'required' | 'optional';
/** What a probe learns: an arity, or that the program stops at the option itself (--help, -V print and exit before reading further). */
export type Probed = Arity | 'exits';

export const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-arity-'));
fs.writeFileSync(path.join(scratch, 'f'), 'x\n');

/** Runs `cmd args` in the scratch folder; resolves to stdout and stderr joined (the first `max` characters). */
export function run(cmd: string, args: string[], max = 4000): Promise<string> {
  return new Promise((resolve) => {
    const env = { PATH: '/usr/local/bin:/usr/bin:/bin', LC_ALL: 'C', HOME: scratch, TMPDIR: scratch };
    const child = spawn(cmd, args, { cwd: scratch, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 5000 });
    let out = '';
    // Cut at exactly `max`: how a long help text arrives in chunks (the machine's load) must not change the answer.
    const take = (b: Buffer) => {
      if (out.length < max) out = (out + b.toString('latin1')).slice(0, max);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', () => resolve(out));
    child.on('close', () => resolve(out));
  });
}

/** Runs jobs with a few at a time (the machine is shared). */
export async function pool<T, R>(items: readonly T[], width: number, job: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const k = next++;
        out[k] = await job(items[k]!);
      }
    }),
  );
  return out;
}

/** The program parses with glibc getopt_long (or argp): it names an unknown long option in getopt's words. */
export async function usesGetopt(cmd: string): Promise<boolean> {
  return /unrecognized option '--zz-probe'/.test(await run(cmd, ['--zz-probe']));
}

/**
 * Option spellings in GNU --help output: the option column of each line (up to the description,
 * two or more spaces on), e.g. "  -f, --file=ARCHIVE", "      --exclude-vcs".
 */
export function helpOptions(help: string): string[] {
  const out = new Set<string>();
  for (const line of help.split('\n')) {
    const m = /^\s{1,12}(-.*?)(?:\s{2,}|\t|$)/.exec(line);
    if (m) for (const t of m[1]!.matchAll(/(?:^|[\s,/])(-[A-Za-z0-9])\b/g)) out.add(t[1]!);
    // Long names anywhere on the line (a description naming another option names a real one too).
    for (const t of line.matchAll(/(?:^|[\s,/[(])(--[A-Za-z0-9][A-Za-z0-9-]*)/g)) out.add(t[1]!);
  }
  return [...out];
}

/** How getopt reads option `opt` of `cmd`, from its own error messages; undefined if it does not know the option. */
export async function getoptArity(cmd: string, opt: string): Promise<Probed | undefined> {
  if (opt.startsWith('--')) {
    const eq = await run(cmd, [`${opt}=%`]);
    if (/unrecognized option|is ambiguous/.test(eq)) return undefined;
    if (/doesn't allow an argument/.test(eq)) return 'none';
    return /requires an argument/.test(await run(cmd, [opt])) ? 'required' : 'optional';
  }
  const letter = opt[1]!;
  const alone = await run(cmd, [opt]);
  if (new RegExp(`invalid option -- '?${escape(letter)}'?`).test(alone)) return undefined;
  if (new RegExp(`requires an argument -- '?${escape(letter)}'?`).test(alone)) return 'required';
  const attached = await run(cmd, [`${opt}%`]);
  if (/invalid option -- '?%'?/.test(attached)) return 'none';
  // The same answer with or without the attached character, which it never mentions: the program acted on the option and stopped.
  return attached === alone && !attached.includes('%') ? 'exits' : 'optional';
}

const escape = (c: string) => c.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

/** `--` ends the options: an unknown option after it is an operand, not an error. */
export async function dashDashEnds(cmd: string): Promise<boolean> {
  return !/unrecognized option|invalid option/.test(await run(cmd, ['--', '--zz-probe']));
}

/** Options may follow an operand (GNU permutation): an unknown option after one is still an error. */
export async function permutes(cmd: string, operand: string): Promise<boolean> {
  return /unrecognized option/.test(await run(cmd, [operand, '--zz-probe']));
}

/**
 * Options from usage text that writes values after the option: `-F fs` (required), `-d[file]`
 * (optional, attached), `--name=value` / `--name[=value]`, `-word ARG` for word options.
 */
export function usageArities(text: string, words = false): Map<string, Arity> {
  const out = new Map<string, Arity>();
  for (const line of text.split('\n')) {
    for (const m of line.matchAll(/(?:^|[\s,|])(--?[A-Za-z0-9][A-Za-z0-9_-]*)(\[=?|=| (?=[A-Za-z'<{[+/-]))?/g)) {
      const [, name, after] = m;
      if (!name || out.has(name)) continue;
      if (!words && !name.startsWith('--') && name.length > 2) continue; // a word in a description
      let arity: Arity = 'none';
      if (after?.startsWith('[')) arity = 'optional';
      else if (after === '=') arity = 'required';
      else if (after === ' ') {
        const rest = line.slice(m.index + m[0].length);
        // A value placeholder: a lowercase or uppercase word, a quoted text, [set], {a,b}, not another option.
        arity = /^(?!-)(['<{[+/A-Za-z])/.test(rest) && !/^(and|or|to|the|a|if|is|for|with|of|in|on|as|when)\b/.test(rest) ? 'required' : 'none';
      }
      out.set(name!, arity);
    }
  }
  return out;
}
