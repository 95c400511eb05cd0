/**
 * The argument policy (SPEC section 8): the second wall, applied in every sandbox mode. Generic
 * checks on every argument, plus the per-command rules of rules.ts. It never rewrites what the
 * user meant; it refuses with an error that says why and what to do instead.
 */
import { shedError, showValue } from '../errors.js';
import { walkInside } from '../paths/walk.js';
import type { Zone } from '../zones/zones.js';
import { BLACKLIST, DOWNLOADERS, MEDIA_NETWORK, READONLY_COMMANDS, READWRITE_COMMANDS } from './commands.js';
import { ruleFor, type CommandRule } from './rules.js';
import { scanScript } from './scripts.js';
import type { SandboxMode } from './sandbox.js';
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

/** What the parse of one argument list has seen so far. */
interface Walk {
  input: PolicyInput;
  rule: CommandRule;
  positional: number;
  /** The program text came from an option (-e, -f), so positionals are files. */
  scriptGiven: boolean;
  /** An option says there is no program text at all (rg --files). */
  noScript: boolean;
  /** Program texts seen, in order (sed and awk join several -e into one program). */
  scripts: string[];
  /** Positional operands in order (`-`, standard input, included): the command's signature says which are outputs. */
  operands: string[];
  options: string[];
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
  const w: Walk = { input, rule, positional: 0, scriptGiven: false, noScript: false, scripts: [], operands: [], options: [], network: DOWNLOADERS.has(cmd) };
  if (cmd === 'git') w.network = checkGit(input);
  const args = rule.oldStyleFirst ? expandOldStyle(input.args, rule.oldStyleFirst) : input.args;
  let afterDashDash = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    checkCharacters(arg, rule, cmd);
    if (URL_RE.test(arg)) {
      checkUrl(w, arg, i > 0 ? args[i - 1] : undefined);
      continue;
    }
    if (!afterDashDash && arg === '--') {
      afterDashDash = true;
      continue;
    }
    if (!afterDashDash && arg.startsWith('-') && arg.length > 1) {
      i += checkOption(w, arg, args[i + 1]);
      continue;
    }
    checkPositional(w, arg);
  }
  if (rule.script && w.scripts.length > 1 && (rule.script === 'sed' || rule.script === 'awk')) {
    const joined = w.scripts.join('\n');
    const reason = scanScript(rule.script, joined);
    if (reason) throw forbidden(joined, reason, scriptHint(cmd));
  }
  if (input.readonly && rule.outputOperands !== undefined && w.operands.length > rule.outputOperands) {
    const out = w.operands[rule.outputOperands]!;
    throw forbidden(out, `${cmd} writes its operand ${rule.outputOperands + 1} (${showValue(out)}; \`-\` counts as an operand, standard input), and ${input.zone.label} is read-only`, READONLY_HINT);
  }
  const reason = rule.check?.(args);
  if (reason) throw forbidden(args.join(' '), reason, `Run shed_help(howto="commands") for what ${cmd} may do here.`);
  if (input.readonly && rule.readonlyCheck) {
    const why = rule.readonlyCheck(args);
    if (why) throw forbidden(args.join(' '), `${why}, and ${input.zone.label} is read-only`, READONLY_HINT);
  }
  const argv = [...(rule.prefixArgs ?? []), ...(input.readonly ? (rule.readonlyPrefix ?? []) : []), ...args];
  const makesLinks = rule.makesLinks === true && !input.readonly;
  return {
    argv,
    sweepBefore: input.sandbox !== 'bwrap' && !input.readonly && (makesLinks || rule.followsLinks === true),
    sweepAfter: makesLinks,
    network: w.network,
    options: w.options,
  };
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

function checkUrl(w: Walk, url: string, previous: string | undefined): void {
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
  if (cmd === 'ffmpeg' && input.network === 'safe' && previous !== '-i') {
    throw forbidden(url, 'in network_mode "safe" ffmpeg may read from URLs (-i) but not send output to them', 'Write the output to a file in the zone.');
  }
  w.network = true;
}

function checkPositional(w: Walk, arg: string): void {
  const { rule, input } = w;
  w.operands.push(arg);
  if (isProgramText(w)) {
    if (rule.script) {
      const reason = scanScript(rule.script, arg);
      if (reason) throw forbidden(arg, reason, scriptHint(input.cmd));
      w.scripts.push(arg);
    }
  } else {
    // curl accepts scheme prefixes without slashes (file:/etc/passwd).
    if (DOWNLOADERS.has(input.cmd) && SCHEME_RE.test(arg)) checkUrl(w, arg.replace(SCHEME_RE, '$1://'), undefined);
    checkValuePath(w, arg);
  }
  w.positional++;
}

function isProgramText(w: Walk): boolean {
  const { rule } = w;
  if (w.positional < (rule.textFrom ?? 0)) return false;
  if (rule.textPositionals === 'all') return true;
  return !w.scriptGiven && !w.noScript && w.positional < (rule.textPositionals ?? 0);
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

/** Checks one option argument and the value it carries; returns how many following arguments it consumed. */
function checkOption(w: Walk, arg: string, next: string | undefined): number {
  const { rule } = w;
  if (rule.wordOptions) {
    const word = rule.doubleDashWords && arg.startsWith('--') ? arg.slice(1) : arg;
    const base = word.split(':')[0]!; // ffmpeg stream specifiers: -c:v
    for (const name of new Set([word, base])) refuseOption(w, name, false, arg);
    w.options.push(word);
    return takeValue(w, word, false, undefined, next, arg);
  }
  if (arg.startsWith('--')) {
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg : arg.slice(0, eq);
    refuseOption(w, name, true, arg);
    w.options.push(name);
    if (pick(rule.noScriptWith, name, true)) w.noScript = true;
    const attached = eq < 0 ? undefined : arg.slice(eq + 1);
    return takeValue(w, name, true, attached, next, arg);
  }
  refuseOption(w, arg, false, arg); // whole-word entries such as zip -TT
  return checkCluster(w, arg, next);
}

/**
 * A short option cluster (-rt/dir, -xzf, -n5): each letter is an option until one that takes a
 * value, which takes the rest of the cluster or the next argument. A letter we do not know may
 * take the rest as its value, so every rest that could be a path is checked as one.
 */
function checkCluster(w: Walk, arg: string, next: string | undefined): number {
  for (let k = 1; k < arg.length; k++) {
    const letter = arg[k]!;
    if (!/[A-Za-z0-9:^@#?]/.test(letter)) {
      checkAttached(w, arg.slice(k), arg); // not an option letter: a value attached to the previous one
      return 0;
    }
    const name = `-${letter}`;
    refuseOption(w, name, false, arg);
    w.options.push(name);
    const rest = arg.slice(k + 1);
    if (isValued(w.rule, name)) return takeValue(w, name, false, rest === '' ? undefined : rest, next, arg);
    if (rest !== '') checkAttached(w, rest, arg);
  }
  return 0;
}

function isValued(rule: CommandRule, name: string): boolean {
  return (
    (rule.scriptOptions ?? []).includes(name) ||
    (rule.pathOptions ?? []).includes(name) ||
    (rule.outputOptions ?? []).includes(name) ||
    (rule.nameOptions ?? []).includes(name) ||
    (rule.textOptions ?? []).includes(name) ||
    (rule.pairOptions ?? []).includes(name)
  );
}

/** Handles the value of option `name` (attached, or the next argument if the option takes one); returns the arguments consumed. */
function takeValue(w: Walk, name: string, long: boolean, attached: string | undefined, next: string | undefined, shown: string): number {
  const { rule, input } = w;
  const consumedNext = attached === undefined && next !== undefined ? 1 : 0;
  const value = attached ?? next;
  if (pick(rule.scriptOptions, name, long)) {
    w.scriptGiven = true;
    if (value === undefined) return 0;
    if (pick(rule.pathOptions, name, long)) checkValuePath(w, value, shown);
    else if (rule.script) {
      const reason = scanScript(rule.script, value);
      if (reason) throw forbidden(value, reason, scriptHint(input.cmd));
      w.scripts.push(value);
    }
    return consumedNext;
  }
  if (pick(rule.pathOptions, name, long) ?? pick(rule.outputOptions, name, long)) {
    if (value !== undefined) checkValuePath(w, value, shown);
    return consumedNext;
  }
  if (pick(rule.nameOptions, name, long)) {
    if (value !== undefined) checkNamePart(w, name, value, shown);
    return consumedNext;
  }
  if ((rule.textOptions ?? []).includes(name)) {
    if (value !== undefined) checkText(w, value);
    return consumedNext;
  }
  if ((rule.pairOptions ?? []).includes(name)) {
    if (attached !== undefined) return next !== undefined ? 1 : 0;
    return next === undefined ? 0 : 2;
  }
  if (attached !== undefined) checkAttached(w, attached, shown);
  return 0;
}

/** A text value: only what it could still name (a URL, an @file) is checked. */
function checkText(w: Walk, value: string): void {
  if (URL_RE.test(value)) checkUrl(w, value, undefined);
  if (w.rule.atFiles) checkAtFile(w, value);
}

/**
 * A value attached to an option we know nothing about, or an optional value (gawk -d[FILE], tar
 * --one-top-level[=DIR]): always checked as a path, since an optional value is often a file name and
 * a bare name can be a link leading out. A value that is not a path passes unchanged.
 */
function checkAttached(w: Walk, value: string, shown: string): void {
  if (URL_RE.test(value)) return checkUrl(w, value, undefined);
  if (DOWNLOADERS.has(w.input.cmd) && SCHEME_RE.test(value)) return checkUrl(w, value.replace(SCHEME_RE, '$1://'), undefined);
  checkPathArgument(w.input.zone, value, w.input.cmd, shown);
  if (w.rule.atFiles) checkAtFile(w, value);
}

/** A value that becomes part of output file names (csplit -b, split --additional-suffix, backup suffixes). */
function checkNamePart(w: Walk, name: string, value: string, shown: string): void {
  if (!value.includes('/')) return;
  throw forbidden(shown, `the value of ${w.input.cmd} ${name} becomes part of output file names, and a slash in it would make it a path of its own (out of the zone with ../)`, 'Give folders in the output prefix or target instead, e.g. csplit -f parts/chunk -b "%02d.txt" in.txt 2.');
}

/** A value that names a file: checked like a path (and its @file form). */
function checkValuePath(w: Walk, value: string, option?: string): void {
  if (URL_RE.test(value)) return checkUrl(w, value, undefined);
  if (value !== '-') checkPathArgument(w.input.zone, value, w.input.cmd, option);
  if (w.rule.atFiles) checkAtFile(w, value);
}

/** curl -d @file, -F name=@file or name=<file: the named file is read and sent. */
function checkAtFile(w: Walk, value: string): void {
  const m = /(?:^|=)[@<](.*)$/.exec(value);
  if (m && m[1] !== '' && m[1] !== '-') checkPathArgument(w.input.zone, m[1]!, w.input.cmd, value);
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
  // The history of a versioned zone is only changed through Fileshed (the sandbox mounts it read-only),
  // however the path reaches it (a/.git/HEAD with a -> .).
  if (zone.versioned && (walked.parts[0] === '.git' || value.split('/').filter((p) => p !== '' && p !== '.')[0] === '.git')) {
    throw shedError('PROTECTED_PATH', `Argument ${showValue(value)} of ${cmd} is inside .git, the history of ${zone.label}, which commands may not touch.`, {
      details: { parameter: 'args', argument: option ?? value },
      hint: `Use shed_exec(zone="${zone.name}", cmd="git", args=["log"]) to read the history.`,
    });
  }
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
