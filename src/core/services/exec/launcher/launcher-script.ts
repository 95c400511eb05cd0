/**
 * The command launcher, in Perl (see forkserver.ts for why Perl, and for the protocol's Node side). The
 * Perl is real source (launcher/*.pl: `perl -c` checks it, test/security/launcher-perl.test.ts), imported
 * as text: Vite's `?raw` under vitest, build.mjs's raw-text plugin in the bundle (one file still).
 * Two scripts share one confinement routine (CONFINE):
 *
 * SERVER_SCRIPT, the fork server: one long-lived process per Node process (`perl -e SERVER_SCRIPT
 * -- HEADER INNER_SCRIPT`). It reads requests on stdin and hands each to a **supervisor**: a child
 * subreaper (every process the command leaves behind, daemons included, becomes its child) with the
 * command's pipes and the command's own process, forked before the request came (a spare is kept
 * ready, so no fork lies on a command's path; the next one is forked once the command that took the
 * last one has ended, or 5 ms after it started, so that it does not compete with a short command
 * for the processors). The supervisor reports on stdout, one line
 * per event (stdout is the stream socket Node's spawn made; each line is one write of a few KB at
 * most, which the kernel queues whole, so supervisors' lines never interleave):
 *   S id supervisor-pid stdout-fd stderr-fd control-fd                starting; Node opens the fds
 *                                                                    through /proc/<supervisor>/fd
 *   H id                                                             every process is stopped
 *   E id code signal user-us system-us maxrss-kb why kept status-hex ended, all processes reaped
 *                                                                    (why: - | call_folders | processes | launcher;
 *                                                                    kept: 1 when the call folders are kept)
 *   D id                                                             the supervisor was reaped
 *   F id reason-hex                                                  not started at all
 * Node writes to the control pipe, one line per order: O (its ends are open), K (kill every
 * process), S (stop every process, then H), C (continue them), N<nice> (lower their priority).
 * The supervisor ends only after E and O: until Node holds its own ends of the output pipes, the
 * supervisor's keep what the command wrote.
 *
 * The command's process (what no request changes is done while it waits for one): its own session,
 * killed if its supervisor dies (set again after the identity switch, which clears it), stdin /dev/null, stdout
 * and stderr to the pipes or to the output files Node opened (reopened through /proc/<node>/fd),
 * no other descriptor past exec, its call folders (made, or an earlier call's taken over), its
 * working folder and environment, its priority when the request asks for it from the start (nice,
 * and its session's scheduling group; otherwise, or until the kernel takes it, its supervisor
 * lowers both once the command has run `nice_after` ms), its limits; then CONFINE and the program
 * (landlock and validated modes), or bubblewrap, which starts INNER_SCRIPT inside the sandbox to
 * apply CONFINE there (bwrap mode). Descriptor 3 is the status pipe: `ok` once confined (the
 * program starts next), `exec ...` if the program could not be started, anything else is why the
 * command was refused: it exits 125 and never runs with less.
 *
 * CONFINE, in this order: the sandbox's own mounts (bwrap: a size-bounded /tmp, the zone and /tmp
 * without exec, setuid or devices); RLIMIT_NPROC; the Landlock ruleset; no-new-privileges; every
 * capability dropped (bounding set, securebits locked, ambient, then effective/permitted/
 * inheritable, checked); the seccomp filter; Landlock. Perl builtins and `syscall` only: the inner
 * script loads no module.
 *
 * The caller's kernel identity (request fields uid, gid, groups; valve identity_separation): the
 * command's process takes it (`become`, confine.pl) after its limits and priority and before CONFINE,
 * every id at once (real, effective and saved: Perl sees no set-id start, so no taint mode; shells
 * keep what they have, nothing; access(2) answers for the uid that opens) and checked. The call
 * folders' home/ and tmp/ are then the caller's, their root stays the launcher's (0711).
 *
 * Processes and threads per command (see `bound`): RLIMIT_NPROC where the kernel counts the command's
 * tasks alone (its own user namespace: bwrap, server run as an ordinary user) or the caller's uid
 * alone (identity: the budget then holds for all of that user's commands together); elsewhere
 * RLIMIT_NPROC counts every task of the server's uid, shared by all commands (a bomb in one would use
 * up the room of the others), and root's not at all, so the supervisor counts the command's tasks
 * (every 20 ms, every 5 ms once it runs more than four) and stops it (`why` processes) once it has
 * more than its budget.
 */

import CONFINE from './confine.pl?raw';
import INNER from './inner.pl?raw';
import SERVER from './server.pl?raw';

/**
 * Inside bubblewrap: `perl -e INNER_SCRIPT KEY VALUE ... -- PROGRAM ARGS...` with the status pipe on
 * descriptor 3 (inherited through bubblewrap).
 */
export const INNER_SCRIPT = `${CONFINE}${INNER}`;

/** The fork server: `perl -e SERVER_SCRIPT -- HEADER INNER_SCRIPT`. */
export const SERVER_SCRIPT = `${CONFINE}${SERVER}`;
