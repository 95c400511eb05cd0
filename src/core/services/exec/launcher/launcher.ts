/**
 * What the launcher (forkserver.ts, launcher-script.ts) is asked to do for one command, per sandbox
 * mode: its limits and priority, set in its own process before the program runs (no process of a
 * command ever runs unlimited or at the server's priority), and its confinement:
 *
 * - every mode: no-new-privileges, no capability at all (a command started as root gets none back
 *   at exec, so file modes apply to it), processes and threads bounded per command, the seccomp
 *   filter (seccomp.ts: the full list in the kernel modes, the identity and file-mode rules in
 *   validated mode);
 * - landlock: the Landlock ruleset on the server's paths; the call folders measured while it runs;
 * - bwrap: bubblewrap, and inside it the inner launcher: a size-bounded /tmp, the zone and /tmp
 *   mounted without exec, setuid or devices, then the same Landlock ruleset (on the paths the
 *   sandbox shows) and the same filter. Landlock forbids mount changes to a confined process, so it
 *   cannot be applied before bubblewrap.
 */
import { bwrapArgs, SANDBOX_HOME, SANDBOX_TMP, SANDBOX_ZONE } from './bwrap.js';
import { commandEnvironment, type CallFolders } from './callenv.js';
import type { LaunchSpec } from './forkserver.js';
import { landlockRuleset } from './landlock.js';
import { COMMAND_NICE } from './priority.js';
import type { RunRequest } from './run-types.js';
import { ARCH_CALLS, commandFilter, type ArchCalls, type FilterSpec } from './seccomp.js';
import { findProgram } from './system.js';

// Resource numbers of setrlimit (the same on every Linux architecture supported here).
const RLIMIT_CPU = 0;
const RLIMIT_FSIZE = 1;
const RLIMIT_CORE = 4;
const RLIMIT_NOFILE = 7;
const RLIMIT_AS = 9;

/** Open files per process of a command, unless the request says otherwise. */
export const OPEN_FILES = 1024;
/** What a command may keep in its call folders (HOME, TMPDIR, bwrap's /tmp), unless the request says otherwise. */
export const CALL_FOLDER_BYTES = 256 * 1024 * 1024;
/** Files and folders it may make there. */
export const CALL_FOLDER_ENTRIES = 10_000;

/** The architecture's system call numbers, or undefined where commands cannot be confined. */
export function archCalls(): ArchCalls | undefined {
  return ARCH_CALLS[process.arch];
}

/** perl, which runs the launcher (perl-base), or undefined. */
export function launcherPerl(): string | undefined {
  return findProgram('perl');
}

const filters = new Map<string, string>();

function filterFor(arch: ArchCalls, spec: FilterSpec): string {
  const key = `${spec.kernel}/${spec.network}/${spec.noModeChanges}`;
  let hex = filters.get(key);
  if (hex === undefined) filters.set(key, (hex = commandFilter(arch, spec)));
  return hex;
}

/**
 * The launch of `req`. `folders` are the call's own (landlock and validated modes); `bwrap` is
 * bubblewrap's path in bwrap mode.
 */
export function launchSpec(req: RunRequest, arch: ArchCalls, folders: CallFolders | undefined, bwrap: string | undefined): LaunchSpec {
  const inside = req.sandbox === 'bwrap';
  const callBytes = req.callFolderBytes ?? CALL_FOLDER_BYTES;
  const limits: [number, number][] = [
    [RLIMIT_FSIZE, req.maxFileBytes],
    [RLIMIT_CORE, 0],
    [RLIMIT_NOFILE, req.openFiles ?? OPEN_FILES],
  ];
  if (req.memoryMb > 0) limits.push([RLIMIT_AS, req.memoryMb * 1024 * 1024]);
  if (req.cpuSec > 0) limits.push([RLIMIT_CPU, req.cpuSec]);
  const bpf = filterFor(arch, { kernel: req.sandbox !== 'validated', network: req.network, noModeChanges: req.noModeChanges === true });
  const ll = req.sandbox !== 'validated' ? req.landlock : undefined;
  const ruleset =
    ll &&
    landlockRuleset(
      inside
        ? { abi: ll.abi, zoneRoot: SANDBOX_ZONE, readonly: req.readonly, network: req.network, tmp: SANDBOX_TMP, proc: true, hidePrograms: req.script !== undefined, executables: ll.executables }
        : { abi: ll.abi, zoneRoot: req.zoneRoot, readonly: req.readonly, network: req.network, tmp: folders!.tmp, home: folders!.home, writableHome: req.script !== undefined, hidePrograms: req.script !== undefined, executables: ll.executables },
    );
  const cwd = inside ? '/' : req.zoneRoot;
  // A script's code goes to the call's temp folder, named where its interpreter takes it.
  const file = req.script?.file;
  const filePath = file && `${inside ? SANDBOX_TMP : folders!.tmp}/${file.name}`;
  const args = file ? [...req.args.slice(0, file.argAt), filePath!, ...req.args.slice(file.argAt)] : req.args;
  return {
    mode: inside ? 'bwrap' : 'direct',
    ...(inside ? { bwrap: [bwrap!, ...bwrapArgs({ zoneRoot: req.zoneRoot, readonly: req.readonly, network: req.network })] } : {}),
    argv: [req.program, ...args],
    cwd,
    env: { ...commandEnvironment(cwd, folders, req.program, req.script !== undefined), ...req.script?.env },
    stdout: req.stdoutFd ?? 'pipe',
    stderr: req.mergeStderr ? 'merge' : (req.stderrFd ?? 'pipe'),
    nice: COMMAND_NICE,
    limits,
    budget: req.maxProcesses,
    confine: {
      ...(ruleset ? { landlock: { abi: ll!.abi, fs: ruleset.handledFs, net: ruleset.handledNet, scoped: ruleset.scoped, rules: ruleset.rules } } : {}),
      bpf,
      ...(inside
        ? {
            tmpfs: `${SANDBOX_TMP} size=${callBytes},nr_inodes=${CALL_FOLDER_ENTRIES},mode=0755`,
            mkdir: [SANDBOX_HOME],
            noexec: [SANDBOX_ZONE, SANDBOX_TMP],
          }
        : {}),
    },
    ...(folders ? { folders: { root: folders.root, reused: folders.reused }, watch: { path: folders.root, bytes: callBytes, entries: CALL_FOLDER_ENTRIES } } : {}),
    ...(file ? { file: { path: filePath!, content: file.content } } : {}),
    ...(req.memoryTotalBytes !== undefined ? { memory: req.memoryTotalBytes } : {}),
    ...(req.identity ? { identity: req.identity } : {}),
  };
}
