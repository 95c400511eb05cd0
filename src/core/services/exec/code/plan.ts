/**
 * Code execution (SPEC 8.1): what a script of shed_run_python or shed_run_shell needs beyond a
 * command, for the one executor (execute.ts), which runs it with every other step of a command
 * (blocked entries set aside, group files guarded, quota watch and undo, limits, priority, capture,
 * one commit). The argument policy cannot judge a script, so the kernel is the only wall, and a
 * script runs only where every protection is the kernel's:
 *
 * - bwrap or landlock mode (validated: SANDBOX_UNAVAILABLE); in landlock mode Landlock ABI 6 or
 *   later, whose scopes keep its signals and abstract sockets among its own processes (in bwrap its
 *   own PID namespace does that);
 * - its executable set (Landlock's EXECUTE right): Python only its interpreter and the dynamic loader
 *   that starts it; the shell only `sh` and the zone's whitelisted programs, each with what starts it
 *   and its helpers, never one whose chain holds another interpreter (yq runs python3, exiftool perl:
 *   either would run any code); curl and wget too when the network is on;
 * - the network only when network_mode is "all" ("safe" allows downloads by programs the policy
 *   reads, which a script is not: it counts as off), and then only IPv4 and IPv6 sockets (seccomp.ts);
 * - its code in the call's private temp folder (written by the launcher, never in the zone), an
 *   environment of its own (below), and the memory of all its processes bounded together.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../../../base/errors.js';
import { listSliced } from '../../../base/fs/list.js';
import { TimeSlice } from '../../../base/fs/slice.js';
import type { Valves } from '../../../base/valves.js';
import { GIT_ENVIRONMENT } from '../launcher/callenv.js';
import { BLACKLIST, DOWNLOADERS, READONLY_COMMANDS, READWRITE_COMMANDS } from '../policy/commands.js';
import { executablesFor } from '../launcher/executables.js';
import type { Policy } from '../policy/policy.js';
import type { RunRequest } from '../launcher/run-types.js';
import type { SandboxStatus } from '../launcher/sandbox.js';
import { findProgram, SYSTEM_PATH } from '../launcher/system.js';

export type ScriptKind = 'python' | 'shell';

export interface ScriptRequest {
  kind: ScriptKind;
  /** Python code, or the shell script: written to the call's temp folder. */
  code?: string;
  /** Python: a .py file of the zone, zone-relative, already resolved by the path rules (instead of code). */
  path?: string;
  /** Python: sys.argv[1:]. */
  args?: readonly string[];
}

/** What the executor runs for a script, in place of what the argument policy gives a command. */
export interface ScriptPlan {
  /** The interpreter as named in messages. */
  cmd: string;
  program: string;
  policy: Policy;
  executables: readonly string[];
  run: NonNullable<RunRequest['script']>;
}

/** Where the code lands in the call's temp folder: named so that tracebacks read /tmp/main.py, line N. */
export const SCRIPT_NAMES: Readonly<Record<ScriptKind, string>> = { python: 'main.py', shell: 'script.sh' };

/** The Landlock ABI whose scopes keep signals and abstract Unix sockets among a script's own processes. */
const SCOPED_ABI = 6;

/**
 * Python's environment beyond a command's (callenv.ts: empty HOME and TMPDIR, no user site, no
 * bytecode written): charts render to files, the script's folder (the zone root for code) is the
 * first place imports look, a crash prints where it happened, and numerical libraries run one thread
 * (the CPU is shared, and each thread counts toward the call's processes and memory).
 */
export function pythonEnvironment(importFolder: string): Record<string, string> {
  return {
    MPLBACKEND: 'Agg',
    PYTHONPATH: importFolder,
    PYTHONSAFEPATH: '1',
    PYTHONFAULTHANDLER: '1',
    OPENBLAS_NUM_THREADS: '1',
    OMP_NUM_THREADS: '1',
    MKL_NUM_THREADS: '1',
    NUMEXPR_NUM_THREADS: '1',
  };
}

/** Refuses a script where a protection would not be the kernel's. */
function requireKernelWall(fn: string, sandbox: SandboxStatus): void {
  if (sandbox.active === 'validated') {
    throw shedError('SANDBOX_UNAVAILABLE', `${fn} runs only in a kernel sandbox (bubblewrap or Landlock), and this server runs commands with argument checks alone (sandbox "validated"), which cannot judge a script.`, {
      details: { sandbox: sandbox.active },
      hint: 'An admin must set the valve sandbox to "auto" (or "bwrap"/"landlock") on a server where bubblewrap with unprivileged user namespaces, or Landlock (Linux 5.13 or later), works; shed_allowed_commands() shows the sandbox state. shed_exec runs whitelisted commands meanwhile.',
    });
  }
  if (sandbox.active === 'landlock' && (sandbox.landlockAbi ?? 0) < SCOPED_ABI) {
    throw shedError('SANDBOX_UNAVAILABLE', `${fn} needs Landlock ABI ${SCOPED_ABI} or later in landlock mode (this kernel has ABI ${sandbox.landlockAbi}): below it, a script could signal other processes of the server's user.`, {
      details: { sandbox: sandbox.active, landlock_abi: sandbox.landlockAbi },
      hint: 'An admin must run Linux 6.12 or later, or make bubblewrap work (unprivileged user namespaces) with the valve sandbox="auto" or "bwrap". shed_exec runs whitelisted commands meanwhile.',
    });
  }
}

function requirePython(valves: Valves): string {
  const found = findProgram(valves.python_command);
  if (found !== undefined) return found;
  throw shedError('COMMAND_NOT_FOUND', `Python (valve python_command="${valves.python_command}") is not installed on this server (looked for on ${SYSTEM_PATH}).`, {
    details: { valve: 'python_command', received: valves.python_command, package: 'python3' },
    hint: 'An admin can install the Debian package python3 (with python3-numpy python3-pandas python3-matplotlib python3-openpyxl for data work), or set python_command to the name of an installed Python.',
  });
}

/**
 * In a space other members write too (a group space), a script reads no code or configuration from
 * files another member made, unless the caller names that file (SPEC 11, "No member's code runs in
 * another member's call"):
 * - Python runs isolated (-I: no PYTHON* variables, no user site, neither the script's folder nor the
 *   working folder on sys.path), so a `sitecustomize.py`, `usercustomize.py`, a module shadowing
 *   `json` or its `__pycache__` at the group root or beside the script is never imported; `path=`
 *   runs the named file itself, and its neighbours import only if the caller's code puts their
 *   folder on sys.path (then it asked for them). The faulthandler is asked for by option (-X), as
 *   -I ignores the variable.
 * - git started by the shell script finds no repository by itself: GIT_DIR names a place that is no
 *   repository (its name says what to do), so a member-made `.git` (its config's diff.external,
 *   core.pager, filters, hooks, includeIf...) is never read, without judging any key. A script that
 *   wants a repository of the space names it (`git --git-dir=... ` or GIT_DIR=): it asked for it.
 *   `git diff --no-index` needs no repository and works.
 * In the caller's own zones (only they write there) a script imports its own modules beside it, as
 * before: PYTHONPATH is the script's folder (the zone root for code=), with the safe path on.
 */
export const GROUP_GIT_DIR = '/dev/null/no-repository-is-read-in-a-group-space-unless-named-with-git-dir';

/** Python's options: `shared` for a space other members write in. */
function pythonOptions(shared: boolean): string[] {
  // -s: no user site folder; -B: no bytecode written (imports of the zone's own modules included).
  return shared ? ['-I', '-B', '-X', 'faulthandler'] : ['-s', '-B'];
}

/**
 * The interpreter, its arguments, executables and environment for `s`, or the refusal that says
 * what is missing. `shared`: the zone is written by other members too (a group space).
 */
export async function planScript(s: ScriptRequest, valves: Valves, readonly: boolean, sandbox: SandboxStatus, shared = false): Promise<ScriptPlan> {
  const fn = s.kind === 'python' ? 'shed_run_python' : 'shed_run_shell';
  requireKernelWall(fn, sandbox);
  const network = valves.network_mode === 'all';
  const file = s.code !== undefined ? { name: SCRIPT_NAMES[s.kind], content: s.code } : undefined;
  if (s.kind === 'python') {
    const program = requirePython(valves);
    const options = pythonOptions(shared);
    const argv = [...options, ...(s.path !== undefined ? [s.path] : []), ...(s.args ?? [])];
    const importFolder = s.path !== undefined ? path.posix.dirname(s.path) : '.';
    const env = pythonEnvironment(importFolder);
    if (shared) delete env.PYTHONPATH; // ignored under -I all the same: no folder of the space is searched
    return {
      cmd: valves.python_command,
      program,
      policy: scriptPolicy(argv, network),
      executables: executablesFor(path.basename(program), program),
      run: { ...(file ? { file: { ...file, argAt: options.length } } : {}), env },
    };
  }
  const sh = findProgram('sh');
  if (sh === undefined) throw shedError('COMMAND_NOT_FOUND', 'The shell (sh) is not installed on this server.', { details: { package: 'dash' }, hint: 'An admin can install the Debian package dash.' });
  return {
    cmd: 'sh',
    program: sh,
    policy: scriptPolicy([], network),
    executables: await shellExecutables(sh, readonly, network),
    // git run by the script reads no system or global configuration, as a command's git; in a group
    // space it discovers no repository either.
    run: { ...(file ? { file: { ...file, argAt: 0 } } : {}), env: shared ? { ...GIT_ENVIRONMENT, GIT_DIR: GROUP_GIT_DIR } : GIT_ENVIRONMENT },
  };
}

/** A script's "policy": its arguments as given, and links it may leave swept afterwards (it can make any). */
function scriptPolicy(argv: string[], network: boolean): Policy {
  return { argv, args: argv, expanded: [], sweepBefore: false, sweepAfter: true, network, options: [] };
}

const shellCache = new Map<string, Promise<readonly string[]>>();

/**
 * What a shell script may execute: sh, and each whitelisted program of the zone (read-only list in
 * Uploads) with its chain (executables.ts), left out when that chain holds another interpreter.
 * Worked out once per process and kind of zone (about 25 ms the first time: it yields meanwhile).
 */
export function shellExecutables(sh: string, readonly: boolean, network: boolean): Promise<readonly string[]> {
  const key = `${sh}\0${readonly}\0${network}`;
  let list = shellCache.get(key);
  if (list === undefined) {
    list = collectShellExecutables(sh, readonly, network);
    shellCache.set(key, list);
    // A failure is not the answer for the rest of the process.
    list.catch(() => shellCache.delete(key));
  }
  return list;
}

async function collectShellExecutables(sh: string, readonly: boolean, network: boolean): Promise<readonly string[]> {
  const slice = new TimeSlice();
  const shell = new Set(executablesFor('sh', sh));
  const out = new Set(shell);
  for (const name of [...(readonly ? READONLY_COMMANDS : READWRITE_COMMANDS), ...(network ? DOWNLOADERS : [])]) {
    await slice.tick();
    const program = findProgram(name);
    if (program === undefined) continue;
    const chain = executablesFor(name, program);
    if (chain.some((p) => !shell.has(p) && isInterpreter(p))) continue;
    for (const p of chain) out.add(p);
  }
  return [...out];
}

/** A shell, interpreter or program starter of the blacklist (python3.11 → python, perl5.36 → perl). */
function isInterpreter(real: string): boolean {
  return BLACKLIST.has(path.basename(real).replace(/[\d.]+$/, ''));
}

/** The most files a script's group records (and the walk by change time behind them) take. */
export const SCRIPT_RECORDS_MAX = 10_000;

export interface ChangedFiles {
  /** Zone-relative paths of the files and links a call created or changed that exist now (a new folder: what it holds), sorted. */
  files: string[];
  /** False when there were more than the limit (or the watch could not tell what changed). */
  complete: boolean;
}

/**
 * The files behind a call's changed paths (a folder made during the call stands for all it holds:
 * its files are listed), without the ones it removed, at most `limit`; the walk yields to other
 * calls. `changed` [''] (the watch lost events, as thousands of new files make it): every file of
 * the zone whose inode changed since `sinceMs` (made, written, renamed or re-moded: the kernel's
 * change time, which no command can set back), or nothing when that moment is not given.
 */
export async function changedFiles(root: string, changed: readonly string[], limit = 200, sinceMs?: number): Promise<ChangedFiles> {
  const whole = changed.includes('');
  if (whole && sinceMs === undefined) return { files: [], complete: false };
  // A path may come twice: itself, and inside a new folder that is listed.
  const found = new Set<string>();
  const slice = new TimeSlice();
  const todo = whole ? [''] : [...changed];
  for (let i = 0; i < todo.length; i++) {
    await slice.tick();
    if (found.size >= limit) return { files: [...found].sort(), complete: false };
    const rel = todo[i]!;
    const abs = rel === '' ? root : path.join(root, rel);
    const st = fs.lstatSync(abs, { throwIfNoEntry: false });
    if (st === undefined) continue;
    if (!st.isDirectory()) {
      if (!whole || st.ctimeMs >= sinceMs!) found.add(rel);
      continue;
    }
    try {
      for (const e of await listSliced(abs, slice)) todo.push(rel === '' ? e.name : `${rel}/${e.name}`);
    } catch {
      // removed or replaced meanwhile
    }
  }
  return { files: [...found].sort(), complete: true };
}
