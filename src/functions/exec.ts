import fs from 'node:fs';
import { z } from 'zod';
import { shedError } from '../core/errors.js';
import type { OwnershipRecord } from '../core/groups/access.js';
import { executeCommand, type ExecOutcome } from '../core/exec/execute.js';
import { checkSensitiveGit } from '../core/exec/sensitive.js';
import type { AsideReport } from '../core/exec/aside.js';
import { openAtomic, type AtomicFile } from '../core/fs/atomic.js';
import { recordChange } from '../core/vcs/seam.js';
import { ZONE_NAMES, type Zone } from '../core/zones/zones.js';
import { defineFunction, type CallContext } from '../registry/define.js';
import { allowZoneInPath, groupParam, zoneParam } from '../registry/params.js';
import { locate, requireNotRoot, type ZonedPath } from '../core/files/located.js';
import { outputLimit } from '../core/text/format.js';
import { capturedText, scrubOutput, truncateText } from '../core/exec/output.js';
import { gitCommand } from '../core/vcs/index.js';
import { diskRel } from '../core/files/entries.js';
import { deniedError, dropVanished, guardDiskPath, lockedFiles, recordWritten } from '../core/groups/enforce.js';
import { formatSize } from '../core/text/size.js';

export const shedExec = defineFunction({
  name: 'shed_exec',
  category: 'exec',
  summary: 'Run a whitelisted command (ls, cat, grep, sed, awk, sort, cp, mv, mkdir, tar, git log...) in a zone.',
  description: 'Run a whitelisted program in the zone. No shell: no pipes or > (use stdout_file, then a second call); * ? [..] in file names are expanded in the zone. Check data.returncode and stderr. In Documents, git log/show/diff/restore work.',
  params: {
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
  },
  zones: { accepted: ZONE_NAMES, writes: false },
  mutates: true,
  hints: { openWorld: true },
  example: { zone: 'storage', cmd: 'ls', args: ['-la'] },
  paramHints: { args: 'Each argument is its own item: args=["-n", "5", "notes.txt"].' },
  async handler(args, ctx) {
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
    let ran: ExecOutcome;
    try {
      ran = await executeCommand({
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
        openOutputs: () => {
          if (args.stdout_file) outputs.push((outFile = openOutput(zone, args.stdout_file, 'stdout_file', args.allow_zone_in_path, locked)));
          if (args.stderr_file && !args.redirect_stderr_to_stdout) outputs.push((errFile = openOutput(zone, args.stderr_file, 'stderr_file', args.allow_zone_in_path, locked)));
          return { stdoutFd: outFile?.file.fd, stderrFd: errFile?.file.fd };
        },
      });
    } catch (err) {
      for (const out of outputs) out.file.abort();
      throw err;
    }
    const { result, changed, sandbox } = ran;
    if (ran.overQuota) {
      for (const out of outputs) out.file.abort();
      return quotaStopped(ctx, zone, args.cmd, args.args, changed, ran.overQuota);
    }
    const files: Record<string, unknown> = {};
    for (const [key, file] of [['stdout_file', outFile], ['stderr_file', errFile]] as const) {
      if (!file) continue;
      files[key] = file.target.rel;
      files[`${key}_size`] = commitOutput(file);
    }
    if (result.timedOut) {
      throw shedError('TIMEOUT', `${args.cmd} was stopped after ${timeoutSec}s (timeout).`, {
        details: { command: args.cmd, timeout: timeoutSec, partial_stdout: scrubOutput(result.stdout.bytes.toString('utf8').slice(0, 2000), zone) },
        hint: `Give it more time with timeout= (up to ${ctx.valves.exec_timeout_max}), or work on a smaller part of the data.`,
      });
    }
    const stdout = outFile ? { text: `[Output written to ${outFile.target.rel}]`, truncated: false } : capturedText(result.stdout, zone, limit, 'stdout');
    const stderr = errFile ? { text: `[Errors written to ${errFile.target.rel}]`, truncated: false } : capturedText(result.stderr, zone, limit, 'stderr');
    const data: Record<string, unknown> = {
      zone: zone.label,
      command: args.cmd,
      args: args.args,
      stdout: stdout.text,
      stderr: stderr.text,
      returncode: result.returncode,
      truncated: stdout.truncated || stderr.truncated,
      sandbox: sandbox.active,
      ...files,
    };
    if (ran.expanded.length > 0) data.expanded = ran.expanded.map((e) => ({ pattern: e.pattern, count: e.names.length, names: e.names.slice(0, 50) }));
    if (result.flooded) data.stopped = 'endless output: the command was stopped after writing far more than max_output';
    const notes = asideNotes(ran.aside, zone);
    Object.assign(data, notes.data);
    const message =
      (result.returncode === 0
        ? `${args.cmd} finished (exit code 0).`
        : `${args.cmd} FAILED with exit code ${result.returncode}${result.signal ? ` (signal ${result.signal})` : ''}; see stderr.`) + notes.message;
    await dropVanished(zone);
    const summary = `Run ${[args.cmd, ...args.args].join(' ')}`.slice(0, 200);
    return { data, message, ...(changed.length > 0 ? { change: { zone, paths: changed, summary } } : {}) };
  },
});

/**
 * What the response says when putting things back after the command found work to do: what it
 * had made at a blocked entry's place (moved aside), extra names of blocked files it had taken
 * (dropped), and group files it may not change that it had changed (restored; its version kept aside).
 */
function asideNotes(report: AsideReport, zone: Zone): { data: Record<string, unknown>; message: string } {
  const data: Record<string, unknown> = {};
  let message = '';
  const blocked = report.blocked;
  if (blocked !== undefined && blocked.movedAside.length + blocked.namesDropped.length > 0) {
    data.blocked_names_restored = { moved_aside: blocked.movedAside, names_dropped: blocked.namesDropped };
    const parts = [...blocked.movedAside.map((m) => `'${m.from}' is now '${m.to}'`), ...blocked.namesDropped.map((r) => `'${r}' is a new file now (the blocked file's other name was dropped)`)];
    message += ` Blocked files (admin setting blocked_patterns) are hidden from commands and keep their places: ${parts.join(', ')}.`;
  }
  if (blocked !== undefined && blocked.left > 0) {
    data.blocked_entries_pending = blocked.left;
    message += ` ${blocked.left} blocked entr${blocked.left === 1 ? 'y' : 'ies'} could not be put back yet (the disk refused); kept safe, they return with the next call in this space.`;
  }
  const restored = report.group?.restored ?? [];
  if (restored.length > 0) {
    data.group_files_restored = restored;
    const parts = restored.map((r) => `'${r.path}' (${r.mode === 'owner_ro' ? 'read-only' : `owner ${r.owner}`})${r.kept_as !== undefined ? `, your version is '${r.kept_as}'` : ''}`);
    message += ` ${zone.label} holds files you may not change; the command's changes to them were undone: ${parts.join('; ')}.`;
  }
  return { data, message };
}

/** git in Documents (and group spaces): history served in-process, no binary, nothing spawned. */
async function history(ctx: CallContext, zone: Zone, gitArgs: string[], limit: number) {
  const out = await gitCommand(zone, gitArgs, ctx.user, {
    maxFileSizeMb: ctx.valves.max_file_size_mb,
    lockOwner: { user_id: ctx.user.id, conv_id: ctx.convId },
    lockMaxAgeHours: ctx.valves.lock_max_age_hours,
    // Group spaces: restore/checkout pass the same ownership guard as every other write.
    guard: (rel, action) => guardDiskPath(ctx.user.id, zone, rel, action),
    afterWrite: (written) => recordWritten(ctx, zone, written),
  });
  await dropVanished(zone);
  const shown = (text: string, stream: 'stdout' | 'stderr') => truncateText(text, Buffer.byteLength(text), Buffer.byteLength(text), limit, stream);
  const stdout = shown(out.stdout, 'stdout');
  const stderr = shown(out.stderr, 'stderr');
  const data: Record<string, unknown> = {
    zone: zone.label,
    command: 'git',
    args: gitArgs,
    stdout: stdout.text,
    stderr: stderr.text,
    returncode: out.returncode,
    truncated: stdout.truncated || stderr.truncated,
    sandbox: 'in-process',
  };
  if (out.commit !== undefined) data.commit = out.commit;
  const sub = gitArgs[0] ?? '';
  const message = out.returncode === 0 ? `git ${sub} finished (exit code 0).` : `git ${sub} FAILED with exit code ${out.returncode}; see stderr.`;
  return { data, message };
}

/**
 * The command wrote past the quota and was stopped (or finished over it). What it added was
 * removed again (over-quota.ts): the files, links and folders it created, and what it grew existing
 * files by; its stdout_file/stderr_file are discarded. What is left of its changes (deletions,
 * files it shrank) is committed in versioned zones, so history matches the disk. The response is a
 * QUOTA_EXCEEDED error saying what was undone.
 */
async function quotaStopped(ctx: CallContext, zone: Zone, cmd: string, cmdArgs: string[], changed: string[], over: NonNullable<ExecOutcome['overQuota']>): Promise<never> {
  await dropVanished(zone);
  const { end, stopped, undone } = over;
  const summary = `Run ${[cmd, ...cmdArgs].join(' ')} (stopped: quota exceeded)`.slice(0, 200);
  const saved = zone.versioned && changed.length > 0 ? await recordChange(zone, { paths: changed, summary }, ctx.user, undefined) : {};
  const limit = zone.scope.limitBytes;
  const what = [undone.removed.length > 0 ? `${undone.removed.length} new file(s) or folder(s) it made were removed` : '', undone.cut.length > 0 ? `${undone.cut.length} file(s) it made larger were cut back to their size before` : ''].filter(Boolean).join(', and ');
  throw shedError('QUOTA_EXCEEDED', `${cmd} ${stopped ? 'was stopped: it wrote' : 'finished, but wrote'} past the quota of ${formatSize(limit)}. What it added was taken back${what ? ` (${what})` : ''}: ${formatSize(end.usedBytes)} are used now.`, {
    details: {
      command: cmd,
      stopped,
      used_bytes: end.usedBytes,
      quota_bytes: limit,
      over_by_bytes: end.overBytes,
      removed: undone.removed.slice(0, 20),
      cut_back: undone.cut.slice(0, 20),
      ...(saved.commit ? { commit: saved.commit } : {}),
    },
    hint: `Free space first (shed_delete(zone="${zone.name}", path="...") on what you do not need; shed_stats shows usage per zone), then run it on less data.`,
  });
}

function clampTimeout(ctx: CallContext, requested: number | undefined): number {
  const { exec_timeout_default: def, exec_timeout_max: max } = ctx.valves;
  return Math.min(Math.max(requested ?? def, 1), max);
}

interface OutputFile {
  target: ZonedPath;
  file: AtomicFile;
}

/** An output file is written to a temp file beside it (never through a link) and renamed into place. */
function openOutput(zone: Zone, input: string, param: string, allowZoneInPath: boolean, locked: readonly OwnershipRecord[] = []): OutputFile {
  if (zone.readonly) {
    throw shedError('ZONE_READONLY', `${param} cannot be written: zone="${zone.name}" is read-only.`, {
      details: { parameter: param, received: input },
      hint: 'Write the output in Storage: run the command with zone="storage" on a copy, or omit the output file.',
    });
  }
  const target = locate(zone, input, param, 'write', allowZoneInPath);
  requireNotRoot(target, param);
  if (target.stat?.isDirectory()) {
    throw shedError('NOT_A_FILE', `${param} ${target.shown} is a folder.`, { details: { parameter: param, received: input }, hint: `Name a file, e.g. ${param}="out.txt"` });
  }
  const rec = locked.find((r) => r.path === diskRel(target));
  if (rec !== undefined) throw deniedError(zone, rec, rec.mode === 'owner_ro' ? 'FILE_READ_ONLY' : 'FILE_OWNER_ONLY', 'overwrite');
  return { target, file: openAtomic(target.abs, 0o644) };
}

/** Puts a finished output file in place; returns its size. */
function commitOutput(out: OutputFile): number {
  const size = fs.fstatSync(out.file.fd).size;
  out.file.commit();
  return size;
}
