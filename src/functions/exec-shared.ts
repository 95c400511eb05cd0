/**
 * What the functions that run a program in a zone (shed_exec, shed_run_python, shed_run_shell) share
 * around the one executor: the timeout they may ask for, output files written into the zone, and the
 * parts of their answer about what was set aside and put back, or undone past the quota.
 */
import fs from 'node:fs';
import { shedError } from '../core/base/errors.js';
import type { OwnershipRecord } from '../core/services/groups/access.js';
import type { ExecOutcome } from '../core/services/exec/execute.js';
import type { AsideReport } from '../core/services/exec/guards/aside.js';
import { openOutputTemp, type OutputTemp } from '../core/services/exec/guards/output-file.js';
import { filesAllowed } from '../core/services/exec/guards/callwatch.js';
import { recordChange } from '../core/services/vcs/seam.js';
import type { Zone } from '../core/base/zones/zones.js';
import type { CallContext } from '../registry/define.js';
import { locate, requireNotRoot, type ZonedPath } from '../core/base/files/located.js';
import { diskRel } from '../core/base/files/entries.js';
import { deniedError, dropVanished } from '../core/services/groups/enforce.js';
import { formatSize } from '../core/base/text/size.js';
import { scopeTotal } from '../core/services/quota/quota.js';
import { callLockAbandoned } from '../core/base/locks/call-lock.js';
import { hasPendingUndo } from '../core/services/undo/apply.js';

/**
 * What the response says when putting things back after the command found work to do: what it
 * had made at a blocked entry's place (moved aside), extra names of blocked files it had taken
 * (dropped), and group files it may not change that it had changed (restored; its version kept aside).
 */
export function asideNotes(report: AsideReport, zone: Zone): { data: Record<string, unknown>; message: string } {
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

/**
 * The command wrote past the quota and was stopped (or finished over it). What it added was
 * removed again (over-quota.ts): the files, links and folders it created, and what it grew existing
 * files by; its stdout_file/stderr_file are discarded. What is left of its changes (deletions,
 * files it shrank) is committed in versioned zones, so history matches the disk. The response is a
 * QUOTA_EXCEEDED error saying what was undone.
 */
export async function quotaStopped(ctx: CallContext, zone: Zone, cmd: string, cmdArgs: readonly string[], changed: string[], over: NonNullable<ExecOutcome['overQuota']>): Promise<never> {
  await dropVanished(zone);
  const { end, stopped, undone } = over;
  const summary = `Run ${[cmd, ...cmdArgs].join(' ')} (stopped: quota exceeded)`.slice(0, 200);
  const saved = zone.versioned && changed.length > 0 ? await recordChange(zone, { paths: changed, summary }, ctx.user, undefined) : {};
  const limit = zone.scope.limitBytes;
  const what = [undone.removed.length > 0 ? `${undone.removed.length} new file(s) or folder(s) it made were removed` : '', undone.cut.length > 0 ? `${undone.cut.length} file(s) it made larger were cut back to their size before` : ''].filter(Boolean).join(', and ');
  // Past the bytes of the quota, or past the files it allows (one per 256 bytes: empty files take inodes too).
  const past = end.overFiles > 0 && end.overBytes === 0 ? `the ${filesAllowed(limit).toLocaleString('en-US')} files the quota of ${formatSize(limit)} allows` : `the quota of ${formatSize(limit)}`;
  throw shedError('QUOTA_EXCEEDED', `${cmd} ${stopped ? 'was stopped: it wrote' : 'finished, but wrote'} past ${past}. What it added was taken back${what ? ` (${what})` : ''}: ${formatSize(end.usedBytes)} are used now.`, {
    details: {
      command: cmd,
      stopped,
      used_bytes: end.usedBytes,
      quota_bytes: limit,
      over_by_bytes: end.overBytes,
      ...(end.overFiles > 0 ? { over_by_files: end.overFiles, files_allowed: filesAllowed(limit) } : {}),
      removed: undone.removed.slice(0, 20),
      cut_back: undone.cut.slice(0, 20),
      ...(saved.commit ? { commit: saved.commit } : {}),
    },
    hint: `Free space first (shed_delete(zone="${zone.name}", path="...") on what you do not need; shed_stats shows usage per zone), then run it on less data.`,
  });
}

export function clampTimeout(ctx: CallContext, requested: number | undefined): number {
  const { exec_timeout_default: def, exec_timeout_max: max } = ctx.valves;
  return Math.min(Math.max(requested ?? def, 1), max);
}

export interface OutputFile {
  target: ZonedPath;
  file: OutputTemp;
  /** Zone-relative path of the place on disk (the target's real path). */
  place: string;
  /** Once committed: what stood in the way of the place and was moved aside. */
  moved?: { from: string; to: string }[];
}

/**
 * An output file is written to a temp file out of the command's reach and, once it has ended,
 * renamed into place beneath the zone without following any link (core/services/exec/guards/output-file.ts).
 */
export function openOutput(zone: Zone, input: string, param: string, allowZoneInPath: boolean, locked: readonly OwnershipRecord[] = []): OutputFile {
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
  const place = diskRel(target);
  return { target, place, file: openOutputTemp(zone, place, 0o644) };
}

/**
 * The output files are written out of the zone while the command runs, so the call's quota watch
 * does not see them (each is bounded by the file size limit the command runs with: what was left of
 * the quota). Before they land, they must fit with what the command wrote: otherwise they are
 * discarded, what the command changed is committed (versioned zones: history matches the disk), and
 * the answer is QUOTA_EXCEEDED, as when the watch stops a command.
 */
export async function requireOutputRoom(ctx: CallContext, zone: Zone, cmd: string, cmdArgs: readonly string[], changed: string[], outputs: readonly OutputFile[]): Promise<void> {
  if (outputs.length === 0) return;
  let growth = 0;
  for (const o of outputs) growth += fs.fstatSync(o.file.fd).size - (o.target.stat?.isFile() ? o.target.stat.size : 0);
  if (growth <= 0) return;
  const used = await scopeTotal(zone.scope);
  const limit = zone.scope.limitBytes;
  if (used + growth <= limit) return;
  for (const o of outputs) o.file.abort();
  await dropVanished(zone);
  const summary = `Run ${[cmd, ...cmdArgs].join(' ')} (output past the quota)`.slice(0, 200);
  const saved = zone.versioned && changed.length > 0 ? await recordChange(zone, { paths: changed, summary }, ctx.user, undefined) : {};
  throw shedError('QUOTA_EXCEEDED', `${cmd} finished, but its output file${outputs.length > 1 ? 's' : ''} (${formatSize(growth)}) would pass the quota of ${formatSize(limit)} with what it wrote (${formatSize(used)} used): ${outputs.map((o) => o.target.rel).join(', ')} ${outputs.length > 1 ? 'were' : 'was'} not written.`, {
    details: { command: cmd, used_bytes: used, output_bytes: growth, quota_bytes: limit, discarded: outputs.map((o) => o.target.rel), ...(saved.commit ? { commit: saved.commit } : {}) },
    hint: `Free space first (shed_delete(zone="${zone.name}", path="...") on what you do not need; shed_stats shows usage per zone), or narrow the output (head, grep).`,
  });
}

/** Puts a finished output file in place; returns its size. */
export async function commitOutput(out: OutputFile): Promise<number> {
  const size = fs.fstatSync(out.file.fd).size;
  out.moved = await out.file.commit();
  return size;
}

/** The zone-relative paths committing output files changed (each place, and what was moved aside from it). */
export function outputPaths(outputs: readonly (OutputFile | undefined)[]): string[] {
  return outputs.flatMap((o) => (o === undefined ? [] : [o.place, ...(o.moved ?? []).flatMap((m) => [m.from, m.to])]));
}

/**
 * Whether the next modifying call of the user at `home` would recover something first (a call killed
 * holding the call lock, an undo killed midway): a command that would read without the lock runs as
 * a modifying call then, so what it reads is the recovered state, as the first call after a crash
 * always did.
 */
export function recoveryPending(home: string): boolean {
  return callLockAbandoned(home) || hasPendingUndo(home);
}

/** The answer fields every command function gives: what ran, what it printed (already cut to the limit), how it ended. */
export function commandData(cmd: string, args: readonly string[], out: Record<'stdout' | 'stderr', { text: string; truncated: boolean }>, returncode: number, sandbox: string): Record<string, unknown> {
  return { command: cmd, args, stdout: out.stdout.text, stderr: out.stderr.text, returncode, truncated: out.stdout.truncated || out.stderr.truncated, sandbox };
}
