/**
 * How a command is started in every sandbox mode: `perl -e LAUNCHER_SCRIPT -- ...` (the script in
 * launcher-script.ts) sets the limits and the priority in the process itself before the program
 * runs, so no process of the command ever runs unlimited or at the server's priority, and in
 * landlock mode applies the ruleset and the seccomp filter. Perl because perl-base is Essential on
 * every Debian and Ubuntu system (and in the Docker image): nothing to compile or install, and its
 * `syscall` builtin reaches Landlock, prctl and prlimit64 directly. In bwrap mode the launcher
 * starts bubblewrap, whose sandbox inherits the limits and the priority.
 */
import { LAUNCHER_SCRIPT } from './launcher-script.js';
import type { Ruleset } from './landlock.js';
import { ARCH_CALLS, socketFilter, type ArchCalls } from './seccomp.js';
import { findProgram } from './system.js';

// Resource numbers of setrlimit (the same on every Linux architecture supported here).
const RLIMIT_CPU = 0;
const RLIMIT_FSIZE = 1;
const RLIMIT_CORE = 4;
const RLIMIT_NPROC = 6;
const RLIMIT_AS = 9;

/** Descriptor of the status pipe: empty when the program started, else why it could not. */
export const STATUS_FD = 3;

export interface LaunchSpec {
  nice: number;
  /** 0 = no limit for memory and CPU. */
  memoryBytes: number;
  cpuSec: number;
  fileBytes: number;
  processes: number;
  mergeStderr: boolean;
  /** prctl(PR_SET_NO_NEW_PRIVS): no setuid program gains privileges (not for bwrap, which may itself be setuid). */
  noNewPrivs: boolean;
  /** Landlock mode: the ruleset, and whether the command may use the network (for the seccomp filter). */
  landlock?: { abi: number; ruleset: Ruleset; network: boolean };
  /** The program (absolute path) and its arguments. */
  argv: readonly string[];
}

/** The architecture's system call numbers, or undefined where landlock mode is not supported. */
export function archCalls(): ArchCalls | undefined {
  return ARCH_CALLS[process.arch];
}

/** perl, which runs the launcher (perl-base), or undefined. */
export function launcherPerl(): string | undefined {
  return findProgram('perl');
}

export function launcherArgs(spec: LaunchSpec): string[] {
  // Without landlock mode only prctl/prlimit64 are used: their numbers for an unknown architecture
  // make the launcher fail closed (status pipe) instead of running unlimited.
  const arch = archCalls() ?? { prctl: -1, prlimit64: -1 };
  const limits: [number, number][] = [
    [RLIMIT_FSIZE, spec.fileBytes],
    [RLIMIT_NPROC, spec.processes],
    [RLIMIT_CORE, 0],
  ];
  if (spec.memoryBytes > 0) limits.push([RLIMIT_AS, spec.memoryBytes]);
  if (spec.cpuSec > 0) limits.push([RLIMIT_CPU, spec.cpuSec]);
  const ll = spec.landlock;
  const rules = ll?.ruleset.rules ?? [];
  const header = [
    spec.nice, arch.prctl, arch.prlimit64, spec.mergeStderr ? 1 : 0, spec.noNewPrivs || ll ? 1 : 0,
    ll?.abi ?? 0, ll?.ruleset.handledFs ?? 0, ll?.ruleset.handledNet ?? 0, ll?.ruleset.scoped ?? 0,
    rules.length, limits.length, ...limits.flat(),
  ];
  const calls = archCalls();
  const filter = ll && calls ? socketFilter(calls, ll.network) : '';
  return ['-e', LAUNCHER_SCRIPT, '--', header.join(' '), filter, ...rules.flatMap(([rights, p]) => [String(rights), p]), ...spec.argv];
}
