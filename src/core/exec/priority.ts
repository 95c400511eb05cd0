/**
 * CPU priority of commands (see COMMAND_NICE): set on the command's session (autogroup) and on its
 * processes, with bwrap held at the start until its sandbox's first process has been reniced.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import type { Readable, Writable } from 'node:stream';

/**
 * Commands run below the server's priority: the host's event loop (every other user's requests, and
 * the quota watch that must catch a fast writer) runs first when both want the CPU. Each command is a
 * session of its own, which Linux schedules as one group (autogroup) against the server's: that
 * group's nice value is what counts, and it covers every process of the command at once. Where
 * autogroups are off, each process's own nice value counts: the shell's is set just after the start
 * (it then becomes the command, and its children inherit it); bwrap creates its sandbox's first
 * process at once, in namespaces that take milliseconds to make, so it reports that process
 * (--info-fd) and waits (--block-fd) until it has been reniced, and the command is forked from it.
 */
export const COMMAND_NICE = 10;
/**
 * A command that could pass its quota with one more file yields almost all of a contended CPU: the
 * quota watch must see each write before the next (measured: with the test suite loading both CPUs,
 * the overshoot of a 30-file archive bomb fell from up to 13 MB at nice 10 to under 2 MB at 19).
 */
export const COMMAND_NICE_NEAR_LIMIT = 19;
const BWRAP_INFO_FD = 3;
const BWRAP_BLOCK_FD = 4;
/** bwrap options for the above; the spawn passes two pipes at these descriptors. */
export const SANDBOX_PRIORITY_ARGS = ['--info-fd', String(BWRAP_INFO_FD), '--block-fd', String(BWRAP_BLOCK_FD)];

function lowerPriority(pid: number, nice: number, sessionLeader = false): void {
  try {
    os.setPriority(pid, nice);
    if (sessionLeader) fs.writeFileSync(`/proc/${pid}/autogroup`, String(nice));
  } catch {
    // not permitted, not Linux, or already gone: it keeps its priority
  }
}

/** Lowers a command's priority at its start: its session's (it leads one) and its first process's. */
export function lowerSession(leader: number, nice: number): void {
  lowerPriority(leader, nice, true);
}

/** Lowers a running command's priority: its session's and each of its processes'. */
export function lowerCommand(leader: number, nice: number): void {
  lowerSession(leader, nice);
  for (const pid of descendants(leader)) lowerPriority(pid, nice);
}

/** The processes `pid` started, and theirs (Linux /proc; none where it cannot be read). */
function descendants(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      for (const child of fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ')) {
        if (child.trim() !== '') out.push(Number(child), ...descendants(Number(child)));
      }
    }
  } catch {
    // gone meanwhile, or no /proc
  }
  return out;
}

/** Renices bwrap's first sandbox process once bwrap reports it, then lets it start the command (see COMMAND_NICE). */
export function releaseSandbox(child: ChildProcess, nice: () => number): void {
  const info = child.stdio[BWRAP_INFO_FD] as Readable;
  const gate = child.stdio[BWRAP_BLOCK_FD] as Writable;
  // bwrap gone early: its exit is reported as usual
  info.on('error', () => undefined);
  gate.on('error', () => undefined);
  let text = '';
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    gate.end('\n');
  };
  info.on('data', (chunk: Buffer) => {
    if (released) return; // whatever else bwrap reports is not needed
    text += chunk.toString();
    const pid = /"child-pid":\s*(\d+)/.exec(text)?.[1];
    if (pid === undefined) return;
    lowerPriority(Number(pid), nice());
    release();
  });
  info.once('end', release);
}

