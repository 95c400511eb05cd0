import { z } from 'zod';
import { exitStatus } from './exit-meaning.js';
import { shedError } from '../core/base/errors.js';
import { executeCommand } from '../core/services/exec/execute.js';
import { capturedText } from '../core/services/exec/output.js';
import { commandData } from './exec-shared.js';
import { lockFile, refreshLock } from '../core/base/locks/locks.js';
import { invalidateCopies, roomWithCopies } from '../core/services/quota/working-copies.js';
import { collectScratch, openScratch } from '../core/base/locks/scratch.js';
import { requireSession } from '../core/base/locks/session.js';
import type { Zone } from '../core/base/zones/zones.js';
import { defineFunction } from '../registry/define.js';
import { outputLimit, renderCall } from '../core/base/text/format.js';
import { allowZoneInPath, groupParam, pathParam, zoneParam } from '../registry/params.js';
import { EDIT_ZONES, editTarget } from '../core/base/files/edit-target.js';
import { formatSize } from '../core/base/text/size.js';

const MIB = 1024 * 1024;

export const shedLockeditExec = defineFunction({
  name: 'shed_lockedit_exec',
  category: 'edit',
  summary: 'Run a command on the working copy.',
  description: 'Run a whitelisted command on the working copy of a locked edit, e.g. cmd="sed", args=["-i", "s/a/b/", "notes.md"]. It sees only that file.',
  params: {
    zone: zoneParam(EDIT_ZONES),
    path: pathParam('The file being edited'),
    cmd: z.string().min(1).describe('Program, e.g. "sed"'),
    args: z.array(z.string()).default([]).describe('Arguments; name the file by its path'),
    timeout: z.number().int().optional().describe('Seconds (the admin caps it)'),
    max_output: z.number().int().optional().describe('Characters kept; 0 = admin max'),
    group: groupParam,
    allow_zone_in_path: allowZoneInPath,
  },
  zones: { accepted: EDIT_ZONES, writes: true },
  mutates: true,
  example: { zone: 'storage', path: 'report.md', cmd: 'sed', args: ['-i', 's/draft/final/g', 'report.md'] },
  paramHints: { args: 'Each argument is its own item: args=["-i", "s/a/b/", "report.md"].' },
  async handler(args, ctx) {
    const t = editTarget(ctx, args, 'write');
    const session = requireSession(t.zone, t.key, t.owner, t.names);
    if (args.cmd === 'git') {
      throw shedError('COMMAND_FORBIDDEN', 'git has nothing to work on in a locked edit (the command sees only the working copy).', {
        details: { parameter: 'cmd', received: 'git' },
        hint: `Use shed_exec(zone="${args.zone}", cmd="git", args=["log"]) for history; edit the working copy with e.g. cmd="sed".`,
      });
    }
    const timeoutSec = Math.min(Math.max(args.timeout ?? ctx.valves.exec_timeout_default, 1), ctx.valves.exec_timeout_max);
    const limit = outputLimit(ctx, args.max_output);
    // "." stands for the file (as in the original); every argument is then judged by the shed_exec policy.
    const argv = args.args.map((a) => (a === '.' ? t.target.rel : a));
    // The working copy may grow by what is left of the quota (open edits counted), within the file size limit.
    const room = Math.max(0, await roomWithCopies(t.zone.scope));
    const copySize = session.copyStat!.size;
    const maxFile = Math.min(ctx.valves.max_file_size_mb * MIB, room + copySize);

    const scratch = openScratch(t.zone, ctx.convId, t.target.rel, session.copy);
    try {
      // The policy judges paths against the scratch folder: the only thing the command may name. All the
      // command writes there counts against the quota while it runs (the working copy grows by at most what is free).
      const view: Zone = { ...t.zone, root: scratch.root, workBase: undefined, versioned: false, readonly: false };
      const { result, sandbox, overQuota } = await executeCommand({
        valves: ctx.valves,
        cmd: args.cmd,
        args: argv,
        zone: view,
        scratch: { bytes: room + copySize, fileBytes: maxFile },
        timeoutSec,
        captureBytes: limit * 4 + 4,
        unconfinedAllowed: ctx.host.allowsUnconfined !== false,
        caller: ctx.user.id,
      });
      if (overQuota) {
        invalidateCopies(t.zone.scope);
        const cut = overQuota.undone.cut.some((c) => c.path === t.target.rel);
        throw shedError('QUOTA_EXCEEDED', `${args.cmd} ${overQuota.stopped ? 'was stopped: it wrote' : 'wrote'} past the quota (by ${formatSize(overQuota.end.overBytes)}, working copy included; ${formatSize(room)} of the quota were free, open edits count). What it added was taken back: everything it wrote beside the working copy is discarded, and the working copy ${cut ? 'was cut back to its size before the command' : 'did not grow'}.`, {
          details: { command: args.cmd, stopped: overQuota.stopped, over_by_bytes: overQuota.end.overBytes, free_bytes: room, quota_bytes: t.zone.scope.limitBytes, working_copy_cut_back: cut },
          hint: `Look at it with ${renderCall('shed_lockedit_exec', { zone: args.zone, path: t.target.rel, cmd: 'head', args: ['.'] })}, drop the edit with ${t.names.cancel}, or free space first (shed_stats shows usage).`,
        });
      }
      const copy = collectScratch(scratch, maxFile);
      invalidateCopies(t.zone.scope);
      await refreshLock(lockFile(t.zone, t.key)!, session.lock!); // an active edit does not expire
      if (result.timedOut) {
        throw shedError('TIMEOUT', `${args.cmd} was stopped after ${timeoutSec}s (timeout); the working copy may be partly changed.`, {
          details: { command: args.cmd, timeout: timeoutSec },
          hint: `Look at it with ${renderCall('shed_lockedit_exec', { zone: args.zone, path: t.target.rel, cmd: 'head', args: ['.'] })}, or drop the edit with ${t.names.cancel}.`,
        });
      }
      const stdout = capturedText(result.stdout, view, limit, 'stdout');
      const stderr = capturedText(result.stderr, view, limit, 'stderr');
      const data: Record<string, unknown> = {
        zone: t.zone.label,
        path: t.target.rel,
        ...commandData(args.cmd, args.args, { stdout, stderr }, result.returncode, sandbox.active),
        working_copy_size: copy.size,
        working_copy_changed: copy.changed,
      };
      if (copy.note) data.note = copy.note;
      const status =
        result.returncode === 0
          ? `${args.cmd} finished (exit code 0)`
          : exitStatus(args.cmd, args.args, result.returncode, result.signal).replace(/\.$/, '');
      const effect = copy.changed ? `the working copy changed (${copy.size} bytes); save with ${t.names.save}` : 'the working copy is unchanged';
      return { data, message: `${status}; ${effect}.` };
    } finally {
      await scratch.remove();
    }
  },
});
