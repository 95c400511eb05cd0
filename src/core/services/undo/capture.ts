/**
 * The one step around every modifying call (the dispatcher calls it under the call lock): finish an
 * undo a killed call left, bring the shadow repositories up to date, run the call as part of its
 * turn, then record what it changed: its commits in versioned zones (noted by the seam) and its
 * shadow commits in Storage and Uploads. Retention runs after the record is written.
 */
import type { Identity } from '../../base/identity.js';
import type { Valves } from '../../base/valves.js';
import { usageMark } from '../quota/usage.js';
import { finishPendingUndo } from './apply.js';
import { commitShadows, markInterrupted, prepareShadows, suspendShadows } from './shadow.js';

export { markInterrupted };
import { appendTurn, pruneTurns } from './store.js';
import { keepWithinBudget } from './collect.js';
import { withTurn, type TurnCall } from './turn.js';
import fs from 'node:fs';
import path from 'node:path';
import { readHead } from '../vcs/refs.js';
import { whereIs } from './where.js';

/**
 * The user's Documents when it has no history yet and nothing in it: its first commit then starts
 * from nothing, so that commit is undoable (a first commit over files already there is not: what
 * was before it was never recorded).
 */
function emptyVersioned(home: string): Set<string> {
  const { root, gitdir } = whereIs(home, 'documents');
  try {
    if (readHead(gitdir).oid !== undefined) return new Set();
  } catch {
    return new Set();
  }
  // One entry is enough to know (a big folder is not listed whole).
  let dir: fs.Dir | undefined;
  if (!fs.existsSync(root)) return new Set(['documents']); // not created yet: empty (no thrown ENOENT)
  try {
    dir = fs.opendirSync(root);
    return dir.readSync() === null ? new Set(['documents']) : new Set();
  } catch {
    return new Set(['documents']); // not created yet: empty
  } finally {
    dir?.closeSync();
  }
}

export interface CaptureRequest {
  valves: Valves;
  user: Identity;
  home: string;
  turn: string;
  conv: string;
  fn: string;
}

/** Runs the call; when it changed something, the answer names its turn (`turn`, beside data and message). */
export async function captureCall<T extends { turn?: string; message: string }>(given: CaptureRequest, run: () => Promise<T>): Promise<T> {
  // Server state is reached by its real path (a storage base named through a link works; no link is
  // followed beneath it).
  const req = { ...given, home: realHome(given.home) };
  if (!req.valves.undo_enabled) {
    suspendShadows(req.home);
    return run();
  }
  await finishPendingUndo(req.home, req.user);
  const cap = req.valves.undo_max_file_mb * 1024 * 1024;
  const shadows = await prepareShadows(req.home, cap);
  const call: TurnCall = { turn: req.turn, conv: req.conv, fn: req.fn, home: req.home, commits: [], lost: [], emptyBefore: emptyVersioned(req.home) };
  const mark = usageMark();
  const started = Date.now();
  const record = async (): Promise<boolean> => {
    const shadow = await commitShadows(req.home, shadows, mark, started, `Turn ${req.turn}: ${req.fn}`, cap);
    call.commits.push(...shadow.commits);
    call.lost.push(...shadow.lost);
    if (call.commits.length === 0 && call.lost.length === 0) return false;
    appendTurn(req.home, call, Date.now());
    const dropped = pruneTurns(req.home, req.valves.undo_max_turns, req.valves.undo_max_age_days);
    const budget = { maxTurns: req.valves.undo_max_turns, maxBytes: req.valves.undo_max_store_mb * 1024 * 1024 };
    const collected = await keepWithinBudget(req.home, budget, shadow.added, dropped);
    // The newest turn alone was over the byte budget: its answer says what is not undoable.
    if (collected !== undefined) call.lost.push(...collected.lost);
    return true;
  };
  let result: T;
  try {
    result = await withTurn(call, run);
  } catch (err) {
    // What a failed call changed before failing is part of the turn too.
    await record();
    throw err;
  }
  if (await record()) result.turn = req.turn;
  if (call.lost.length > 0) {
    const shown = call.lost.slice(0, 5).map((l) => `${l.tree === 'uploads' ? 'Uploads' : 'Storage'}/${l.tree === 'uploads' ? l.path.split('/').slice(1).join('/') : l.path} (${l.why})`);
    result.message = `${result.message} Not undoable: ${shown.join('; ')}${call.lost.length > 5 ? ` and ${call.lost.length - 5} more` : ''}.`;
  }
  return result;
}

function realHome(home: string): string {
  try {
    return fs.realpathSync.native(home); // in C: no lstat (and Stats object) per component
  } catch {
    try {
      return path.join(fs.realpathSync.native(path.dirname(home)), path.basename(home));
    } catch {
      return home;
    }
  }
}
