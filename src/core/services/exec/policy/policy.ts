/**
 * The argument policy (SPEC section 8): the second wall, applied in every sandbox mode. Generic
 * checks on every argument, plus the per-command rules of rules.ts. It never rewrites what the
 * user meant; it refuses with an error that says why and what to do instead.
 */
import { ShedError, shedError, showValue } from '../../../base/errors.js';
import { walkInside } from '../../../base/paths/walk.js';
import type { Zone } from '../../../base/zones/zones.js';
import { BLACKLIST, DOWNLOADERS, MEDIA_NETWORK, READONLY_COMMANDS, READWRITE_COMMANDS } from './commands.js';
import { existsInside, expandGlob, isGlob, MAX_EXPANSION, noMatch, type Expansion } from './globs.js';
import { parseArgs } from './parse.js';
import type { OperandToken, OptionToken, Parsed } from './parsed.js';
import { ruleFor, type CommandRule } from './rules.js';
import { scanScript } from './scripts.js';
import { hiddenFromGlobs } from './sensitive.js';
import type { SandboxMode } from '../modes.js';
import { serverPathHint, serverPathReason } from './serverpaths.js';

export type NetworkMode = 'disabled' | 'safe' | 'all';
export type { SandboxMode };

export interface PolicyInput {
  cmd: string;
  args: readonly string[];
  zone: Zone;
  /** Read-only view of the zone (Uploads). */
  readonly: boolean;
  network: NetworkMode;
  sandbox: SandboxMode;
}

export interface Policy {
  /** Arguments to run with (the user's, after any fixed prefix such as tar --force-local). */
  argv: string[];
  /** The user's arguments as they will run: glob patterns expanded, tar's old style rewritten, no prefix. */
  args: string[];
  /** The glob patterns expanded, with the names each became. */
  expanded: Expansion[];
  /** Remove links leading outside the zone before the command runs (it may follow them; no sandbox). */
  sweepBefore: boolean;
  /** Remove links leading outside the zone after the command (it may have created some). */
  sweepAfter: boolean;
  /** The command may use the network (so the sandbox keeps it). */
  network: boolean;
  /** Option names as the user wrote them (-o, --output, --out): what the call asked for, for later rules. */
  options: string[];
}

const URL_RE = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
/** A scheme prefix without slashes (curl accepts file:/etc/passwd). */
const SCHEME_RE = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const URL_SCHEMES = ['http', 'https', 'ftp', 'ftps'];
const GIT_URL_SCHEMES = [...URL_SCHEMES, 'git'];
const SHELL_CHARS = /[;|&`<>]|\$[({]/;

const GIT_READ = ['status', 'log', 'show', 'diff', 'branch', 'tag', 'blame', 'ls-files', 'ls-tree', 'shortlog', 'reflog', 'describe', 'rev-parse', 'rev-list', 'cat-file', 'grep'];
const GIT_WRITE = ['add', 'commit', 'reset', 'restore', 'checkout', 'switch', 'rm', 'mv', 'revert', 'cherry-pick', 'stash', 'clean', 'init', 'merge'];
const GIT_NETWORK_SAFE = ['clone', 'fetch', 'pull', 'submodule'];

const forbidden = (arg: string, reason: string, hint: string) =>
  shedError('ARGUMENT_FORBIDDEN', `Argument ${showValue(arg)} is not allowed: ${reason}.`, { details: { parameter: 'args', argument: arg, reason }, hint });

/** What the checks of one argument list have seen so far. */
interface Walk {
  input: PolicyInput;
  rule: CommandRule;
  /** Program texts seen, in order (sed and awk join several -e into one program). */
  scripts: string[];
  network: boolean;
}

export function checkCommand(input: PolicyInput): Policy {
  const { cmd } = input;
  checkProgram(input);
  const rule = ruleFor(cmd);
  if (rule.sandboxOnly && input.sandbox === 'validated') {
    throw shedError('COMMAND_FORBIDDEN', `${cmd} can only run in a kernel sandbox (bwrap or landlock), and this server runs commands with argument checks alone: ${rule.sandboxOnly}.`, {
      details: { parameter: 'cmd', received: cmd, sandbox: input.sandbox },
      hint: 'shed_allowed_commands() shows the sandbox mode; an admin can set the valve sandbox="auto" on a server with bubblewrap or Landlock.',
    });
  }
  const leak = input.sandbox === 'bwrap' ? undefined : serverPathReason(cmd, input.args);
  if (leak) {
    throw shedError(cmd === 'pwd' || cmd === 'df' ? 'COMMAND_FORBIDDEN' : 'ARGUMENT_FORBIDDEN', `${leak}, and without the bubblewrap sandbox that is where the server stores your files, which commands may not reveal.`, {
      details: { parameter: cmd === 'pwd' || cmd === 'df' ? 'cmd' : 'args', received: [cmd, ...input.args].join(' '), sandbox: input.sandbox },
      hint: serverPathHint(cmd),
    });
  }
  for (const arg of input.args) if (arg.includes('\0')) throw forbidden(arg, 'it contains a NUL byte', 'Remove the NUL byte.');
  const w: Walk = { input, rule, scripts: [], network: DOWNLOADERS.has(cmd) };
  if (cmd === 'git') w.network = checkGit(input);
  let parsed = parseArgs(rule, input.args);
  checkOperators(input, rule, parsed, operandRoles(rule, parsed));
  const expanded = expandOperands(input, rule, parsed);
  if (expanded.length > 0) parsed = parseArgs(rule, expanded.args);
  // Separators and patterns given to options (cut -d '|', sort -t ';') are text for the program itself.
  const patterns = new Set(parsed.options.filter((o) => o.valueKind === 'pattern').map((o) => o.valueIndex ?? o.index));
  parsed.args.forEach((arg, i) => patterns.has(i) || checkCharacters(arg, rule, cmd));
  const amb = parsed.ambiguous[0];
  if (amb) {
    throw forbidden(amb.written, `${cmd} reads ${amb.written} as an abbreviation of several options (${amb.candidates.join(', ')})`, `Write the option in full, e.g. ${amb.candidates[0]}.`);
  }
  for (const opt of parsed.options) checkOption(w, opt);
  const roles = operandRoles(rule, parsed);
  parsed.operands.forEach((op, k) => checkOperand(w, op, roles[k]!));
  // After the path checks (a response file outside the zone is a PATH_ESCAPE): its contents stay unchecked.
  if (rule.responseFiles && input.sandbox === 'validated') {
    const at = parsed.args.find((a) => a.startsWith('@'));
    if (at !== undefined) {
      throw forbidden(at, `${cmd} reads more arguments from the file named after @ (a response file), and the names in it cannot be checked without the sandbox`, `Name the files as arguments instead, e.g. shed_exec(zone="storage", cmd="${cmd}", args=["file.bin"]); a file whose name starts with @ is ./@name.`);
    }
  }
  if (rule.script && w.scripts.length > 1 && (rule.script === 'sed' || rule.script === 'awk')) {
    const joined = w.scripts.join('\n');
    const reason = scanScript(rule.script, joined);
    if (reason) throw forbidden(joined, reason, scriptHint(cmd));
  }
  if (input.readonly && rule.outputOperands !== undefined && parsed.operands.length > rule.outputOperands) {
    const out = parsed.operands[rule.outputOperands]!.text;
    throw forbidden(out, `${cmd} writes its operand ${rule.outputOperands + 1} (${showValue(out)}; \`-\` counts as an operand, standard input), and ${input.zone.label} is read-only`, READONLY_HINT);
  }
  const reason = rule.check?.(parsed);
  if (reason) throw forbidden(parsed.args.join(' '), reason, `Run shed_help(howto="commands") for what ${cmd} may do here.`);
  if (input.readonly && rule.readonlyCheck) {
    const why = rule.readonlyCheck(parsed);
    if (why) throw forbidden(parsed.args.join(' '), `${why}, and ${input.zone.label} is read-only`, READONLY_HINT);
  }
  const args = [...parsed.args];
  const argv = [...(rule.prefixArgs ?? []), ...(input.readonly ? (rule.readonlyPrefix ?? []) : []), ...args];
  const makesLinks = rule.makesLinks === true && !input.readonly;
  return {
    argv,
    args,
    expanded: expanded.list,
    // Read-only zones too: a link left there earlier (an upload, an old extraction) must not lead diff -r or zip out.
    sweepBefore: input.sandbox !== 'bwrap' && (makesLinks || rule.followsLinks === true),
    sweepAfter: makesLinks,
    network: w.network,
    options: parsed.options.map((o) => o.written),
  };
}

/** A URL: allowed only for commands that use the network, in the network mode set, with a plain scheme; `option` is the option it is the value of. */
function checkUrl(w: Walk, url: string, option: string | undefined): void {
  const { input } = w;
  const cmd = input.cmd;
  const urlsAllowed = input.network !== 'disabled' && (DOWNLOADERS.has(cmd) || MEDIA_NETWORK.has(cmd) || cmd === 'git');
  if (!urlsAllowed) {
    throw forbidden(url, input.network === 'disabled' ? 'network access is disabled on this server' : `${cmd} may not use URLs`, 'Ask the admin to set network_mode="safe" to download with curl -o or wget -O.');
  }
  const scheme = SCHEME_RE.exec(url)![1]!.toLowerCase();
  if (!(cmd === 'git' ? GIT_URL_SCHEMES : URL_SCHEMES).includes(scheme)) {
    throw forbidden(url, `the URL scheme "${scheme}:" is not allowed (only ${URL_SCHEMES.join(', ')})`, 'Download with an https:// URL.');
  }
  if (cmd === 'ffmpeg' && input.network === 'safe' && option !== '-i') {
    throw forbidden(url, 'in network_mode "safe" ffmpeg may read from URLs (-i) but not send output to them', 'Write the output to a file in the zone.');
  }
  w.network = true;
}

/** What each operand is to the program: program text, plain text, a file of the zone, or a name inside an archive. */
type Role = 'program' | 'text' | 'path' | 'member';

function operandRoles(rule: CommandRule, parsed: Parsed): Role[] {
  const scriptGiven = parsed.options.some((o) => o.valueKind === 'script' || o.valueKind === 'scriptFile');
  const noScript = parsed.options.some((o) => rule.noScriptWith?.includes(o.name));
  const members = rule.members?.(parsed) === true;
  return parsed.operands.map((op, k): Role => {
    if (op.member) return 'member';
    const textual = k >= (rule.textFrom ?? 0) && (rule.textPositionals === 'all' || (!scriptGiven && !noScript && k < (rule.textPositionals ?? 0)));
    if (textual) return rule.script ? 'program' : 'text';
    return members ? 'member' : 'path';
  });
}

function checkOperand(w: Walk, op: OperandToken, role: Role): void {
  const { rule, input } = w;
  if (role !== 'path' && role !== 'member' && URL_RE.test(op.text)) checkUrl(w, op.text, undefined); // program text too: only network commands take URLs
  if (role === 'program') {
    const reason = rule.script ? scanScript(rule.script, op.text) : undefined;
    if (reason) throw forbidden(op.text, reason, scriptHint(input.cmd));
    w.scripts.push(op.text);
    return;
  }
  if (role === 'text') return;
  checkPathValue(w, op.text, undefined);
}

/** Checks one option as the program reads it, and its value by what the value is. */
function checkOption(w: Walk, opt: OptionToken): void {
  const { rule, input } = w;
  const names = new Set([opt.written, opt.name]);
  if (rule.wordOptions) names.add(opt.name.split(':')[0]!); // ffmpeg stream specifiers: -c:v
  for (const name of names) refuseOption(w, name, opt.long, opt.shown);
  const value = opt.value;
  if (value === undefined) return;
  switch (opt.valueKind) {
    case 'script': {
      const reason = rule.script ? scanScript(rule.script, value) : undefined;
      if (reason) throw forbidden(value, reason, scriptHint(input.cmd));
      w.scripts.push(value);
      return;
    }
    case 'scriptFile':
    case 'path':
    case 'output':
    case 'optional':
    case 'unknown':
      return checkPathValue(w, value, opt.shown);
    case 'name':
      return checkNamePart(w, opt.name, value, opt.shown);
    case 'text':
      return checkTextValue(w, opt, value);
    case 'pattern':
    case 'pair':
    case 'none':
      if (URL_RE.test(value)) checkUrl(w, value, opt.name);
      if (rule.atFiles) checkPrefixed(w, value, opt.shown);
      return;
  }
}

/** The entry of `list` that option `name` selects: itself or, for --long options, a prefix of it (getopt accepts abbreviations). */
function pick(list: readonly string[] | undefined, name: string, long: boolean): string | undefined {
  if (!list) return undefined;
  if (list.includes(name)) return name;
  if (long && name.length >= 3) return list.find((opt) => opt.startsWith('--') && opt.startsWith(name));
  return undefined;
}

/** Refuses an option that is forbidden here (in this zone, network mode or sandbox mode). */
function refuseOption(w: Walk, name: string, long: boolean, shown: string): void {
  const { rule, input } = w;
  const cmd = input.cmd;
  const hint = `Run shed_help(howto="commands") for what ${cmd} may do here.`;
  let hit = pick(rule.forbid, name, long);
  if (!hit && !long && !rule.wordOptions && name.length === 2 && rule.forbidLetters?.includes(name[1]!)) hit = name;
  if (hit) throw forbidden(shown, `${cmd} ${hit} can run programs or read/write outside the zone`, hint);
  hit = input.readonly ? (pick(rule.forbidReadonly, name, long) ?? pick(rule.outputOptions, name, long)) : undefined;
  if (hit) throw forbidden(shown, `${cmd} ${hit} writes files, and ${input.zone.label} is read-only`, READONLY_HINT);
  hit = input.network === 'safe' ? pick(rule.forbidNetworkSafe, name, long) : undefined;
  if (hit) throw forbidden(shown, `in network_mode "safe" ${cmd} may only download (GET); ${hit} sends data`, 'Download with a plain GET, e.g. args=["-L", "-o", "data.json", "https://example.com/data.json"].');
  // Under Landlock a link or a listed name leading outside is refused by the kernel.
  if (input.sandbox === 'validated') {
    hit = pick(rule.dereference, name, long);
    if (hit) throw forbidden(shown, `${cmd} ${hit} follows symbolic links, which could lead outside the zone without the sandbox`, 'Run without this option.');
    hit = pick(rule.listsFiles, name, long);
    if (hit) throw forbidden(shown, `${cmd} ${hit} reads file names from a file, and those names cannot be checked without the sandbox`, 'Name the files as arguments instead.');
  }
}

/**
 * A plain value (a number, a charset, a name, a date) that the program does not document as a
 * file can still be opened as one (glibc iconv reads a charset name holding a slash as a charmap
 * file): a value that could name a file is checked like a path. Values made of slashes only are
 * separators (cut -d /).
 */
function checkTextValue(w: Walk, opt: OptionToken, value: string): void {
  if (URL_RE.test(value)) return checkUrl(w, value, undefined);
  if (/^\/+$/.test(value)) return;
  try {
    checkPrefixed(w, value, opt.shown);
    checkPathArgument(w.input.zone, value, w.input.cmd, opt.shown);
  } catch (err) {
    if (!(err instanceof ShedError) || err.code !== 'PATH_ESCAPE') throw err;
    throw shedError('PATH_ESCAPE', `${err.message.replace(/\.$/, '')}: ${w.input.cmd} may open the value of ${opt.name} as a file, so it may not name one outside the zone.`, {
      details: err.details,
      hint: `Give ${opt.name} a plain value (a name or a number, without a leading / or ..) or a file inside the zone.`,
    });
  }
}

/** A value that becomes part of output file names (csplit -b, split --additional-suffix, backup suffixes). */
function checkNamePart(w: Walk, name: string, value: string, shown: string): void {
  if (!value.includes('/')) return;
  throw forbidden(shown, `the value of ${w.input.cmd} ${name} becomes part of output file names, and a slash in it would make it a path of its own (out of the zone with ../)`, 'Give folders in the output prefix or target instead, e.g. csplit -f parts/chunk -b "%02d.txt" in.txt 2.');
}

/** A value that names a file: checked like a path, and so is any path behind a prefix the program reads through. */
function checkPathValue(w: Walk, value: string, option: string | undefined): void {
  if (URL_RE.test(value)) return checkUrl(w, value, option);
  // curl accepts scheme prefixes without slashes (file:/etc/passwd).
  if (DOWNLOADERS.has(w.input.cmd) && SCHEME_RE.test(value)) return checkUrl(w, value.replace(SCHEME_RE, '$1://'), undefined);
  if (value === '-') return; // standard input or output
  checkPathArgument(w.input.zone, value, w.input.cmd, option);
  checkPrefixed(w, value, option ?? value);
}

/**
 * Paths behind a prefix: `file:PATH` (a file: URI, as sqlite3 and libxml2 open them), `@PATH`
 * (response and data files: binutils, curl -d @file), `name=@PATH` and `name=<PATH` (curl -F), and
 * `<PATH`. A program that does not read the prefix sees a harmless relative name; one that does
 * would open the path inside, so that path is checked too. For a command that reads `@file` forms
 * (`rule.atFiles`: curl), every `@` and `<` in a value starts one: curl reads `name@FILE`
 * (--url-query, --data-urlencode, --variable), `name=@"FILE"`, `headers=@FILE` and `type=...;x=<FILE`
 * (-F), besides the leading forms.
 */
function checkPrefixed(w: Walk, value: string, shown: string): void {
  for (const inner of innerPaths(value, w.rule.atFiles === true)) {
    if (inner === '' || inner === '-') continue;
    checkPathArgument(w.input.zone, inner, w.input.cmd, shown);
  }
}

function innerPaths(value: string, atAnywhere = false): string[] {
  const out: string[] = [];
  const uri = /^file:(.*)$/is.exec(value);
  if (uri) out.push(fileUriPath(uri[1]!));
  if (value.startsWith('@') || value.startsWith('<')) out.push(value.slice(1));
  const at = /=[@<](.*)$/s.exec(value);
  if (at) out.push(at[1]!);
  if (atAnywhere) {
    for (let i = value.search(/[@<]/); i >= 0; i = nextAt(value, i + 1)) out.push(...filePart(value.slice(i + 1)));
  }
  return out;
}

function nextAt(value: string, from: number): number {
  const j = value.slice(from).search(/[@<]/);
  return j < 0 ? -1 : from + j;
}

/** What curl may take as the file name after an `@` or `<`: a quoted name (backslash escapes), else the rest, and the rest up to a `;` (-F's separator). */
function filePart(rest: string): string[] {
  if (rest.startsWith('"')) {
    let name = '';
    for (let i = 1; i < rest.length && rest[i] !== '"'; i++) name += rest[i] === '\\' && i + 1 < rest.length ? rest[++i] : rest[i];
    return [name];
  }
  const semi = rest.indexOf(';');
  return semi < 0 ? [rest] : [rest, rest.slice(0, semi)];
}

/** The path of a file: URI the way SQLite reads it: `//localhost` or `//` authority dropped, query and fragment cut, %HH decoded. */
export function fileUriPath(rest: string): string {
  let p = rest.replace(/[?#].*$/s, '');
  if (p.startsWith('//')) {
    const slash = p.indexOf('/', 2);
    p = slash < 0 ? '/' : p.slice(slash); // the authority (empty or localhost) is dropped; the path that follows is absolute
  }
  return p.replace(/%([0-9A-Fa-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
}

/** Shell operators standing alone as arguments: there is no shell, so each is a mistake with a two-call answer. */
const PRINTERS = new Set(['echo', 'printf']);
const OPERATORS = new Set(['|', '||', '&&', ';', '&', '|&', '>', '>>', '<', '<<', '<<<', '1>', '1>>', '2>', '2>>', '2>&1', '>&', '&>', '&>>', '>&2', '1>&2']);

/**
 * A standalone `|`, `>`, `&&` ... reaches the program as a plain argument (awk then fails on a file
 * named "|" while `success` is true). It is refused with the calls that do what was meant, except
 * where the program's own language takes it as an operand (program text and patterns, expr, tr).
 */
function checkOperators(input: PolicyInput, rule: CommandRule, parsed: Parsed, roles: Role[]): void {
  if (rule.operatorOperands) return;
  parsed.operands.forEach((op, k) => {
    // Program text and patterns may be an operator (grep -F '|'); echo and printf would only print it back.
    const language = (roles[k] === 'program' || roles[k] === 'text') && !PRINTERS.has(input.cmd);
    if (!OPERATORS.has(op.text) || language) return;
    throw operatorError(input, parsed.args, op.index);
  });
}

function operatorError(input: PolicyInput, args: readonly string[], at: number) {
  const op = args[at]!;
  const before = args.slice(0, at);
  const after = args.slice(at + 1);
  const call = (cmd: string, list: readonly string[], extra = '') => `shed_exec(zone="${input.zone.name}", cmd="${cmd}", args=${JSON.stringify(list)}${extra})`;
  let what: string;
  let hint: string;
  if (op === '|' || op === '|&') {
    what = 'a pipe';
    const next = after[0] ?? 'sort';
    hint = `Use two calls: ${call(input.cmd, before, ', stdout_file="tmp.txt"')}, then ${call(next, [...after.slice(1), 'tmp.txt'])}.`;
  } else if (op === '>' || op === '1>' || op === '>>' || op === '1>>' || op === '&>' || op === '&>>' || op === '>&') {
    what = 'output redirection';
    const target = after[0] ?? 'out.txt';
    hint = `Save the output with stdout_file: ${call(input.cmd, before, `, stdout_file="${target}"${op.startsWith('&') || op === '>&' ? ', redirect_stderr_to_stdout=true' : ''}`)}${op.endsWith('>>') ? ' (it replaces the file; to append, save to a second file and join them with cat)' : ''}.`;
  } else if (op === '2>' || op === '2>>') {
    what = 'error redirection';
    hint = `Save the errors with stderr_file: ${call(input.cmd, before, `, stderr_file="${after[0] ?? 'errors.txt'}"`)}.`;
  } else if (op === '2>&1' || op === '>&2' || op === '1>&2') {
    what = 'stream redirection';
    hint = `Use redirect_stderr_to_stdout: ${call(input.cmd, [...before, ...after], ', redirect_stderr_to_stdout=true')}.`;
  } else if (op === '<' || op === '<<' || op === '<<<') {
    what = 'input redirection';
    hint = `Name the input file as an argument: ${call(input.cmd, [...before, ...after])}.`;
  } else {
    what = op === '&' ? 'a background job' : 'a command list';
    hint = `Run one command per call: ${call(input.cmd, before)}${after.length > 0 ? `, then ${call(after[0]!, after.slice(1))}` : ''}.`;
  }
  return shedError('ARGUMENT_FORBIDDEN', `Argument ${at + 1} is ${JSON.stringify(op)}, shell syntax for ${what}, but commands run without a shell: ${input.cmd} would get ${JSON.stringify(op)} as a plain argument.`, {
    details: { parameter: 'args', argument: op, position: at },
    hint,
  });
}

/**
 * Expands the glob patterns among the file operands (see globs.ts). A name that exists as written
 * is kept (a file may be called `a*b`); a pattern that matches nothing is an error; expanded names
 * starting with `-` or `@` get `./` so the program cannot take them for options or response files.
 */
function expandOperands(input: PolicyInput, rule: CommandRule, parsed: Parsed): { length: number; args: string[]; list: Expansion[] } {
  const roles = operandRoles(rule, parsed);
  const list: Expansion[] = [];
  const replace = new Map<number, string[]>();
  let budget = MAX_EXPANSION;
  parsed.operands.forEach((op, k) => {
    if (roles[k] !== 'path' || !isGlob(op.text) || URL_RE.test(op.text) || /^file:/i.test(op.text) || existsInside(input.zone.root, op.text)) return;
    const names = expandGlob(input.zone.root, op.text, budget, hiddenFromGlobs(input.zone));
    if (names === undefined) return; // outside the zone: the path check refuses it
    if (names.length === 0) throw noMatch(op.text, op.index);
    budget -= names.length;
    list.push({ pattern: op.text, names });
    // A name starting with - would be an option; with @, a response file (binutils reads its contents as arguments).
    replace.set(op.index, names.map((n) => (n.startsWith('-') || n.startsWith('@') ? `./${n}` : n)));
  });
  const args = parsed.args.flatMap((a, i) => replace.get(i) ?? [a]);
  return { length: list.length, args, list };
}

function checkProgram(input: PolicyInput): void {
  const { cmd } = input;
  if (!/^[A-Za-z0-9][A-Za-z0-9._+-]*$/.test(cmd)) {
    throw shedError('COMMAND_FORBIDDEN', `cmd must be a program name like "ls"; got ${showValue(cmd)}.`, {
      details: { parameter: 'cmd', received: cmd },
      hint: cmd.includes(' ') ? `Put the options in args: cmd="${cmd.split(' ')[0]}", args=${JSON.stringify(cmd.split(/\s+/).slice(1))}` : 'Example: shed_exec(zone="storage", cmd="ls", args=["-la"])',
    });
  }
  if (BLACKLIST.has(cmd)) {
    throw shedError('COMMAND_FORBIDDEN', `The command '${cmd}' is forbidden (shells, interpreters and system tools never run here).`, {
      details: { parameter: 'cmd', received: cmd },
      hint: 'shed_allowed_commands() lists what can run; files are written with shed_create_file or shed_patch_text.',
    });
  }
  if (DOWNLOADERS.has(cmd)) {
    if (input.network === 'disabled') {
      throw shedError('COMMAND_FORBIDDEN', `The command '${cmd}' is disabled: network access is off on this server (network_mode="disabled").`, {
        details: { parameter: 'cmd', received: cmd, network_mode: input.network },
        hint: 'Ask the admin to set network_mode="safe" to allow downloads. Files the user attached come in with shed_import.',
      });
    }
    return;
  }
  const list = input.readonly ? READONLY_COMMANDS : READWRITE_COMMANDS;
  if (!list.has(cmd)) {
    const writable = !input.readonly ? '' : READWRITE_COMMANDS.has(cmd) ? ` '${cmd}' changes files, and ${input.zone.label} is read-only.` : '';
    throw shedError('COMMAND_FORBIDDEN', `The command '${cmd}' is not in the whitelist of ${input.zone.label}.${writable}`, {
      details: { parameter: 'cmd', received: cmd, zone: input.zone.label },
      hint: writable
        ? 'Move the file to Storage first: shed_move_uploads_to_storage(src="file", dest="file"), then run the command with zone="storage".'
        : 'shed_allowed_commands() lists the allowed commands per zone.',
    });
  }
}

/** git outside versioned zones runs the real binary, only in a kernel sandbox (its repo config can run programs). */
function checkGit(input: PolicyInput): boolean {
  const sub = input.args[0];
  if (input.sandbox === 'validated') {
    throw shedError('COMMAND_FORBIDDEN', "git can only run in a kernel sandbox (bwrap or landlock), which is not active here: a repository's own configuration and hooks can run programs.", {
      details: { parameter: 'cmd', received: 'git', sandbox: input.sandbox },
      hint: 'Documents has built-in history: shed_exec(zone="documents", cmd="git", args=["log", "--oneline"]).',
    });
  }
  const all = [...GIT_READ, ...GIT_WRITE, ...GIT_NETWORK_SAFE, 'push', 'remote'];
  if (sub === undefined || !all.includes(sub)) {
    throw shedError('COMMAND_FORBIDDEN', `git ${sub === undefined ? 'needs a subcommand' : `subcommand '${sub}' is not allowed`}. Allowed: ${all.join(', ')}.`, {
      details: { parameter: 'args', received: sub },
      hint: 'Example: shed_exec(zone="storage", cmd="git", args=["-C", "repo", "log"]) is refused; use cwd-relative repos: args=["log", "--oneline"].',
    });
  }
  const needs = sub === 'push' ? 'all' : GIT_NETWORK_SAFE.includes(sub) || sub === 'remote' ? 'safe' : undefined;
  if (needs && (input.network === 'disabled' || (needs === 'all' && input.network !== 'all'))) {
    throw shedError('COMMAND_FORBIDDEN', `git ${sub} needs network_mode="${needs}" (it is "${input.network}").`, {
      details: { parameter: 'args', received: sub, network_mode: input.network },
      hint: 'Ask the admin to change network_mode.',
    });
  }
  return needs !== undefined;
}

function checkCharacters(arg: string, rule: CommandRule, cmd: string): void {
  if (arg.includes('\0')) throw forbidden(arg, 'it contains a NUL byte', 'Remove the NUL byte.');
  if (rule.textLanguage) return; // patterns, programs and formats legitimately contain these; scanners check the programs
  if (/[\n\r]/.test(arg)) throw forbidden(arg, 'it contains a line break', 'Pass one value per argument.');
  if (SHELL_CHARS.test(arg)) {
    throw forbidden(arg, `there is no shell here, so ; | & < > $( and backticks do nothing useful in ${cmd} arguments`, 'Run one command per call; to save output use stdout_file="out.txt" instead of >.');
  }
}

const READONLY_HINT = 'Move the file to Storage first: shed_move_uploads_to_storage(src="file", dest="file"), then use zone="storage".';

/**
 * A plain argument that may name a file: absolute paths, `..` escapes and links leading outside
 * are refused. Paths are relative to the zone root (the command's working folder).
 */
export function checkPathArgument(zone: Zone, value: string, cmd: string, option?: string): void {
  const escape = (why: string) =>
    shedError('PATH_ESCAPE', `Argument ${showValue(value)}${option && option !== value ? ` (in ${showValue(option)})` : ''} of ${cmd} ${why}.`, {
      details: { parameter: 'args', argument: option ?? value },
      hint: 'Commands run in the zone root: use relative paths such as "data/file.csv" (absolute paths and .. above the root are refused).',
    });
  if (value.startsWith('/')) throw escape('is an absolute path; paths are relative to the zone root');
  // Like every path parameter: '..' may never climb above the root on the text either, even to come back (../data).
  let depth = 0;
  for (const part of value.split('/')) {
    depth += part === '..' ? -1 : part !== '' && part !== '.' ? 1 : 0;
    if (depth < 0) throw escape('climbs above the zone root with ..');
  }
  // Then where the kernel really goes: links followed component by component, '..' applied to the folder reached.
  const walked = walkInside(zone.root, value, { followLast: true });
  if (!walked.inside) throw escape(walked.why);
}

function scriptHint(cmd: string): string {
  return `Use ${cmd} only to transform text; save results with stdout_file="out.txt" and edit files with shed_patch_text.`;
}

/** curl and wget must save to a file (the original's rule), judged by the options the policy parsed, not by substring. */
export function requireDownloadTarget(cmd: string, options: readonly string[], hasOutputFile: boolean): void {
  if (hasOutputFile || (cmd !== 'curl' && cmd !== 'wget')) return;
  const outputs = cmd === 'curl' ? ['-o', '--output', '-O', '--remote-name', '--remote-name-all', '--output-dir'] : ['-O', '--output-document', '-P', '--directory-prefix'];
  // Long options may be abbreviated (--out); short ones arrive one letter at a time (-sLo → -s -L -o).
  const hit = options.some((o) => outputs.includes(o) || (o.startsWith('--') && o.length >= 4 && outputs.some((full) => full.startsWith(o))));
  if (hit) return;
  throw shedError('ARGUMENT_REQUIRED', `${cmd} must save what it downloads to a file (${cmd === 'curl' ? '-o FILE' : '-O FILE'}).`, {
    details: { parameter: 'args', command: cmd },
    hint: cmd === 'curl' ? 'Example: shed_exec(zone="storage", cmd="curl", args=["-L", "-o", "data.json", "https://example.com/data.json"])' : 'Example: shed_exec(zone="storage", cmd="wget", args=["-O", "page.html", "https://example.com"])',
  });
}
