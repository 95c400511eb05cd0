/**
 * The one parser of the argument policy: it reads an argument list the way the program's own
 * option parser does, and every check (policy.ts, the rule checks of rules.ts, glob expansion)
 * works on its result, never on the raw text again. Four grammars cover the whitelist:
 *
 * - getopt (the default: GNU getopt_long and argp): short clusters (-xzf NAME, -n5), --long=VALUE,
 *   unambiguous --long prefixes, options anywhere until `--` (or, for `posix` programs, until the
 *   first operand), and per option an arity: no value, a required value (attached or the next
 *   argument) or an optional value (attached only).
 * - words (find, sqlite3, media tools): options are whole words after one dash; valued words take
 *   the next argument.
 * - unzip (unzip, zipinfo): option clusters before the archive (a `-` inside one negates the next
 *   letter, so `--` is not an end of options), then the archive, then member names where only
 *   `-x` (exclusions follow) and `-d DIR` mean something.
 *
 * Which option takes what is data in rules.ts, verified against the installed programs by
 * test/security/exec-arity.test.ts.
 */
import type { OptionToken, Parsed, ValueKind } from './parsed.js';
import type { CommandRule } from './rules.js';

/** The kind of value of option `name` in `rule` ('none' for a flag; undefined when the model does not list it). */
export function valueKindOf(rule: CommandRule, name: string): ValueKind | 'none' | undefined {
  if (rule.scriptOptions?.includes(name)) return rule.pathOptions?.includes(name) ? 'scriptFile' : 'script';
  if (rule.pairOptions?.includes(name)) return 'pair';
  if (rule.outputOptions?.includes(name)) return 'output';
  if (rule.pathOptions?.includes(name)) return 'path';
  if (rule.nameOptions?.includes(name)) return 'name';
  if (rule.patternOptions?.includes(name)) return 'pattern';
  if (rule.textOptions?.includes(name)) return 'text';
  if (rule.optionalOptions?.includes(name)) return 'optional';
  if (rule.flagOptions?.includes(name)) return 'none';
  if (rule.forbid?.includes(name)) return 'none'; // refused anyway
  return undefined;
}

/** Every long option the model names, for getopt's prefix matching. */
function longNames(rule: CommandRule): string[] {
  const lists = [rule.scriptOptions, rule.pairOptions, rule.outputOptions, rule.pathOptions, rule.nameOptions, rule.patternOptions, rule.textOptions, rule.optionalOptions, rule.flagOptions, rule.forbid, rule.forbidReadonly, rule.forbidNetworkSafe, rule.dereference, rule.listsFiles, rule.noScriptWith];
  const out = new Set<string>();
  for (const list of lists) for (const o of list ?? []) if (o.startsWith('--')) out.add(o);
  return [...out];
}

/**
 * getopt's long-name resolution: an exact name wins, else a prefix of exactly one option (or of
 * several that behave the same). Returns the name to use, or the candidates when ambiguous.
 */
export function resolveLong(rule: CommandRule, written: string): { name: string } | { ambiguous: string[] } {
  const names = longNames(rule);
  if (names.includes(written)) return { name: written };
  const hits = names.filter((n) => n.startsWith(written));
  if (hits.length === 0) return { name: written };
  const kinds = new Set(hits.map((h) => valueKindOf(rule, h) ?? 'none'));
  if (hits.length === 1 || kinds.size === 1) return { name: hits[0]! };
  return { ambiguous: hits };
}

export function parseArgs(rule: CommandRule, input: readonly string[]): Parsed {
  const args = rule.oldStyleFirst ? expandOldStyle(input, rule.oldStyleFirst) : input;
  if (rule.parser === 'unzip') return parseUnzip(rule, args);
  if (rule.parser === 'letter') return parseLetters(rule, args);
  const p: Parsed = { args, options: [], operands: [], ambiguous: [] };
  let optionsEnd = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!optionsEnd && arg === '--') {
      if (rule.dashDash === 'ignored') continue; // find: skipped, the parse goes on
      optionsEnd = true;
      p.dashDash = i;
      continue;
    }
    if (optionsEnd || arg === '-' || !arg.startsWith('-')) {
      p.operands.push({ kind: 'operand', text: arg, index: i });
      if (rule.posix) optionsEnd = true;
      continue;
    }
    i += rule.wordOptions ? parseWord(rule, p, args, i) : arg.startsWith('--') ? parseLong(rule, p, args, i) : parseCluster(rule, p, args, i);
  }
  return p;
}

/** Takes the value of a valued option: attached, or the next argument. Returns the arguments consumed beyond this one. */
function withValue(tok: OptionToken, kind: ValueKind, attached: string | undefined, args: readonly string[], i: number): number {
  tok.valueKind = kind;
  if (kind === 'optional' || kind === 'unknown') {
    if (attached !== undefined) tok.value = attached;
    return 0;
  }
  if (kind === 'pair') {
    const first = attached ?? args[i + 1];
    const second = attached !== undefined ? args[i + 1] : args[i + 2];
    if (first !== undefined) tok.value = first;
    if (second !== undefined) tok.value2 = second;
    return Math.min(attached !== undefined ? 1 : 2, args.length - i - 1);
  }
  if (attached !== undefined) {
    tok.value = attached;
    return 0;
  }
  if (i + 1 < args.length) {
    tok.value = args[i + 1]!;
    tok.valueIndex = i + 1;
    return 1;
  }
  return 0;
}

function parseWord(rule: CommandRule, p: Parsed, args: readonly string[], i: number): number {
  const arg = args[i]!;
  const word = rule.doubleDashWords && arg.startsWith('--') ? arg.slice(1) : arg;
  const base = word.split(':')[0]!; // ffmpeg stream specifiers: -c:v
  const kind = valueKindOf(rule, word) ?? valueKindOf(rule, base);
  const tok: OptionToken = { kind: 'option', name: word, written: word, long: false, valueKind: 'none', index: i, shown: arg };
  p.options.push(tok);
  return kind === undefined || kind === 'none' || kind === 'optional' || kind === 'unknown' ? 0 : withValue(tok, kind, undefined, args, i);
}

function parseLong(rule: CommandRule, p: Parsed, args: readonly string[], i: number): number {
  const arg = args[i]!;
  const eq = arg.indexOf('=');
  const written = eq < 0 ? arg : arg.slice(0, eq);
  const attached = eq < 0 ? undefined : arg.slice(eq + 1);
  const resolved = resolveLong(rule, written);
  if ('ambiguous' in resolved) p.ambiguous.push({ written, candidates: resolved.ambiguous });
  const name = 'name' in resolved ? resolved.name : written;
  const tok: OptionToken = { kind: 'option', name, written, long: true, valueKind: 'none', index: i, shown: arg };
  p.options.push(tok);
  const kind = valueKindOf(rule, name);
  if (kind === undefined || kind === 'none') {
    // A flag given a value: getopt refuses it, but a model that does not know the option cannot be sure.
    if (attached !== undefined) withValue(tok, 'unknown', attached, args, i);
    return 0;
  }
  return withValue(tok, kind, attached, args, i);
}

/**
 * A short option cluster (-rt/dir, -xzf, -n5): each letter is an option until one that takes a
 * value, which takes the rest of the cluster (or, if required and nothing is left, the next
 * argument). After a letter the model does not know, the rest is also checked as a value it
 * might take (a path check), while the letters go on being read as options.
 */
function parseCluster(rule: CommandRule, p: Parsed, args: readonly string[], i: number): number {
  const arg = args[i]!;
  if (rule.forbid?.includes(arg)) {
    p.options.push({ kind: 'option', name: arg, written: arg, long: false, valueKind: 'none', index: i, shown: arg }); // whole-word entries such as zip -TT
    return 0;
  }
  for (let k = 1; k < arg.length; k++) {
    const letter = arg[k]!;
    const rest = arg.slice(k + 1);
    if (!/[A-Za-z0-9:^@#?]/.test(letter)) {
      // Not an option letter: a value attached to the letter before (checked like one the model does not know).
      const last = p.options[p.options.length - 1];
      if (last && last.index === i && last.value === undefined) last.value = arg.slice(k), (last.valueKind = 'unknown');
      else p.options.push({ kind: 'option', name: '-', written: '-', long: false, value: arg.slice(k), valueKind: 'unknown', index: i, shown: arg });
      return 0;
    }
    const name = `-${letter}`;
    const tok: OptionToken = { kind: 'option', name, written: name, long: false, valueKind: 'none', index: i, shown: arg };
    p.options.push(tok);
    const kind = valueKindOf(rule, name);
    if (kind !== undefined && kind !== 'none' && kind !== 'unknown') return withValue(tok, kind, rest === '' ? undefined : rest, args, i);
    if (kind === undefined && rest !== '') {
      tok.value = rest;
      tok.valueKind = 'unknown';
    }
  }
  return 0;
}

/** tar czf out.tgz dir → -c -z -f out.tgz dir (each value letter takes the next argument, in order). */
function expandOldStyle(args: readonly string[], valueLetters: string): readonly string[] {
  const first = args[0];
  if (first === undefined || !/^[A-Za-z]+$/.test(first)) return args;
  const rest = args.slice(1);
  const out: string[] = [];
  for (const letter of first) {
    out.push(`-${letter}`);
    if (valueLetters.includes(letter) && rest.length > 0) out.push(rest.shift()!);
  }
  return [...out, ...rest];
}

/**
 * xxd's parser: options come before the first operand, one per argument, named by the letter after
 * the dash (-ps, -postscript and -plain are all -p); a valued one takes the rest of the argument
 * (unless it is the option's long spelling, -cols, -len) or the next argument.
 */
function parseLetters(rule: CommandRule, args: readonly string[]): Parsed {
  const p: Parsed = { args, options: [], operands: [], ambiguous: [] };
  let i = 0;
  for (; i < args.length && args[i]!.startsWith('-') && args[i] !== '-'; i++) {
    const arg = args[i]!;
    if (arg === '--') {
      p.dashDash = i++;
      break;
    }
    const name = `-${arg[1]!}`;
    const tok: OptionToken = { kind: 'option', name, written: arg, long: false, valueKind: 'none', index: i, shown: arg };
    p.options.push(tok);
    const kind = valueKindOf(rule, name);
    if (kind === undefined || kind === 'none' || kind === 'optional' || kind === 'unknown') continue;
    const spelled = rule.textOptions?.includes(arg) === true && arg.length > 2;
    i += withValue(tok, kind, arg.length > 2 && !spelled ? arg.slice(2) : undefined, args, i);
  }
  for (; i < args.length; i++) p.operands.push({ kind: 'operand', text: args[i]!, index: i });
  return p;
}

/**
 * unzip and zipinfo (Info-ZIP's own parser, unzip.c uz_opts and main): every argument starting
 * with `-` before the archive is a cluster of option letters, where `-` negates the next letter
 * and -d/-P take the rest or the next argument; the first other argument is the archive; after
 * it, `-d DIR`/`-dDIR` (once) is the extraction folder, `-x` starts the exclusions, and anything
 * else, dashes included, is a member name.
 */
function parseUnzip(rule: CommandRule, args: readonly string[]): Parsed {
  const p: Parsed = { args, options: [], operands: [], ambiguous: [] };
  let i = 0;
  for (; i < args.length && args[i]!.startsWith('-'); i++) {
    const arg = args[i]!;
    for (let k = 1; k < arg.length; k++) {
      const name = `-${arg[k]!}`;
      const tok: OptionToken = { kind: 'option', name, written: name, long: false, valueKind: 'none', index: i, shown: arg };
      p.options.push(tok);
      const kind = valueKindOf(rule, name);
      if (kind !== undefined && kind !== 'none' && kind !== 'optional' && kind !== 'unknown') {
        const rest = arg.slice(k + 1);
        i += withValue(tok, kind, rest === '' ? undefined : rest, args, i);
        break;
      }
    }
  }
  if (i >= args.length) return p;
  p.operands.push({ kind: 'operand', text: args[i]!, index: i });
  let exdir = p.options.some((o) => o.name === '-d');
  for (i++; i < args.length; i++) {
    const arg = args[i]!;
    if (!exdir && arg.startsWith('-d')) {
      exdir = true;
      const tok: OptionToken = { kind: 'option', name: '-d', written: '-d', long: false, valueKind: 'none', index: i, shown: arg };
      p.options.push(tok);
      i += withValue(tok, 'output', arg.length > 2 ? arg.slice(2) : undefined, args, i);
      continue;
    }
    if (arg === '-x') {
      p.options.push({ kind: 'option', name: '-x', written: '-x', long: false, valueKind: 'none', index: i, shown: arg });
      continue;
    }
    p.operands.push({ kind: 'operand', text: arg, index: i, member: true });
  }
  return p;
}
