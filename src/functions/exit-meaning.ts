/**
 * Programs whose non-zero exit code is an answer, not a failure: grep finding no line, diff and cmp
 * finding a difference, test finding the condition false. Their answer says so instead of "FAILED ...
 * see stderr" over an empty stderr. Only the documented codes are read this way (grep 2 is an error).
 */

type Meaning = (args: readonly string[]) => string | undefined;

const NO_MATCH: Meaning = () => 'no line matched';

/** exit code 1 of each program, as its manual defines it. */
const EXIT_ONE: Record<string, Meaning> = {
  grep: NO_MATCH, egrep: NO_MATCH, fgrep: NO_MATCH, zgrep: NO_MATCH, rg: NO_MATCH, pdfgrep: NO_MATCH,
  diff: () => 'the files differ (the differences are in stdout)',
  cmp: () => 'the files differ',
  test: () => 'the condition is false',
  '[': () => 'the condition is false',
  expr: () => 'the expression is null or 0',
  false: () => 'false always ends so',
  sort: (args) => (args.some((a) => /^-[a-zA-Z]*[cC]/.test(a) || a === '--check' || a.startsWith('--check=')) ? 'the input is not sorted' : undefined),
};

/** A phrase for what `returncode` of `cmd` means when it is an answer rather than a failure. */
export function exitMeaning(cmd: string, args: readonly string[], returncode: number): string | undefined {
  if (returncode !== 1) return undefined;
  const meaning = EXIT_ONE[cmd];
  return meaning === undefined ? undefined : meaning(args);
}

/** The message's first sentence for a command that ended non-zero. */
export function exitStatus(cmd: string, args: readonly string[], returncode: number, signal: string | undefined | null): string {
  const meaning = signal ? undefined : exitMeaning(cmd, args, returncode);
  if (meaning !== undefined) return `${cmd} ended with exit code ${returncode}: ${meaning}; for ${cmd} that is an answer, not an error.`;
  return `${cmd} FAILED with exit code ${returncode}${signal ? ` (signal ${signal})` : ''}; see stderr.`;
}

/**
 * The program a shell script's exit code comes from: the first word of its last simple command (the
 * last line that is not a comment, after its last `|`, `&&`, `||` or `;`). Undefined when the end is
 * not a plain command (a `fi`, `done`, `}` or anything quoted): then nothing is guessed.
 */
export function lastCommand(script: string): { cmd: string; args: string[] } | undefined {
  const lines = script.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  const last = lines.at(-1);
  if (last === undefined || /["'`$\\(){}]/.test(last)) return undefined;
  const segment = last.split(/\|\||&&|[|;&]/).map((s) => s.trim()).filter((s) => s !== '').at(-1);
  const words = segment?.split(/\s+/).filter((w) => !/^[<>]|^\d?>/.test(w)) ?? [];
  const [cmd, ...args] = words;
  if (cmd === undefined || /^(fi|done|esac|exit|return|then|else)$/.test(cmd)) return undefined;
  return { cmd, args };
}

/** For a script that ended non-zero with an empty stderr: what its last command's code means, or ''. */
export function scriptExitNote(script: string | undefined, returncode: number, stderr: string): string {
  if (script === undefined || stderr.trim() !== '') return '';
  const last = lastCommand(script);
  const meaning = last === undefined ? undefined : exitMeaning(last.cmd, last.args, returncode);
  return meaning === undefined ? '' : ` Its last command, ${last!.cmd}, ended with exit code ${returncode}: ${meaning}; for ${last!.cmd} that is an answer, not an error.`;
}
