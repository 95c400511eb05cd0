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
