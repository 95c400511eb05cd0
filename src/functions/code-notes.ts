/**
 * Errors that teach, for scripts (shed_run_python, shed_run_shell): what a failed run's stderr and
 * end say, read into one short sentence each for the answer's message: the error and the line of the
 * code it happened on; a missing module, with the ones that are there; the network, off for code
 * unless network_mode is "all"; a program a script may not start; a limit that stopped it.
 */
import type { RunResult } from '../core/services/exec/launcher/run-types.js';
import type { ScriptKind } from '../core/services/exec/code/plan.js';
import type { PythonReport } from '../core/services/exec/code/python-probe.js';
import type { Valves } from '../core/base/valves.js';
import { dialectNote } from './shell-dialect.js';

export interface ScriptRun {
  kind: ScriptKind;
  /** stderr as the model reads it (disk paths shown as /zone and /tmp). */
  stderr: string;
  result: Pick<RunResult, 'returncode' | 'signal' | 'stoppedFor'>;
  valves: Pick<Valves, 'network_mode' | 'exec_memory_limit_mb' | 'max_file_size_mb'>;
  /** Where the code is, as its tracebacks name it: /tmp/main.py, or /zone/<path>. */
  codeFile: string;
  /** The script's text when the call gave it (the shell's bash-isms are read off it). */
  code?: string;
}

/** The last line of a Python traceback (`ZeroDivisionError: division by zero`) and the line of the code it points at. */
export function pythonError(stderr: string, codeFile: string): { error: string; line?: number } | undefined {
  const lines = stderr.split('\n').map((l) => l.trimEnd());
  const error = [...lines].reverse().find((l) => /^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt|Warning)\b(:.*)?$/.test(l));
  if (error === undefined) return undefined;
  const at = new RegExp(`^\\s*File "${codeFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}", line (\\d+)`);
  const hit = [...lines].reverse().map((l) => at.exec(l)).find((m) => m !== null);
  return hit ? { error, line: Number(hit[1]) } : { error };
}

const NETWORK = /\[Errno 13\][^\n]*|Permission denied/;
const NETWORK_CONTEXT = /socket|urlopen|URLError|ConnectionError|connect|http|getaddrinfo|gaierror|Temporary failure in name resolution|Could not resolve/i;

/** Sentences explaining what went wrong in a script run, read off its stderr and end (empty when there is nothing to add). */
export function scriptNotes(run: ScriptRun, python: PythonReport | undefined): string[] {
  const { stderr, result, valves } = run;
  const notes: string[] = [];
  const stopped = result.stoppedFor;
  if (stopped === 'memory') notes.push(`It was stopped: its processes held more than ${valves.exec_memory_limit_mb} MB of memory together (admin setting exec_memory_limit_mb); work on less data at a time (chunksize= in pandas, usecols=).`);
  else if (stopped === 'processes') notes.push('It was stopped: it ran too many processes and threads at once.');
  else if (stopped === 'path_too_long') notes.push('It was stopped: it nested folders past the path length limit (4,096 bytes), which no tool can reach; what it made that deep was removed.');
  else if (stopped === 'call_folders') notes.push('It was stopped: its temporary files (HOME, TMPDIR) grew too large; write results into the zone instead.');
  else if (result.signal === 'SIGSEGV' || result.signal === 'SIGABRT' || /\bMemoryError\b|Cannot allocate memory|Unable to allocate/.test(stderr)) {
    notes.push(`With a memory limit of ${valves.exec_memory_limit_mb} MB per process (admin setting exec_memory_limit_mb) this usually means it ran out of memory: work on less data at a time.`);
  }
  if (result.signal === 'SIGXFSZ' || /File too large|\[Errno 27\]/.test(stderr)) {
    notes.push(`A file reached the largest size a call may write: the space left in the quota, at most ${valves.max_file_size_mb} MB (admin setting max_file_size_mb); shed_stats shows what is used.`);
  }
  if (valves.network_mode !== 'all' && (NETWORK.test(stderr) || /name resolution|gaierror|Could not resolve host/i.test(stderr)) && NETWORK_CONTEXT.test(stderr)) {
    notes.push(`The network is off for code: only the admin setting network_mode="all" lets scripts connect (it is "${valves.network_mode}" here${valves.network_mode === 'safe' ? '; "safe" allows downloads with shed_exec curl/wget, not from code' : ''}). Ask the user to upload the data instead.`);
  }
  if (run.kind === 'python') {
    const missing = /ModuleNotFoundError: No module named '([^'.]+)/.exec(stderr)?.[1];
    if (missing !== undefined) {
      const have = python === undefined ? [] : Object.entries(python.packages).map(([name, v]) => (v ? `${name} ${v}` : name));
      notes.push(`The module '${missing}' is not installed on this server${have.length > 0 ? `; these are: ${have.join(', ')} (and the standard library)` : ''}. Nothing can be installed from code: an admin would add it to the server.`);
    }
    if (/SemLock|multiprocessing[/\\].*\n(.*\n)*.*PermissionError|shared_memory/.test(stderr)) {
      notes.push('Process pools (multiprocessing, ProcessPoolExecutor) need shared memory (/dev/shm), which code may not use: work in one process, or use threads (concurrent.futures.ThreadPoolExecutor, multiprocessing.dummy).');
    }
    if (/subprocess|os\.exec|os\.posix_spawn|os\.spawn|ctypes/.test(stderr) && /Permission denied|\[Errno 13\]/.test(stderr) && !NETWORK_CONTEXT.test(stderr)) {
      notes.push("Code may start no other program (only Python itself): use Python's own modules (shutil, zipfile, csv, json ...), or shed_exec for a whitelisted command.");
    }
  } else {
    const refused = [...stderr.matchAll(/^[^\n:]*: \d+: ([^\n:]+): Permission denied$/gm)].map((m) => m[1]!);
    for (const program of new Set(refused)) {
      notes.push(
        program === 'curl' || program === 'wget'
          ? `${program} runs in scripts only when the admin setting network_mode is "all" (it is "${valves.network_mode}" here).`
          : `'${program}' may not run here: a shell script runs only the zone's whitelisted programs (shed_allowed_commands lists them), never an interpreter.`,
      );
    }
    const failed = result.returncode !== 0 || /^[^\n:]*: \d+: /m.test(stderr);
    const dialect = run.code !== undefined ? dialectNote(run.code, failed) : undefined;
    if (dialect !== undefined) notes.push(dialect.note);
    const unknown = [...stderr.matchAll(/^[^\n:]*: \d+: ([^\n:]+): not found$/gm)].map((m) => m[1]!).filter((w) => !dialect?.words.has(w));
    if (unknown.length > 0) notes.push(`Not installed here: ${[...new Set(unknown)].join(', ')} (shed_allowed_commands lists the programs that are).`);
  }
  return notes;
}
