/**
 * The one executor: every command any function runs (shed_exec, shed_lockedit_exec) goes through
 * these steps, in this order, and no other code starts a program (a test holds that):
 * sandbox mode → sensitive-file rules → argument policy → program lookup → link sweep → set aside
 * (blocked entries out of the zone, group files the caller may not change read-only: aside.ts) →
 * per-call quota watch → run (limits, priority, confinement) → link sweep → what changed → undo
 * past the quota (over-quota.ts) → put back what was set aside.
 * A script (shed_run_python, shed_run_shell) takes the same steps, except that the argument policy,
 * which cannot judge one, gives way to its plan (code.ts: kernel modes only, its executables).
 * A function only says where the command runs, what it may write there, and where its output goes.
 */
import { shedError } from '../../base/errors.js';
import type { OwnershipRecord } from '../groups/access.js';
import { callIdentity, requireSeparation, UnconvertedZone } from '../ids/for-call.js';
import type { KernelIdentity } from '../ids/kernel-identity.js';
import { takeOverFolders } from '../ids/group-owner.js';
import { allRecords } from '../groups/access.js';
import { scopeTotal } from '../quota/quota.js';
import type { Valves } from '../../base/valves.js';
import { changedPaths, snapshot } from '../vcs/index.js';
import type { Zone } from '../../base/zones/zones.js';
import { recoverAside, setAside, type AsideReport } from './guards/aside.js';
import { changedFiles, planScript, SCRIPT_RECORDS_MAX, type ChangedFiles, type ScriptPlan, type ScriptRequest } from './code/plan.js';
import { folderWriteScope, watchCall, zoneWriteScope, type CallWatchEnd, type WriteScope } from './guards/callwatch.js';
import { executablesFor } from './launcher/executables.js';
import { outwardLinkSweep } from './guards/links.js';
import { undoGrowth, type QuotaUndo } from './guards/over-quota.js';
import { removeTooLong, tooLongNote } from './guards/too-long.js';
import { checkCommand, requireDownloadTarget, type Policy } from './policy/policy.js';
import { PURE_READERS } from './policy/commands.js';
import { scopeHome } from '../../base/locks/state-dir.js';
import { homePrepared } from '../vcs/migrate.js';
import { run } from './launcher/runner.js';
import type { RunResult } from './launcher/run-types.js';
import { sandboxStatus, type SandboxStatus } from './launcher/sandbox.js';
import { checkSensitiveCommand } from './policy/sensitive.js';
import { requireProgram } from './launcher/system.js';

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
  /** False on a host for several users without --allow-unconfined: validated mode refuses the command (HostBridge.allowsUnconfined). */
  unconfinedAllowed?: boolean;
  /**
   * A script instead of `cmd` and `args` (which name it in messages and commits): run by its
   * interpreter under the kernel alone (code.ts), with what it changed known in every zone.
   */
  script?: ScriptRequest;
  /**
   * The calling user's id: with valve identity_separation on, the command runs as their kernel
   * identity (src/core/services/ids/for-call.ts). A locked edit's scratch folder is `zone.root` then, made theirs.
   */
  caller?: string;
}

export interface ExecOutcome {
  sandbox: SandboxStatus;
  result: RunResult;
  /** Zone-relative paths it changed in a versioned zone, or by a script in any writable zone ([''] when unknown: the whole zone is compared); [] elsewhere. */
  changed: string[];
  /**
   * A script's `changed` is [''] (its watch lost events: thousands of new files): the files whose
   * inode changed while it ran, read before any server step after it (a mode or group set by the
   * server must not count as the script's).
   */
  made?: ChangedFiles;
  /** Set when it wrote past its quota (stopped by the watch, or finished over it): what was undone. */
  overQuota?: { end: CallWatchEnd; stopped: boolean; undone: QuotaUndo };
  /** Glob patterns of the arguments and the names each stood for. */
  expanded: Policy['expanded'];
  /** What putting back the blocked entries and the group files found to do. */
  aside: AsideReport;
}

export function executeCommand(req: ExecRequest): Promise<ExecOutcome> {
  return execute(req, false);
}

/** A lock-free run found it needs the call lock after all (nothing was done). */
const NEEDS_LOCK = Symbol('needs the call lock');

/**
 * A command that only reads, run without the call lock (other calls of the user go on meanwhile):
 * its zone is read-only to it in the kernel (Landlock's rules, bubblewrap's read-only mount) and
 * no server step writes before or after it, so it needs none of what the lock protects. Only in a
 * personal zone with no blocked entries to hide (hiding moves files: other calls' commands would
 * see them come back), the argument policy judging it as in a read-only zone, the zone converted
 * to the user's identity and in this version's layout. Undefined when it does not qualify: the
 * caller runs it again as a modifying call (executeCommand under the call lock).
 */
export async function executeReading(req: ExecRequest): Promise<ExecOutcome | undefined> {
  try {
    return await execute(req, true);
  } catch (err) {
    if (err === NEEDS_LOCK) return undefined;
    throw err;
  }
}

async function execute(req: ExecRequest, reading: boolean): Promise<ExecOutcome> {
  const { valves, zone, cmd, args } = req;
  const sandbox = await sandboxStatus(valves.sandbox, req.unconfinedAllowed !== false);
  if (reading && !mayRead(req, sandbox)) throw NEEDS_LOCK;
  const plan = req.script && (await planScript(req.script, valves, zone.readonly, sandbox, zone.group !== undefined));
  if (!reading) await recoverAside(zone);
  let blocked = await checkSensitiveCommand(zone, plan ? [] : args);
  const policy = plan?.policy ?? (reading ? readingPolicy(req, sandbox) : checkCommand({ cmd, args, zone, readonly: zone.readonly, network: valves.network_mode, sandbox: sandbox.active }));
  // Glob patterns stand for the names they expanded to: those are judged too.
  if (policy.expanded.length > 0) blocked = await checkSensitiveCommand(zone, policy.args);
  if (reading && blocked !== undefined) throw NEEDS_LOCK; // hiding them moves files (none without blocked patterns)
  if (!plan) requireDownloadTarget(cmd, policy.options, req.stdoutFile === true);
  const program = plan?.program ?? requireProgram(cmd);
  const identity = await callIdentity(valves, req.caller, zone, req.scratch ? zone.root : undefined, !reading).catch((err: unknown) => {
    throw err instanceof UnconvertedZone ? NEEDS_LOCK : err;
  });
  requireSeparation(valves, sandbox.active, req.unconfinedAllowed !== false);
  // Reading, only the call's own folders can be written: the file size limit bounds them (with their watch).
  const fileBytes = req.scratch?.fileBytes ?? (reading ? valves.max_file_size_mb * MIB : await writableBytes(valves, zone));
  if (policy.sweepBefore) await outwardLinkSweep(zone.root);
  // Under identity separation the space's files have their records' owners and modes (callIdentity synced them).
  const kernel = identity !== undefined && zone.group !== undefined && req.scratch === undefined && req.caller !== undefined ? { caller: req.caller } : undefined;
  const aside = await setAside(zone, blocked, req.locked ?? [], reading ? undefined : req.scratch ? folderWriteScope(zone.root, req.scratch.bytes) : zoneWriteScope(zone), kernel);
  let watched: Watched;
  let report: AsideReport;
  let changedHere: string[] | undefined;
  try {
    watched = await runWatched(req, reading, policy, program, sandbox, aside.scope, fileBytes, aside.guarding, plan, identity);
    changedHere = watched.changed;
  } finally {
    try {
      report = await aside.restore();
    } finally {
      // What the member's command made: folders the server's (sticky, setgid), files the group's.
      // After the guard's comparison (a mode set here would count as a change to undo).
      if (identity !== undefined && zone.group !== undefined && req.scratch === undefined) await takeOverFolders(zone.root, identity.gid, zone.versioned ? changedHere : undefined, () => allRecords(zone.group!.base, zone.group!.id));
    }
  }
  const { result, end, undone } = watched;
  if (result.refused !== undefined) {
    // Fail closed: a command whose confinement could not be applied did not run.
    const what = plan?.cmd ?? cmd;
    throw shedError('SANDBOX_UNAVAILABLE', `${what} was not run: its ${sandbox.active} sandbox could not be set up (${result.refused}).`, {
      details: { command: what, sandbox: sandbox.active },
      hint: 'Nothing was changed. Try again; if it keeps failing, an admin should check shed_allowed_commands() for the sandbox state.',
    });
  }
  const changed = !zone.versioned || watched.changed.includes('') ? watched.changed : [...new Set([...watched.changed, ...report.touched])].sort();
  return { sandbox, result, changed, ...(watched.made !== undefined ? { made: watched.made } : {}), expanded: policy.expanded, aside: report, ...(end !== undefined && undone !== undefined ? { overQuota: { end, stopped: result.stoppedFor === 'quota', undone } } : {}) };
}

interface Watched {
  result: RunResult;
  changed: string[];
  made?: ChangedFiles;
  end?: CallWatchEnd;
  undone?: QuotaUndo;
}

/** How far a file's change time may read behind this clock (the kernel stamps it from a coarse clock). */
const CHANGE_TIME_SLACK_MS = 50;

/** The command under its quota watch; what it changed; its growth undone when it passed the quota. */
async function runWatched(req: ExecRequest, reading: boolean, policy: Policy, program: string, sandbox: SandboxStatus, scope: WriteScope | undefined, fileBytes: number, guarding: boolean, plan: ScriptPlan | undefined, identity: KernelIdentity | undefined): Promise<Watched> {
  const { valves, zone, cmd } = req;
  // What it changed is needed in versioned zones (the commit), and for a script anywhere it can write (its answer).
  const tracked = !reading && (zone.versioned || (plan !== undefined && !zone.readonly));
  // One watch of the folders it writes in: the per-call quota while it runs, and what it changed.
  const watch = scope && (await watchCall(scope, fileBytes));
  let result: RunResult;
  let end: CallWatchEnd | undefined;
  let before: Awaited<ReturnType<typeof snapshot>> | undefined;
  let launched = 0;
  try {
    // Without a watch that can tell what changed, compare full stat snapshots (no hashing).
    before = tracked && watch?.exact !== true ? await snapshot(zone.root) : undefined;
    const fds = req.openOutputs?.() ?? {};
    launched = Date.now();
    result = await run({
      program,
      args: policy.argv,
      zoneRoot: zone.root,
      readonly: zone.readonly || reading,
      sandbox: sandbox.active,
      ...(sandbox.active !== 'validated' ? { landlock: { abi: sandbox.landlockAbi!, executables: plan?.executables ?? executablesFor(cmd, program) } } : {}),
      network: policy.network,
      // A group space as the server's uid (identity_separation on but not possible): no mode, owner or ACL change at all, so nothing of that uid (root in the image)
      // is re-moded. As the member's uid, only their own files' modes can change, and the space's
      // records are set again as modes before the next command (ids/group-owner.ts).
      noModeChanges: guarding || (identity === undefined && zone.name === 'group' && valves.identity_separation !== 'off'),
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
      ...(plan ? { script: plan.run, memoryTotalBytes: valves.exec_memory_limit_mb > 0 ? valves.exec_memory_limit_mb * MIB : undefined } : {}),
      ...(identity ? { identity } : {}),
    });
    // Before any step by path: what it nested past the path limit is removed (too-long.ts).
    const tooLong = scope ? await removeTooLong(scope.root) : [];
    if (tooLong.length > 0) result = withStderr(result, tooLongNote(tooLong));
    // In every mode: a link left by this command (archive member, cp/mv of a relative link) must not
    // lead a later command outside the zone (zip and diff -r follow links). A script's, once what it
    // changed is known (below).
    if (policy.sweepAfter && !plan) await outwardLinkSweep(zone.root);
  } finally {
    end = await watch?.finish();
  }
  // What it changed: read off the changed folders, else the full comparison, else (the watch lost
  // events midway) the whole zone, which the commit compares against the last one.
  const changed = !tracked ? [] : before ? changedPaths(before, await snapshot(zone.root)) : (end?.changed ?? ['']);
  if (plan && !zone.readonly) await outwardLinkSweep(zone.root, changed.includes('') ? undefined : changed);
  // Lost events: what the script made is what the kernel stamped changed since its launch.
  const made = plan && changed.includes('') ? await changedFiles(zone.root, [''], SCRIPT_RECORDS_MAX, launched - CHANGE_TIME_SLACK_MS) : undefined;
  const known = { result, changed, ...(made !== undefined ? { made } : {}) };
  if (end === undefined || (result.stoppedFor !== 'quota' && end.overBytes === 0 && end.overFiles === 0)) return { ...known, ...(end !== undefined ? { end } : {}) };
  // Past the quota: what it added is removed again, and the answer says what.
  const undone = await undoGrowth(zone.root, end.changed, end.prior);
  return { ...known, end: { ...end, usedBytes: await scope!.used() }, undone };
}

/** What a run without the call lock needs besides the policy's judgement (executeReading). */
function mayRead(req: ExecRequest, sandbox: SandboxStatus): boolean {
  const { zone } = req;
  const kernel = sandbox.active === 'landlock' || sandbox.active === 'bwrap';
  const plain = req.script === undefined && req.scratch === undefined && req.openOutputs === undefined && (req.locked ?? []).length === 0;
  return kernel && plain && PURE_READERS.has(req.cmd) && zone.group === undefined && zone.blocked === undefined && homePrepared(scopeHome(zone.scope));
}

/** The policy's judgement as in a read-only zone, for a run without the call lock; NEEDS_LOCK when it would refuse it there, or sweep links first (a write). */
function readingPolicy(req: ExecRequest, sandbox: SandboxStatus): Policy {
  let policy: Policy;
  try {
    policy = checkCommand({ cmd: req.cmd, args: req.args, zone: req.zone, readonly: true, network: req.valves.network_mode, sandbox: sandbox.active });
  } catch {
    throw NEEDS_LOCK; // under the lock, the policy of its zone answers (and may refuse it, with its reason)
  }
  if (policy.sweepBefore) throw NEEDS_LOCK;
  return policy;
}

function withStderr(result: RunResult, note: string): RunResult {
  const bytes = Buffer.from(note);
  return { ...result, stderr: { bytes: Buffer.concat([result.stderr.bytes, bytes]), total: result.stderr.total + bytes.length } };
}

/** Bytes a command may write to one file: what is left of the quota, capped by the file size limit. */
async function writableBytes(valves: Valves, zone: Zone): Promise<number> {
  if (zone.readonly) return 0;
  const left = Math.max(0, zone.scope.limitBytes - (await scopeTotal(zone.scope)));
  return Math.min(left, valves.max_file_size_mb * MIB);
}
