import { z } from 'zod';
import { exitStatus } from './exit-meaning.js';
import { shedError } from '../core/base/errors.js';
import { executeCommand, executeReading, type ExecOutcome, type ExecRequest } from '../core/services/exec/execute.js';
import { PURE_READERS } from '../core/services/exec/policy/commands.js';
import { checkSensitiveGit } from '../core/services/exec/policy/sensitive.js';
import { userHome, ZONE_NAMES, type Zone } from '../core/base/zones/zones.js';
import { defineFunction, type CallContext, type HandlerResult } from '../registry/define.js';
import { allowZoneInPath, groupParam, zoneParam } from '../registry/params.js';
import { outputLimit } from '../core/base/text/format.js';
import { capturedText, scrubOutput, truncateText } from '../core/services/exec/output.js';
import { gitCommand } from '../core/services/vcs/index.js';
import { callGuard, dropVanished, lockedFiles, recordWritten } from '../core/services/groups/enforce.js';
import { asideNotes, clampTimeout, commandData, commitOutput, openOutput, outputPaths, quotaStopped, recoveryPending, requireOutputRoom, type OutputFile } from './exec-shared.js';

const EXEC_PARAMS = {
  zone: zoneParam(ZONE_NAMES),
  cmd: z.string().min(1).describe('Program, e.g. "grep"'),
  args: z.array(z.string()).default([]).describe('Arguments, e.g. ["-n", "TODO", "a.txt"]'),
  timeout: z.number().int().optional().describe('Seconds (the admin caps it)'),
  max_output: z.number().int().optional().describe('Characters kept; 0 = admin max'),
  stdout_file: z.string().optional().describe('Save stdout to this file'),
  stderr_file: z.string().optional().describe('Save stderr to this file'),
  redirect_stderr_to_stdout: z.boolean().default(false).describe('Like 2>&1'),
  group: groupParam,
  allow_zone_in_path: allowZoneInPath,
};

export const shedExec = defineFunction({
  name: 'shed_exec',
  category: 'exec',
  summary: 'Run a whitelisted command (ls, cat, grep, sed, awk, sort, cp, mv, mkdir, tar, git log...) in a zone.',
  description: 'Run a whitelisted program in the zone. No shell: no pipes or > (use stdout_file, then a second call); * ? [..] in file names are expanded in the zone. Check data.returncode and stderr. In Documents, git log/show/diff/restore work.',
  params: EXEC_PARAMS,
  zones: { accepted: ZONE_NAMES, writes: false },
  // A program that only reads runs without the call lock when it can (executeReading): a read of a zone never waits for another call's writes.
  mutates: (args) => !readCandidate(args),
  hints: { openWorld: true },
  example: { zone: 'storage', cmd: 'ls', args: ['-la'] },
  paramHints: { args: 'Each argument is its own item: args=["-n", "5", "notes.txt"].' },
  handler: (args, ctx) => run(args, ctx, readCandidate(args)),
});

type ExecArgs = z.output<z.ZodObject<typeof EXEC_PARAMS>>;

/** Candidates for a run without the call lock: a program that writes nothing but its output, to the caller's answer, in a personal zone. */
function readCandidate(args: Record<string, unknown>): boolean {
  return typeof args.cmd === 'string' && PURE_READERS.has(args.cmd) && args.stdout_file === undefined && args.stderr_file === undefined && args.zone !== 'group';
}

/** `reading`: dispatched without the call lock; a command that turns out to need it runs again as a modifying call. */
async function run(args: ExecArgs, ctx: CallContext, reading: boolean): Promise<HandlerResult> {
  // A crash left something to recover: the first call after it, read or not, sees the recovered state.
  if (reading && recoveryPending(userHome(ctx.valves, ctx.user.id))) return ctx.modifying(() => run(args, ctx, false));
  const zone = ctx.zone(args.zone, args.group);
  const timeoutSec = clampTimeout(ctx, args.timeout);
  const limit = outputLimit(ctx, args.max_output);
  if (args.cmd === 'git' && zone.versioned) {
    checkSensitiveGit(zone, args.args);
    return history(ctx, zone, args.args, limit);
  }
  const locked = await lockedFiles(ctx, zone);
  const outputs: OutputFile[] = [];
  let outFile: OutputFile | undefined;
  let errFile: OutputFile | undefined;
  const request: ExecRequest = {
    valves: ctx.valves,
    cmd: args.cmd,
    args: args.args,
    zone,
    locked,
    timeoutSec,
    captureBytes: limit * 4 + 4,
    stdoutFile: args.stdout_file !== undefined,
    mergeStderr: args.redirect_stderr_to_stdout,
    unconfinedAllowed: ctx.host.allowsUnconfined !== false,
    caller: ctx.user.id,
    openOutputs: reading ? undefined : () => {
      if (args.stdout_file) outputs.push((outFile = openOutput(zone, args.stdout_file, 'stdout_file', args.allow_zone_in_path, locked)));
      if (args.stderr_file && !args.redirect_stderr_to_stdout) outputs.push((errFile = openOutput(zone, args.stderr_file, 'stderr_file', args.allow_zone_in_path, locked)));
      return { stdoutFd: outFile?.file.fd, stderrFd: errFile?.file.fd };
    },
  };
  let ran: ExecOutcome | undefined;
  try {
    ran = reading ? await executeReading(request) : await executeCommand(request);
  } catch (err) {
    for (const out of outputs) out.file.abort();
    throw err;
  }
  if (ran === undefined) return ctx.modifying(() => run(args, ctx, false));
  const { result, sandbox } = ran;
  let changed = ran.changed;
  if (ran.overQuota) {
    for (const out of outputs) out.file.abort();
    return quotaStopped(ctx, zone, args.cmd, args.args, changed, ran.overQuota);
  }
  await requireOutputRoom(ctx, zone, args.cmd, args.args, changed, outputs);
  const files: Record<string, unknown> = {};
  for (const [key, file] of [['stdout_file', outFile], ['stderr_file', errFile]] as const) {
    if (!file) continue;
    files[key] = file.target.rel;
    files[`${key}_size`] = await commitOutput(file);
  }
  // The output files land after the command (out of its reach meanwhile): their places are changes too.
  if (zone.versioned && !changed.includes('') && outputs.length > 0) changed = [...new Set([...changed, ...outputPaths(outputs)])].sort();
  if (result.timedOut) {
    throw shedError('TIMEOUT', `${args.cmd} was stopped after ${timeoutSec}s (timeout).`, {
      details: { command: args.cmd, timeout: timeoutSec, partial_stdout: scrubOutput(result.stdout.bytes.toString('utf8').slice(0, 2000), zone) },
      hint: `Give it more time with timeout= (up to ${ctx.valves.exec_timeout_max}), or work on a smaller part of the data.`,
    });
  }
  const stdout = outFile ? { text: `[Output written to ${outFile.target.rel}]`, truncated: false } : capturedText(result.stdout, zone, limit, 'stdout');
  const stderr = errFile ? { text: `[Errors written to ${errFile.target.rel}]`, truncated: false } : capturedText(result.stderr, zone, limit, 'stderr');
  const data: Record<string, unknown> = { zone: zone.label, ...commandData(args.cmd, args.args, { stdout, stderr }, result.returncode, sandbox.active), ...files };
  if (ran.expanded.length > 0) data.expanded = ran.expanded.map((e) => ({ pattern: e.pattern, count: e.names.length, names: e.names.slice(0, 50) }));
  if (result.flooded) data.stopped = 'endless output: the command was stopped after writing far more than max_output';
  const notes = asideNotes(ran.aside, zone);
  Object.assign(data, notes.data);
  const message =
    (result.returncode === 0
      ? `${args.cmd} finished (exit code 0).`
      : exitStatus(args.cmd, args.args, result.returncode, result.signal)) + notes.message;
  await dropVanished(zone);
  const summary = `Run ${[args.cmd, ...args.args].join(' ')}`.slice(0, 200);
  return { data, message, ...(changed.length > 0 ? { change: { zone, paths: changed, summary } } : {}) };
}

/** git in Documents (and group spaces): history served in-process, no binary, nothing spawned. */
async function history(ctx: CallContext, zone: Zone, gitArgs: string[], limit: number) {
  const out = await gitCommand(zone, gitArgs, ctx.user, {
    maxFileSizeMb: ctx.valves.max_file_size_mb,
    lockOwner: { user_id: ctx.user.id, conv_id: ctx.convId },
    lockMaxAgeHours: ctx.valves.lock_max_age_hours,
    // Group spaces: restore/checkout pass the same ownership guard as every other write (the
    // group's records read once for the call, not once per restored file).
    guard: callGuard(ctx.user.id, zone),
    afterWrite: (written) => recordWritten(ctx, zone, written),
  });
  await dropVanished(zone);
  const shown = (text: string, stream: 'stdout' | 'stderr') => truncateText(text, Buffer.byteLength(text), Buffer.byteLength(text), limit, stream);
  const stdout = shown(out.stdout, 'stdout');
  const stderr = shown(out.stderr, 'stderr');
  const data: Record<string, unknown> = { zone: zone.label, ...commandData('git', gitArgs, { stdout, stderr }, out.returncode, 'in-process') };
  if (out.commit !== undefined) data.commit = out.commit;
  const sub = gitArgs[0] ?? '';
  const message = out.returncode === 0 ? `git ${sub} finished (exit code 0).` : `git ${sub} FAILED with exit code ${out.returncode}; see stderr.`;
  return { data, message };
}
