/**
 * Locked-edit sessions: a file is open for editing in a conversation when that (user,
 * conversation) holds its edit lock and a working copy exists at `{workBase}/editzone/{conv}/{rel}`.
 * Every lockedit function starts from `sessionFor`, which names the state and turns every broken
 * state into an error that says how to get out of it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { shedError } from '../errors.js';
import type { Zone } from '../zones/zones.js';
import { inspectLock, isEditLock, lockFile, pruneEmpty, sameOwner, type LockInfo, type LockOwner } from './locks.js';
import { ID_RULE } from '../identity.js';

export function editzoneRoot(zone: Pick<Zone, 'workBase'>): string {
  return path.join(zone.workBase ?? '/nonexistent', 'editzone');
}

export function workingCopyPath(zone: Pick<Zone, 'workBase'>, convId: string, rel: string): string {
  return path.join(editzoneRoot(zone), convId, rel);
}

export interface Session {
  /** The lock at the path, if readable (whoever holds it). */
  lock: LockInfo | undefined;
  /** This conversation holds the edit lock. */
  ours: boolean;
  /** The working copy of this conversation and what is there (lstat). */
  copy: string;
  copyStat: fs.Stats | undefined;
}

export function sessionFor(zone: Zone, rel: string, owner: LockOwner): Session {
  const file = lockFile(zone, rel)!;
  const state = inspectLock(file);
  const lock = state.state === 'held' ? state.lock : undefined;
  const copy = workingCopyPath(zone, owner.conv_id, rel);
  return {
    lock,
    ours: lock !== undefined && isEditLock(lock) && sameOwner(lock, owner),
    copy,
    copyStat: fs.lstatSync(copy, { throwIfNoEntry: false }),
  };
}

interface Names {
  /** The call that opens the file, e.g. shed_lockedit_open(zone="storage", path="a.txt"). */
  open: string;
  cancel: string;
  shown: string;
}

/**
 * The session of a function that needs an open edit (exec, overwrite, save). Throws
 * NOT_IN_EDIT_MODE when nothing is open, NOT_LOCK_OWNER when the lock is someone else's or was
 * lost, and NOT_IN_EDIT_MODE when the lock is ours but its working copy is gone.
 */
export function requireSession(zone: Zone, rel: string, owner: LockOwner, names: Names): Session {
  const s = sessionFor(zone, rel, owner);
  const haveCopy = s.copyStat?.isFile() === true;
  if (s.ours && haveCopy) return s;
  if (s.ours) {
    throw shedError('NOT_IN_EDIT_MODE', `${names.shown} is locked by this conversation but its working copy is missing (an earlier save may have been interrupted after writing the file).`, {
      details: { path: rel, locked_at: s.lock!.locked_at },
      hint: `Release the lock with ${names.cancel}, or start again with ${names.open}.`,
    });
  }
  if (s.lock !== undefined && !sameOwner(s.lock, owner)) {
    throw shedError('NOT_LOCK_OWNER', `${names.shown} is locked by ${s.lock.user_id === owner.user_id ? 'another conversation' : 'another user'} since ${s.lock.locked_at}${haveCopy ? '; the lock of this conversation was lost (it expired and was taken over, or was force-unlocked), so these unsaved changes cannot be saved safely' : ''}.`, {
      details: { path: rel, locked_at: s.lock.locked_at, lost_session: haveCopy },
      hint: haveCopy
        ? `Discard this working copy with ${names.cancel}; once the other edit is finished, reopen with ${names.open} and redo the change.`
        : `Only the conversation that opened it can change it. If that edit was abandoned: shed_force_unlock(zone=..., path=...).`,
    });
  }
  if (haveCopy) {
    throw shedError('NOT_LOCK_OWNER', `The lock of ${names.shown} was lost (it expired and was taken over, or was removed by shed_force_unlock or shed_maintenance); the unsaved changes cannot be saved safely because the file may have changed since.`, {
      details: { path: rel, lost_session: true },
      hint: `Reopen it with ${names.open} (a fresh copy of the current file replaces the old working copy), then redo the change; or drop it with ${names.cancel}.`,
    });
  }
  throw shedError('NOT_IN_EDIT_MODE', `${names.shown} is not open for editing in this conversation.`, {
    details: { path: rel },
    hint: `Open it first with ${names.open}. shed_lockedit_save and shed_lockedit_cancel close edit mode, so a second save needs a new open.`,
  });
}

/** Conversation ids are folder names of this form (identity.ts); anything else (read from a lock file) is never used as one. */
export const CONV_ID = ID_RULE; // conversation ids are sanitised to the user-id alphabet

/** Removes a working copy and the empty folders above it, up to the editzone folder. */
export function removeWorkingCopy(zone: Pick<Zone, 'workBase'>, convId: string, rel: string): boolean {
  if (!CONV_ID.test(convId)) return false;
  const copy = workingCopyPath(zone, convId, rel);
  const existed = fs.lstatSync(copy, { throwIfNoEntry: false }) !== undefined;
  fs.rmSync(copy, { recursive: true, force: true });
  pruneEmpty(path.dirname(copy), editzoneRoot(zone));
  return existed;
}

/** Working copies of `rel` in every conversation's editzone (for force unlock). */
export function allWorkingCopies(zone: Pick<Zone, 'workBase'>, rel: string): string[] {
  const root = editzoneRoot(zone);
  let convs: string[];
  try {
    convs = fs.readdirSync(root);
  } catch {
    return [];
  }
  return convs.filter((conv) => fs.lstatSync(path.join(root, conv, rel), { throwIfNoEntry: false }) !== undefined);
}
