/**
 * The one executor: every command any function runs (shed_exec, shed_lockedit_exec) goes through
 * these steps, in this order, and no other code starts a program (a test holds that):
 * sandbox mode → sensitive-file rules → argument policy (read-only policy in a group space holding
 * files the caller may not change, unless bubblewrap mounts them read-only) → program lookup → link
 * sweep → per-call quota watch → run (limits, priority, confinement) → link sweep → what changed.
 * A function only says where the command runs, what it may write there, and where its output goes.
 */
import { shedError, ShedError } from '../errors.js';
import type { OwnershipRecord } from '../groups/access.js';
import { scopeTotal } from '../quota/quota.js';
import type { Valves } from '../valves.js';
import { changedPaths, snapshot } from '../vcs/index.js';
import type { Zone } from '../zones/zones.js';
import { folderWriteScope, watchCall, zoneWriteScope, type CallWatch, type CallWatchEnd } from './callwatch.js';
import { executablesFor } from './executables.js';
import { outwardLinkSweep } from './links.js';
import { checkCommand, requireDownloadTarget, type Policy } from './policy.js';
import { run, type RunResult } from './runner.js';
import { sandboxStatus, type SandboxMode, type SandboxStatus } from './sandbox.js';
import { canMask, checkSensitiveCommand } from './sensitive.js';
import { restoreNames, type NameRepair } from '../paths/blocked-identity.js';
import { requireProgram } from './system.js';

const MIB = 1024 * 1024;

export interface ExecRequest {
  valves: Valves;
  cmd: string;
  args: readonly string[];
  /** Where the command runs, as the policy judges its paths (a locked edit passes its scratch folder as the zone). */
  zone: Zone;
  /** Group files the caller may not change. */
  locked?: readonly OwnershipRecord[];
  /**
   * A folder made for this one command (a locked edit's scratch folder) instead of a zone: it may
   * hold at most `bytes` when the command ends, and no file larger than `fileBytes`.
   */
  scratch?: { bytes: number; fileBytes: number };
  timeoutSec: number;
  /** Bytes kept of each captured stream. */
  captureBytes: number;
  /** The call saves stdout to a file (curl and wget must save somewhere). */
  stdoutFile?: boolean;
  /** Opens the output files, once the command has passed every check; their descriptors replace capture. */
  openOutputs?: () => { stdoutFd?: number; stderrFd?: number };
  mergeStderr?: boolean;
}

export interface ExecOutcome {
  sandbox: SandboxStatus;
  result: RunResult;
  /** Zone-relative paths it changed in a versioned zone ([''] when unknown: the whole zone is compared); [] elsewhere. */
  changed: string[];
  /** Set when it wrote past its quota: stopped by the watch, or finished over it. */
  overQuota?: { end: CallWatchEnd; stopped: boolean };
  /** Glob patterns of the arguments and the names each stood for. */
  expanded: Policy['expanded'];
  /** Blocked files the command had given other names, put back (see blocked-identity.ts). */
  repair?: NameRepair;
}

export async function executeCommand(req: ExecRequest): Promise<ExecOutcome> {
  const { valves, zone, cmd, args } = req;
  const sandbox = await sandboxStatus(valves.sandbox);
  let sensitive = await checkSensitiveCommand(zone, cmd, args, canMask(sandbox.active));
  const policyOf = (readonly: boolean) => checkCommand({ cmd, args, zone, readonly, network: valves.network_mode, sandbox: sandbox.active });
  let policy = policyOf(zone.readonly);
  // Glob patterns stand for the names they expanded to: those are judged too.
  if (policy.expanded.length > 0) sensitive = await checkSensitiveCommand(zone, cmd, policy.args, canMask(sandbox.active));
  const locked = req.locked ?? [];
  // bubblewrap mounts the files the caller may not change read-only; Landlock cannot make part of a
  // writable folder read-only, and validated mode has no kernel: there the command must pass the read-only policy.
  if (locked.length > 0 && sandbox.active !== 'bwrap') policy = readOnlyPolicy(zone, cmd, sandbox.active, locked, () => policyOf(true));
  requireDownloadTarget(cmd, policy.options, req.stdoutFile === true);
  const program = requireProgram(cmd);
  const scope = req.scratch ? folderWriteScope(zone.root, req.scratch.bytes) : zoneWriteScope(zone);
  const fileBytes = req.scratch?.fileBytes ?? (await writableBytes(valves, zone));
  if (policy.sweepBefore) await outwardLinkSweep(zone.root);
  // One watch of the folders it writes in: the per-call quota while it runs, and (versioned zones) what it changed.
  const watch: CallWatch | undefined = scope && (await watchCall(scope, fileBytes));
  let result: RunResult;
  let end: CallWatchEnd | undefined;
  let before: Awaited<ReturnType<typeof snapshot>> | undefined;
  let repair: NameRepair | undefined;
  try {
    // Without a watch that can tell what changed, compare full stat snapshots (no hashing).
    before = zone.versioned && watch?.exact !== true ? await snapshot(zone.root) : undefined;
    const fds = req.openOutputs?.() ?? {};
    result = await run({
      program,
      args: policy.argv,
      zoneRoot: zone.root,
      readonly: zone.readonly,
      sandbox: sandbox.active,
      ...(sandbox.active !== 'validated' ? { landlock: { abi: sandbox.landlockAbi!, executables: executablesFor(cmd, program) } } : {}),
      network: policy.network,
      protect: zone.versioned ? ['.git', ...locked.map((r) => r.path)] : [],
      timeoutSec: req.timeoutSec,
      memoryMb: valves.exec_memory_limit_mb,
      cpuSec: valves.exec_cpu_limit_seconds,
      maxFileBytes: fileBytes,
      maxProcesses: 256,
      captureBytes: req.captureBytes,
      stdoutFd: fds.stdoutFd,
      stderrFd: fds.stderrFd,
      mergeStderr: req.mergeStderr === true,
      monitor: watch?.monitor,
      mask: sensitive.masks,
    });
    // In every mode: a link left by this command (archive member, cp/mv of a relative link) must not
    // lead a later command outside the zone (zip and diff -r follow links).
    if (policy.sweepAfter) await outwardLinkSweep(zone.root);
    // Blocked files keep their blocked names whatever the program did (mv of a parent folder, hard links).
    if (sensitive.before && sensitive.before.size > 0) repair = await restoreNames(zone.blocked!, zone.root, sensitive.before, zone.versioned);
  } finally {
    end = await watch?.finish();
  }
  if (result.refused !== undefined) {
    // Fail closed: a command whose confinement could not be applied did not run.
    throw shedError('SANDBOX_UNAVAILABLE', `${cmd} was not run: its ${sandbox.active} sandbox could not be set up (${result.refused}).`, {
      details: { command: cmd, sandbox: sandbox.active },
      hint: 'Nothing was changed. Try again; if it keeps failing, an admin should check shed_allowed_commands() for the sandbox state.',
    });
  }
  // What it changed: read off the changed folders, else the full comparison, else (the watch lost
  // events midway) the whole zone, which the commit compares against the last one.
  const changed = !zone.versioned ? [] : before ? changedPaths(before, await snapshot(zone.root)) : (end?.changed ?? ['']);
  const stopped = result.stoppedFor === 'quota';
  return { sandbox, result, changed, expanded: policy.expanded, ...(repair !== undefined ? { repair } : {}), ...(end !== undefined && (stopped || end.overBytes > 0) ? { overQuota: { end, stopped } } : {}) };
}

/** Bytes a command may write to one file: what is left of the quota, capped by the file size limit. */
async function writableBytes(valves: Valves, zone: Zone): Promise<number> {
  if (zone.readonly) return 0;
  const left = Math.max(0, zone.scope.limitBytes - (await scopeTotal(zone.scope)));
  return Math.min(left, valves.max_file_size_mb * MIB);
}

/**
 * A group space holding files the caller may not change, without bubblewrap: only what the
 * read-only policy allows runs; a changing command is refused with PERMISSION_DENIED naming such a file.
 */
function readOnlyPolicy(zone: Zone, cmd: string, sandbox: SandboxMode, locked: readonly OwnershipRecord[], check: () => Policy): Policy {
  try {
    return check();
  } catch (err) {
    if (!(err instanceof ShedError) || !['COMMAND_FORBIDDEN', 'ARGUMENT_FORBIDDEN'].includes(err.code)) throw err;
    const names = locked.slice(0, 5).map((r) => r.path).join(', ');
    throw shedError('PERMISSION_DENIED', `'${cmd}' could change files here, and ${zone.label} holds files you may not change (${names}${locked.length > 5 ? ', ...' : ''}); in ${sandbox} mode only read-only commands run in this group space.`, {
      details: { reason: locked[0]!.mode === 'owner_ro' ? 'FILE_READ_ONLY' : 'FILE_OWNER_ONLY', command: cmd, protected: locked.slice(0, 20).map((r) => r.path) },
      hint: 'Change files with shed_patch_text / shed_create_file / shed_rename / shed_delete (they check each file\'s mode), or read-only commands like cat, grep, ls.',
    });
  }
}
