/**
 * CPU priority of commands (see COMMAND_NICE): the launcher sets it in the command's process before
 * the program runs; the command's supervisor lowers it further for every process of a running
 * command (launcher-script.ts, ordered by the runner's `yieldCpu`).
 */

/**
 * A command that runs longer than COMMAND_NICE_AFTER_MS runs below the server's priority: the host's
 * event loop (every other user's requests, and the quota watch that must catch a fast writer) runs
 * first when both want the CPU. Each command is a session of its own, which Linux schedules as one
 * group (autogroup) against the server's: that group's nice value is what counts, and it covers every
 * process of the command at once (a command cannot start another session: setsid is refused by its
 * seccomp filter in the kernel modes). Where autogroups are off, each process's own nice value
 * counts. The command's supervisor sets both, on every process of the command and each session it
 * made. The kernel takes a change of a group's nice from a process without CAP_SYS_ADMIN once per
 * 100 ms for the whole system (a server run as an ordinary user): the supervisor tries again every
 * 20 ms until it holds.
 */
export const COMMAND_NICE = 10;
/**
 * How long a command runs at the server's priority first. A short command (a `cat`, a script that
 * prints a line: most of what a model runs) is not made to wait behind the host's other work: at
 * nice 10 from its start, two CPU hogs of the host on 2 cores made `python3 -c pass` take 3.9x a
 * bare spawn (0.84x at the server's priority). Past this, what runs long yields to the server, as a
 * SQLite statement does past its first 100 ms.
 */
export const COMMAND_NICE_AFTER_MS = 50;

/**
 * The grace a command about to start gets, given how many of this server's commands run already:
 * none once they fill the processors, where commands at the server's priority would crowd out its
 * event loop (50 users running bwrap commands at once on 2 cores: another user's read p99 went from
 * 3.5 to 17-24 ms, the loop's p99 delay from 15 to ~110 ms).
 */
export function niceAfterMs(running: number, processors: number): number {
  return running < processors ? COMMAND_NICE_AFTER_MS : 0;
}

/**
 * A command that could pass its quota with one more file yields almost all of a contended CPU: the
 * quota watch must see each write before the next (measured: with the test suite loading both CPUs,
 * the overshoot of a 30-file archive bomb fell from up to 13 MB at nice 10 to under 2 MB at 19).
 */
export const COMMAND_NICE_NEAR_LIMIT = 19;
