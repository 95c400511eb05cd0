/**
 * Versioning service (SPEC section 9), as used by the rest of the core:
 * - recordChange: one commit for the paths a call changed (the dispatcher calls it);
 * - snapshot / changedPaths: what a command changed, by stat (shed_exec calls them around a command);
 * - gitCommand: git log/show/diff/status/restore/checkout/blame served in-process.
 */
export { recordChange, type Change, type CommitResult } from './seam.js';
export { commitZone } from './commit.js';
export { changedPaths, snapshot, type Snapshot, type SnapEntry } from './snapshot.js';
export { gitCommand, GIT_SUBCOMMANDS, type GitCommandOptions, type GitOutput } from './history/command.js';
