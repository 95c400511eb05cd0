/**
 * Applying an undo, crash-safe. The plan (each path and the state it gets back) is written first as
 * a journal in the capture store; then each path is replaced atomically (temp + rename: a kill
 * leaves the old file or the new one, never a mix) or removed; then the versioned zones get their
 * "Undo turn …" commit; then the journal goes. A call that finds a journal (the holder was killed)
 * applies it again from the start: every step is idempotent, so the undo is finished, never half.
 * The blobs the journal points to stay: the store's collection (collect.ts) waits while a journal is pending.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Identity } from '../../base/identity.js';
import { atomicWrite, tempPathFor } from '../../base/fs/atomic.js';
import { inheritOwner, mkdirInheriting } from '../../base/fs/owner.js';
import { TimeSlice } from '../../base/fs/slice.js';
import { commitZone } from '../vcs/commit.js';
import { EXEC_MODE, LINK_MODE } from '../../formats/git/names.js';
import type { FileState } from '../vcs/history/trees.js';
import { readUndoBlob } from './deltas.js';
import { undoDir, whereIs } from './where.js';
import { noteCommit } from './turn.js';
import { readText } from '../../base/fs/read.js';
import { removeTree } from '../../base/fs/remove-tree.js';
import { lstatIfAny } from '../../base/fs/stat.js';
import type { PlanItem } from './plan.js';

/** Where a planned path lies (plan.ts), and what goes back there. */
export interface JournalItem extends Pick<PlanItem, 'tree' | 'label' | 'root' | 'gitdir' | 'versioned' | 'rel'> {
  /** The state to put back (undefined: remove the path). */
  target: FileState | undefined;
}

export interface Journal {
  v: 1;
  /** The turn being undone (the commit message names it). */
  turn: string;
  items: JournalItem[];
}

function journalPath(home: string): string {
  return path.join(undoDir(home), 'journal.json');
}

/** Test hook: a child process being killed mid-undo pauses here so the kill lands between steps. */
let stepHook: (() => Promise<void>) | undefined;
export function setUndoStepHook(fn: (() => Promise<void>) | undefined): void {
  stepHook = fn;
}

export async function applyUndo(home: string, journal: Journal, author: Identity): Promise<{ commits: string[] }> {
  fs.mkdirSync(undoDir(home), { recursive: true });
  // Trees by name, not disk paths: another instance (another mount point) may finish it.
  const stored = { ...journal, items: journal.items.map(({ root: _r, gitdir: _g, ...rest }) => rest) };
  await atomicWrite(journalPath(home), Buffer.from(JSON.stringify(stored)));
  return runJournal(home, journal, author);
}

/** Finishes an undo a killed call left (nothing when there is none); the turn it undid, if any. */
export async function finishPendingUndo(home: string, author: Identity): Promise<string | undefined> {
  let journal: Journal;
  // Almost every call finds none: one existence check, not a thrown ENOENT (only this call, under
  // the call lock, writes the journal, so it cannot appear in between).
  if (!fs.existsSync(journalPath(home))) return undefined;
  try {
    journal = JSON.parse(readText(journalPath(home))) as Journal;
    journal.items = journal.items.map((i) => ({ ...i, ...whereIs(home, i.tree) }));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    fs.rmSync(journalPath(home), { force: true }); // torn before its atomic rename cannot happen; unreadable: nothing was applied
    return undefined;
  }
  await runJournal(home, journal, author);
  return journal.turn;
}

async function runJournal(home: string, journal: Journal, author: Identity): Promise<{ commits: string[] }> {
  const slice = new TimeSlice();
  for (const item of journal.items) {
    await slice.tick();
    if (stepHook) await stepHook();
    await putBack(item);
  }
  // One commit per versioned zone: history keeps the turn and its undo (undoing the undo redoes).
  const zones = new Map<string, { item: JournalItem; paths: string[] }>();
  for (const item of journal.items) {
    if (!item.versioned) continue;
    const z = zones.get(item.gitdir) ?? { item, paths: [] };
    z.paths.push(item.rel);
    zones.set(item.gitdir, z);
  }
  const commits: string[] = [];
  for (const { item, paths } of zones.values()) {
    if (stepHook) await stepHook();
    const oid = await commitZone({ root: item.root, label: item.label }, paths, author, `Undo turn ${journal.turn}`);
    if (oid !== undefined) {
      commits.push(oid.slice(0, 7));
      noteCommit({ tree: item.tree, label: item.label, root: item.root, gitdir: item.gitdir, oid, versioned: true });
    }
  }
  fs.rmSync(journalPath(home), { force: true });
  return { commits };
}

async function putBack(item: JournalItem): Promise<void> {
  const abs = path.join(item.root, item.rel);
  const { target } = item;
  if (target === undefined) {
    const st = lstatIfAny(abs);
    if (st !== undefined && !st.isDirectory()) fs.unlinkSync(abs);
    removeEmptyParents(item.root, path.dirname(abs));
    return;
  }
  const bytes = await readUndoBlob(item.gitdir, target.oid);
  // A folder standing where the file was (made later, forced): out of the way first.
  const st = lstatIfAny(abs);
  if (st?.isDirectory()) await removeTree(abs);
  ensureFolders(item.root, path.dirname(abs));
  if (target.mode === LINK_MODE) {
    const tmp = tempPathFor(abs);
    fs.symlinkSync(bytes, tmp);
    fs.renameSync(tmp, abs);
    return;
  }
  replaceFile(abs, bytes, target.mode === EXEC_MODE ? 0o755 : 0o644);
}

/**
 * Temp file + rename, without an fsync per file: a kill at any moment leaves the old file or the
 * new one (rename is atomic; written pages outlive the process), and the journal (written with an
 * fsync) stays until every path is done, so the next call redoes them all. An fsync per file made a
 * 1,000-file undo cost seconds, where git checkout costs milliseconds.
 */
function replaceFile(abs: string, bytes: Uint8Array, mode: number): void {
  const tmp = tempPathFor(abs);
  const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, mode);
  try {
    let off = 0;
    while (off < bytes.length) off += fs.writeSync(fd, bytes, off, bytes.length - off);
    fs.fchmodSync(fd, mode); // the umask may have narrowed it
    inheritOwner(fd, path.dirname(abs)); // under identity separation: the user's, as anything they made
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  fs.renameSync(tmp, abs);
}

/** The folders on the way, where a file (or link) stands in the way: that entry moves out of the way. */
function ensureFolders(root: string, dir: string): void {
  const rel = path.relative(root, dir);
  if (rel === '' || rel.startsWith('..')) return;
  let at = root;
  for (const part of rel.split(path.sep)) {
    at = path.join(at, part);
    const st = lstatIfAny(at);
    if (st !== undefined && !st.isDirectory()) fs.unlinkSync(at);
    if (st === undefined || !st.isDirectory()) mkdirInheriting(at);
  }
}

/** Folders a created file needed and that the undo leaves empty go too (not the zone root). */
function removeEmptyParents(root: string, dir: string): void {
  for (let at = dir; at.startsWith(root + path.sep); at = path.dirname(at)) {
    try {
      fs.rmdirSync(at);
    } catch {
      return;
    }
  }
}
