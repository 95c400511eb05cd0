/**
 * What the argument parser (parse.ts) makes of an argument list: options with their values and
 * what kind of value each is, and operands. The rules (rules.ts) judge it, the policy (policy.ts)
 * checks it; none of them reads the raw text again.
 */
/** What an option's value is, which decides how it is checked. */
export type ValueKind =
  /** A plain value (number, name, charset, date): checked as a path too when it could name one. */
  | 'text'
  /** A value in the program's own language (pattern, glob, format, display text): never a file. */
  | 'pattern'
  /** A file or folder the program reads. */
  | 'path'
  /** A file or folder the program writes. */
  | 'output'
  /** Part of an output file's name (no slash allowed). */
  | 'name'
  /** Program text (scanned). */
  | 'script'
  /** A file holding program text (checked as a path). */
  | 'scriptFile'
  /** Two values (jq --arg NAME VALUE). */
  | 'pair'
  /** An optional value, attached only: checked as a path (it often is one). */
  | 'optional'
  /** Nothing is known about it (an option the model does not list): an attached rest is checked as a path. */
  | 'unknown';

export interface OptionToken {
  kind: 'option';
  /** The option's name as the program resolves it (--dir → --directory when the model knows the long name). */
  name: string;
  /** The name as written (-x from a cluster, --dir). */
  written: string;
  long: boolean;
  /** Its value, if it has one (attached, or the next argument; pairs: the first of two). */
  value?: string;
  /** The second value of a pair. */
  value2?: string;
  valueKind: ValueKind | 'none';
  /** Index of the argument holding the option. */
  index: number;
  /** Index of the argument holding the value when it is separate. */
  valueIndex?: number;
  /** The whole argument, for messages. */
  shown: string;
}

export interface OperandToken {
  kind: 'operand';
  text: string;
  index: number;
  /** unzip: a member name (archive pattern) or an exclusion, not a file of the zone. */
  member?: boolean;
}

export interface Parsed {
  /** The arguments parsed (tar's old-style first argument already rewritten into options). */
  args: readonly string[];
  options: OptionToken[];
  operands: OperandToken[];
  /** Index of a `--` that ended the options, if any. */
  dashDash?: number;
  /** Long names that matched several options: the program refuses them; so do we. */
  ambiguous: { written: string; candidates: string[] }[];
}
