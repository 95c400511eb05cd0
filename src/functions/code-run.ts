/**
 * What shed_run_python and shed_run_shell share: one script through the one executor (with the group
 * files the caller may not change, an optional stdout_file) and the answer shed_exec gives
 * (returncode, stdout, stderr, truncation notice), plus the files the script created or changed
 * (`data.files_changed`) and a message that says what failed and why (code-notes.ts). In a versioned
 * zone the call ends with one commit of what it changed; in a group space what it created is the
 * caller's (group_default_mode).
 */
import { scriptExitNote } from './exit-meaning.js';
import { shedError } from '../core/base/errors.js';
import { changedFiles, SCRIPT_NAMES, SCRIPT_RECORDS_MAX, type ScriptRequest } from '../core/services/exec/code/plan.js';
import { executeCommand, type ExecOutcome } from '../core/services/exec/execute.js';
import { capturedText, scrubOutput } from '../core/services/exec/output.js';
import { pythonReport } from '../core/services/exec/code/python-probe.js';
import { outputLimit } from '../core/base/text/format.js';
import { recordChange } from '../core/services/vcs/seam.js';
import type { Zone } from '../core/base/zones/zones.js';
import { dropVanished, lockedFiles, recordWritten } from '../core/services/groups/enforce.js';
import type { CallContext, HandlerResult } from '../registry/define.js';
import { scriptNotes, pythonError } from './code-notes.js';
import { asideNotes, clampTimeout, commitOutput, openOutput, outputPaths, quotaStopped, requireOutputRoom, type OutputFile } from './exec-shared.js';

export interface CodeCall {
  script: ScriptRequest;
  /** What the answer calls it: "Python", "The shell script". */
  label: string;
  /** The default commit message in versioned zones. */
  summary: string;
  timeout: number | undefined;
  max_output: number | undefined;
  stdout_file?: string | undefined;
  allow_zone_in_path: boolean;
}

/** Files listed in an answer; a group space records the caller as owner of up to SCRIPT_RECORDS_MAX new ones. */
const LISTED = 200;

export async function runCode(ctx: CallContext, zone: Zone, call: CodeCall): Promise<HandlerResult> {
  const timeoutSec = clampTimeout(ctx, call.timeout);
  const limit = outputLimit(ctx, call.max_output);
  const locked = await lockedFiles(ctx, zone);
  let out: OutputFile | undefined;
  let ran: ExecOutcome;
  try {
    ran = await executeCommand({
      valves: ctx.valves,
      cmd: call.label,
      args: [],
      zone,
      locked,
      timeoutSec,
      captureBytes: limit * 4 + 4,
      stdoutFile: call.stdout_file !== undefined,
      unconfinedAllowed: ctx.host.allowsUnconfined !== false,
      caller: ctx.user.id,
      script: call.script,
      openOutputs: () => {
        if (call.stdout_file !== undefined) out = openOutput(zone, call.stdout_file, 'stdout_file', call.allow_zone_in_path, locked);
        return { stdoutFd: out?.file.fd };
      },
    });
  } catch (err) {
    out?.file.abort();
    throw err;
  }
  const { result, sandbox } = ran;
  if (ran.overQuota) {
    out?.file.abort();
    return quotaStopped(ctx, zone, call.label, [], ran.changed, ran.overQuota);
  }
  if (out) await requireOutputRoom(ctx, zone, call.label, [], ran.changed, [out]);
  const outputSize = out ? await commitOutput(out) : undefined;
  // The output file lands after the script: a change of its own.
  const withOutput = (paths: string[]) => (out ? [...new Set([...paths, ...outputPaths([out])])].sort() : paths);
  const changed = ran.changed.includes('') ? ran.changed : withOutput(ran.changed);
  const listed = ran.made ? { ...ran.made, files: withOutput(ran.made.files) } : await changedFiles(zone.root, changed, zone.group ? SCRIPT_RECORDS_MAX : LISTED);
  if (zone.group) await recordWritten(ctx, zone, listed.files);
  await dropVanished(zone);
  const shown = (text: string) => scrubOutput(text, zone, result.callFolders);
  const change = zone.versioned && changed.length > 0 ? { change: { zone, paths: changed, summary: call.summary } } : {};
  if (result.timedOut) {
    // What it changed before the timeout stays, and is committed like any change (the history matches the disk).
    const saved = change.change ? await recordChange(zone, change.change, ctx.user, undefined) : {};
    throw shedError('TIMEOUT', `${call.label} was stopped after ${timeoutSec}s (timeout).`, {
      details: {
        timeout: timeoutSec,
        partial_stdout: shown(result.stdout.bytes.toString('utf8').slice(0, 2000)),
        partial_stderr: shown(result.stderr.bytes.toString('utf8').slice(0, 2000)),
        files_changed: listed.files.slice(0, LISTED),
        ...(saved.commit ? { commit: saved.commit } : {}),
      },
      hint: `Give it more time with timeout= (up to ${ctx.valves.exec_timeout_max}), or work on a smaller part of the data.`,
    });
  }
  const stdout = out ? { text: `[Output written to ${out.target.rel}]`, truncated: false } : capturedText(result.stdout, zone, limit, 'stdout', result.callFolders);
  const stderr = capturedText(result.stderr, zone, limit, 'stderr', result.callFolders);
  const files = listed.files.slice(0, LISTED);
  const data: Record<string, unknown> = {
    zone: zone.label,
    stdout: stdout.text,
    stderr: stderr.text,
    returncode: result.returncode,
    truncated: stdout.truncated || stderr.truncated,
    sandbox: sandbox.active,
    files_changed: files,
    ...(listed.complete && listed.files.length <= LISTED ? {} : { files_changed_complete: false }),
    ...(out ? { stdout_file: out.target.rel, stdout_file_size: outputSize } : {}),
  };
  if (result.flooded) data.stopped = 'endless output: it was stopped after writing far more than max_output';
  const notes = asideNotes(ran.aside, zone);
  Object.assign(data, notes.data);
  const made = files.length === 0 ? '' : ` Files changed: ${files.slice(0, 10).join(', ')}${listed.files.length > 10 || !listed.complete ? ' ...' : ''}.`;
  // What its stderr says went wrong is explained even when the script went on and ended well.
  const codeFile = call.script.path !== undefined ? `/zone/${call.script.path}` : `/tmp/${SCRIPT_NAMES[call.script.kind]}`;
  const python = call.script.kind === 'python' && /ModuleNotFoundError/.test(stderr.text) ? await pythonReport(ctx.valves) : undefined;
  const why = scriptNotes({ kind: call.script.kind, stderr: stderr.text, result, valves: ctx.valves, codeFile, ...(call.script.kind === 'shell' && call.script.code !== undefined ? { code: call.script.code } : {}) }, python);
  const explained = why.length > 0 ? ` ${why.join(' ')}` : '';
  const signal = result.signal ? ` (signal ${result.signal})` : '';
  const message =
    result.returncode === 0
      ? `${call.label} finished (exit code 0).${explained}${made}`
      : failedMessage(call, result.returncode, signal, stderr.text, codeFile) + `${explained}${made}`;
  return { data, message: message + notes.message, ...change };
}

/** A non-zero end: FAILED, unless a shell script's last command (grep, diff ...) answered with its code. */
function failedMessage(call: CodeCall, returncode: number, signal: string, stderr: string, codeFile: string): string {
  const answer = call.script.kind === 'shell' && signal === '' ? scriptExitNote(call.script.code, returncode, stderr) : '';
  if (answer !== '') return `${call.label} ended with exit code ${returncode}.${answer}`;
  return `${call.label} FAILED with exit code ${returncode}${signal}${errorAt(call, stderr, codeFile)}; see stderr.`;
}

/** `: ZeroDivisionError: division by zero (line 4 of the code)`, for Python; the shell's messages carry their line already. */
function errorAt(call: CodeCall, stderr: string, codeFile: string): string {
  const found = call.script.kind === 'python' ? pythonError(stderr, codeFile) : undefined;
  if (found === undefined) return '';
  return `: ${found.error.slice(0, 300)}${found.line !== undefined ? ` (line ${found.line} of ${call.script.path ?? 'the code'})` : ''}`;
}
