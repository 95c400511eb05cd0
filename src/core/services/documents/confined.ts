/**
 * Runs a converter program (poppler's pdftotext/pdfinfo, ImageMagick's convert) on one file the way
 * commands run: through the one runner, in the sandbox mode commands use, with the exec time,
 * memory and CPU limits, no network, nothing writable but its private temp folder. The program
 * sees the input file alone: it is hard-linked (or copied) into a fresh private folder that is the
 * program's whole "zone", read-only, so a converter compromised by a hostile file can read nothing
 * else of the user's zone (blocked files included) and write nowhere. Programs come from the
 * distribution's folders only (/usr/bin, /bin): a program that parses hostile files is the
 * packaged one, never a same-named file elsewhere on the PATH.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { shedError, ShedError } from '../../base/errors.js';
import { executablesFor } from '../exec/launcher/executables.js';
import { run } from '../exec/launcher/runner.js';
import type { RunResult } from '../exec/launcher/run-types.js';
import { sandboxStatus } from '../exec/launcher/sandbox.js';
import type { Valves } from '../../base/valves.js';

const PREFIX = 'shed-doc-';
const STALE_MS = 3600_000;
let swept = false;

export interface Converter {
  /** Program name, looked up in /usr/bin and /bin. */
  program: string;
  /** Debian package that provides it (named in the error when it is missing). */
  pkg: string;
  /** What it reads, for messages: "PDF files". */
  reads: string;
}

export interface ConvertRun {
  /** The program's arguments, given the input's file name (relative to its working folder). */
  args(input: string): string[];
  /** Bytes of stdout kept (one more tells that there was more). */
  captureBytes: number;
  timeoutSec: number;
}

export function findConverter(c: Converter): string {
  for (const dir of ['/usr/bin', '/bin']) {
    const candidate = path.join(dir, c.program);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  throw shedError('COMMAND_NOT_FOUND', `Reading ${c.reads} needs the program '${c.program}', which is not installed on this server.`, {
    details: { program: c.program, package: c.pkg },
    hint: `An admin can install the Debian package '${c.pkg}' (apt-get install ${c.pkg}). Other files still read normally.`,
  });
}

/** Runs the converter on `inputAbs` (an open, checked regular file of a zone). */
export async function runConverter(valves: Valves, c: Converter, inputAbs: string, ext: string, r: ConvertRun): Promise<RunResult> {
  const program = findConverter(c);
  let sandbox;
  try {
    sandbox = await sandboxStatus(valves.sandbox);
  } catch (err) {
    const why = err instanceof ShedError ? err.message : String(err);
    throw shedError('SANDBOX_UNAVAILABLE', `${c.reads} are converted by a program in the kernel sandbox, and none works here: ${why}`, {
      hint: 'Text files still read normally. An admin must make bubblewrap or Landlock available (shed_allowed_commands() shows the sandbox state).',
    });
  }
  const dir = stage(inputAbs, ext);
  try {
    const input = `input${ext}`;
    const result = await run({
      program,
      args: r.args(input),
      zoneRoot: dir,
      readonly: true,
      sandbox: sandbox.active,
      ...(sandbox.active !== 'validated' ? { landlock: { abi: sandbox.landlockAbi!, executables: executablesFor(c.program, program) } } : {}),
      network: false,
      timeoutSec: r.timeoutSec,
      memoryMb: valves.exec_memory_limit_mb,
      cpuSec: valves.exec_cpu_limit_seconds,
      // Temp files in its private folder only (the input folder is read-only): ImageMagick writes some.
      maxFileBytes: 256 * 1024 * 1024,
      maxProcesses: 64,
      captureBytes: r.captureBytes,
      mergeStderr: false,
    });
    if (result.refused !== undefined) {
      throw shedError('SANDBOX_UNAVAILABLE', `${c.program} was not run: its ${sandbox.active} sandbox could not be set up (${result.refused}).`, {
        hint: 'Nothing was changed. Try again; if it keeps failing, an admin should check shed_allowed_commands() for the sandbox state.',
      });
    }
    if (result.timedOut) {
      throw shedError('TIMEOUT', `Converting the file took longer than ${r.timeoutSec} s and was stopped.`, {
        details: { program: c.program, timeout_seconds: r.timeoutSec },
        hint: 'Read fewer pages per call (pages="1-5"), or ask the admin to raise exec_timeout_default.',
      });
    }
    return result;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A fresh private folder holding only the input (a hard link when the filesystem allows, else a copy). */
function stage(inputAbs: string, ext: string): string {
  if (!swept) {
    swept = true;
    sweepStale();
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), PREFIX)); // 0700
  const dest = path.join(dir, `input${ext}`);
  const fd = fs.openSync(inputAbs, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw shedError('NOT_A_FILE', 'Only regular files can be read.');
    // The converter runs as the server's uid with no capability: a file of another uid (a user's own,
    // under identity separation) that others may not read is copied, so the converter owns what it reads.
    const readable = st.uid === process.geteuid?.() || (st.mode & 0o004) !== 0;
    const linked = readable && linkSame(inputAbs, dest, st);
    // Copied from the open descriptor: whatever the name leads to now, it is the file that was opened.
    if (!linked) {
      fs.copyFileSync(`/proc/self/fd/${fd}`, dest);
      // Newer Node (libuv) keeps the source's owner on a copy: the copy is the server's, so the converter can read it.
      const euid = process.geteuid?.();
      if (euid !== undefined && fs.statSync(dest).uid !== euid) fs.chownSync(dest, euid, process.getegid?.() ?? euid);
    }
    return dir;
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  } finally {
    fs.closeSync(fd);
  }
}

/** A hard link of `inputAbs` at `dest`, kept only when it is the very file checked (not a swapped-in one). */
function linkSame(inputAbs: string, dest: string, st: fs.Stats): boolean {
  try {
    fs.linkSync(inputAbs, dest);
    const got = fs.lstatSync(dest);
    if (got.isFile() && got.ino === st.ino && got.dev === st.dev) return true;
    fs.rmSync(dest, { force: true });
  } catch {
    // no hard links here (another file system, a refused link): copied instead
  }
  return false;
}

function sweepStale(): void {
  try {
    const now = Date.now();
    for (const name of fs.readdirSync(os.tmpdir())) {
      if (!name.startsWith(PREFIX)) continue;
      const p = path.join(os.tmpdir(), name);
      try {
        if (now - fs.statSync(p).mtimeMs > STALE_MS) fs.rmSync(p, { recursive: true, force: true });
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // no temp folder listing: nothing to sweep
  }
}
