/**
 * CPU priority of commands (see COMMAND_NICE): the launcher sets it at the start, before the program
 * runs; lowerCommand lowers it further for a running command.
 */
import fs from 'node:fs';
import os from 'node:os';

/**
 * Commands run below the server's priority: the host's event loop (every other user's requests, and
 * the quota watch that must catch a fast writer) runs first when both want the CPU. Each command is a
 * session of its own, which Linux schedules as one group (autogroup) against the server's: that
 * group's nice value is what counts, and it covers every process of the command at once. Where
 * autogroups are off, each process's own nice value counts. The launcher (launcher-script.ts) sets
 * both in its own process before it runs the program (or bubblewrap), so every process of the
 * command, from the first, runs at this priority: none is ever seen at the server's.
 */
export const COMMAND_NICE = 10;
/**
 * A command that could pass its quota with one more file yields almost all of a contended CPU: the
 * quota watch must see each write before the next (measured: with the test suite loading both CPUs,
 * the overshoot of a 30-file archive bomb fell from up to 13 MB at nice 10 to under 2 MB at 19).
 */
export const COMMAND_NICE_NEAR_LIMIT = 19;

function lowerPriority(pid: number, nice: number, sessionLeader = false): void {
  try {
    os.setPriority(pid, nice);
    if (sessionLeader) fs.writeFileSync(`/proc/${pid}/autogroup`, String(nice));
  } catch {
    // not permitted, not Linux, or already gone: it keeps its priority
  }
}

/** Lowers a running command's priority: its session's (its first process leads one) and each of its processes'. */
export function lowerCommand(leader: number, nice: number): void {
  lowerPriority(leader, nice, true);
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
