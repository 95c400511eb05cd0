/**
 * What a command asks of the runner (runner.ts) and what it gets back: the one shape the executor,
 * the launcher's command line (launcher.ts) and the sandbox probe share.
 */
import type { KernelIdentity } from '../../ids/kernel-identity.js';
import type { SandboxMode } from '../modes.js';

export interface RunRequest {
  /** Absolute path of the program (resolved on the system PATH). */
  program: string;
  args: readonly string[];
  zoneRoot: string;
  readonly: boolean;
  sandbox: SandboxMode;
  /**
   * Kernel modes (bwrap and landlock; required there): the kernel's Landlock ABI and the programs the
   * command may execute (executables.ts). In bwrap mode the same rules apply inside the sandbox.
   */
  landlock?: { abi: number; executables: readonly string[] };
  network: boolean;
  timeoutSec: number;
  memoryMb: number;
  cpuSec: number;
  /** Largest file the command may write, in bytes (remaining quota, capped by max file size). */
  maxFileBytes: number;
  /**
   * Processes and threads the command may run at once, counted for this command alone (another
   * command's fork bomb never uses this one's room): RLIMIT_NPROC in the command's own user namespace
   * (bwrap, server run as an ordinary user: a fork past it fails with EAGAIN); elsewhere its
   * supervisor counts its tasks and stops it past the budget (`stoppedFor: 'processes'`). See
   * launcher-script.ts.
   */
  maxProcesses: number;
  /** Open files per process (RLIMIT_NOFILE); default OPEN_FILES (launcher.ts). */
  openFiles?: number;
  /**
   * What the command may keep in its call folders (HOME, TMPDIR; bwrap: its private /tmp), apparent
   * size in bytes; default CALL_FOLDER_BYTES (launcher.ts). bwrap: a full /tmp (ENOSPC); landlock and
   * validated: the command is stopped (`stoppedFor: 'call_folders'`).
   */
  callFolderBytes?: number;
  /**
   * Refuse every chmod (chmod, fchmod, fchmodat, fchmodat2), chown (chown, fchown, lchown, fchownat)
   * and xattr change (ACLs) with EPERM, in every mode: for a command in a group space holding files
   * the caller may not change (made read-only for it). Without it, only modes that set S_ISUID or
   * S_ISGID are refused (see seccomp.ts).
   */
  noModeChanges?: boolean;
  /**
   * A script (shed_run_python, shed_run_shell; code.ts). `file`, when given, is written into the
   * call's temp folder by the confined process itself just before the program starts, and its path
   * (as the program sees it) is inserted at args[file.argAt]. HOME and TMPDIR are named by absolute
   * paths (a script may change folder) and HOME is writable (libraries keep caches there); `env` is
   * added to the environment.
   */
  script?: { file?: { name: string; content: string; argAt: number }; env: Readonly<Record<string, string>> };
  /**
   * Anonymous memory all processes of the command may hold together, in bytes (RLIMIT_AS bounds each
   * process alone): its supervisor adds it up while it runs and stops it past this
   * (`stoppedFor: 'memory'`).
   */
  memoryTotalBytes?: number;
  /** Bytes kept per captured stream; beyond FLOOD_BYTES the command is stopped. */
  captureBytes: number;
  /** Open file descriptors for stdout/stderr (output files), instead of capturing. */
  stdoutFd?: number;
  stderrFd?: number;
  mergeStderr: boolean;
  /**
   * Asked every `everyMs` while the command runs (never twice at once); a reason returned stops the
   * whole command (the per-call quota watch). `held` says the command was frozen during the whole
   * check. `wake` receives the runner's controls: `now` checks at once, `hold` freezes every process
   * of the command (SIGSTOP) until a check started after the freeze has answered, `yieldCpu` lowers
   * the command's priority further (see priority.ts).
   */
  monitor?: { everyMs: number; check(held: boolean): Promise<string | undefined>; wake?(run: RunControls): void };
  /**
   * Run as this kernel identity (the caller's uid, its own gid, in a group space the group's gid)
   * instead of the server's: file permissions, signals, resource limits and /proc then separate it
   * from every other user and from the server. The server needs root or CAP_SETUID+CAP_SETGID
   * (src/core/services/ids/switch.ts); without them the command is refused, never run as the server.
   */
  identity?: KernelIdentity;
}

export interface RunControls {
  now(): void;
  hold(): void;
  yieldCpu(): void;
}

export interface Captured {
  bytes: Buffer;
  /** Total bytes the command wrote to the stream (kept or not). */
  total: number;
}

export interface RunResult {
  returncode: number;
  signal: string | null;
  timedOut: boolean;
  /** Stopped because it kept writing output long after the limit (endless output). */
  flooded: boolean;
  stdout: Captured;
  stderr: Captured;
  durationMs: number;
  /**
   * Why it was stopped before it ended by itself (besides a timeout or a flood): the monitor's
   * reason ('quota', 'path_too_long'), 'call_folders' (its call folders passed callFolderBytes), 'processes' (more
   * than maxProcesses where no exact limit applies), 'memory' (its processes together held more
   * than memoryTotalBytes) or 'launcher' (the launcher or the command's supervisor died: the
   * command was killed). stderr says so too.
   */
  stoppedFor?: string;
  /** The command did not run: its confinement or limits could not be applied (the launcher's reason). */
  refused?: string;
  /** CPU time and peak resident memory of all its processes. */
  usage?: { userMs: number; systemMs: number; maxRssKb: number };
  /**
   * Landlock and validated modes: the call's own folders (HOME, TMPDIR), which a script may name in
   * its output; shown as bubblewrap's /tmp/home and /tmp (output.ts).
   */
  callFolders?: { home: string; tmp: string };
}
