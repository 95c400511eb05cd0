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
import { BeneathWalk, type BeneathDir, type MovedAside as Aside } from '../../base/fs/beneath.js';
import { inheritOwner } from '../../base/fs/owner.js';
import { TimeSlice } from '../../base/fs/slice.js';
import { commitZone } from '../vcs/commit.js';
import { EXEC_MODE, LINK_MODE } from '../../formats/git/names.js';
import type { FileState } from '../vcs/history/trees.js';
import { readUndoBlob } from './deltas.js';
import { undoDir, whereIs } from './where.js';
import { noteCommit } from './turn.js';
import { readText } from '../../base/fs/read.js';
import { removeTree } from '../../base/fs/remove-tree.js';
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

export async function applyUndo(home: string, journal: Journal, author: Identity): Promise<{ commits: string[]; moved: MovedAside[] }> {
  fs.mkdirSync(undoDir(home), { recursive: true });
  // Trees by name, not disk paths: another instance (another mount point) may finish it.
  const stored = { ...journal, items: journal.items.map(({ root: _r, gitdir: _g, ...rest }) => rest) };
  await atomicWrite(journalPath(home), Buffer.from(JSON.stringify(stored)));
  return runJournal(home, journal, author);
}

/** Finishes an undo a killed call left (nothing when there is none); the turn it undid, if any. */
/** An undo a killed call left half done (its journal): the next modifying call of the user finishes it. */
export function hasPendingUndo(home: string): boolean {
  return fs.existsSync(journalPath(home));
}

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

async function runJournal(home: string, journal: Journal, author: Identity): Promise<{ commits: string[]; moved: MovedAside[] }> {
  const slice = new TimeSlice();
  const places = new Places();
  const moved: MovedAside[] = [];
  try {
    for (const item of journal.items) {
      await slice.tick();
      if (stepHook) await stepHook();
      await putBack(places, item, moved);
    }
  } finally {
    places.close();
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
    const oid = await commitZone({ root: item.root, label: item.label }, [...paths, ...moved.filter((m) => m.root === item.root).flatMap((m) => [m.from, m.to])], author, `Undo turn ${journal.turn}`);
    if (oid !== undefined) {
      commits.push(oid.slice(0, 7));
      noteCommit({ tree: item.tree, label: item.label, root: item.root, gitdir: item.gitdir, oid, versioned: true });
    }
  }
  fs.rmSync(journalPath(home), { force: true });
  return { commits, moved };
}

/** Something a later command left where a folder of the undo belongs, moved aside (`<name>.~N~`). */
export interface MovedAside extends Aside {
  root: string;
}

/**
 * The zones' folders, reached by descriptor beneath each zone root and kept open for the whole
 * undo: a folder a command replaced by a link is never followed (SPEC 8), and each folder is
 * opened once, not walked again for each of its files. Nothing else changes the trees meanwhile
 * (the call lock of the user, and of every group space written, is held); the undo's own changes
 * to folders (made, moved aside, removed) close what is held, to be opened again.
 */
class Places {
  private readonly walks = new Map<string, BeneathWalk>();

  walk(root: string): BeneathWalk {
    let w = this.walks.get(root);
    if (w === undefined) this.walks.set(root, (w = new BeneathWalk(root)));
    return w;
  }

  /** The folder `relDir` if it is there and real all the way (a zone root gone since: nothing). */
  held(root: string, relDir: string): BeneathDir | undefined {
    try {
      return this.walk(root).dir(relDir);
    } catch {
      return undefined;
    }
  }

  /** The folder `relDir` of the zone, made real: missing folders are made (the user's, as the one they are in); a link or file standing in the way is moved aside. */
  folder(root: string, relDir: string, moved: MovedAside[]): BeneathDir {
    const walk = this.walk(root);
    const held = walk.dir(relDir);
    if (held !== undefined) return held;
    const cut = relDir.lastIndexOf('/');
    const parent = this.folder(root, cut < 0 ? '' : relDir.slice(0, cut), moved);
    const name = relDir.slice(cut + 1);
    if (parent.lstat(name) !== undefined) {
      const aside: Aside[] = [];
      parent.moveAside(name, aside);
      moved.push(...aside.map((a) => ({ ...a, root })));
    }
    fs.mkdirSync(parent.child(name), 0o755);
    giveOwnerOf(parent, parent.child(name));
    walk.forget();
    const made = walk.dir(relDir);
    if (made === undefined) throw Object.assign(new Error(`the folder ${relDir} could not be made`), { code: 'EIO' });
    return made;
  }

  close(): void {
    for (const w of this.walks.values()) w.forget();
  }
}

async function putBack(places: Places, item: JournalItem, moved: MovedAside[]): Promise<void> {
  const { target, root } = item;
  // A zone gone since (a group space deleted while a killed undo waited): nothing to put back there,
  // and an undo that could never finish would fail every later call.
  if (!fs.existsSync(root)) return;
  const cut = item.rel.lastIndexOf('/');
  const relDir = cut < 0 ? '' : item.rel.slice(0, cut);
  const name = item.rel.slice(cut + 1);
  if (target === undefined) {
    // The way is not real folders (a later command made a link of one): the turn's file is not there.
    const dir = places.held(root, relDir);
    if (dir === undefined) return;
    const st = dir.lstat(name);
    if (st !== undefined && !st.isDirectory()) fs.unlinkSync(dir.child(name));
    removeEmptyFolders(places.walk(root), relDir);
    return;
  }
  const bytes = await readUndoBlob(item.gitdir, target.oid);
  let dir = places.folder(root, relDir, moved);
  // A folder standing where the file was (made later, forced): out of the way first.
  if (dir.lstat(name)?.isDirectory()) {
    await removeTree(dir.child(name));
    places.walk(root).forget();
    dir = places.folder(root, relDir, moved);
  }
  const tmp = tempPathFor(dir.child(name)); // beside it, named through the held folder
  if (target.mode === LINK_MODE) {
    fs.symlinkSync(bytes, tmp);
    fs.renameSync(tmp, dir.child(name));
    return;
  }
  replaceFile(dir, name, tmp, bytes, target.mode === EXEC_MODE ? 0o755 : 0o644);
}

/**
 * Temp file + rename, without an fsync per file: a kill at any moment leaves the old file or the
 * new one (rename is atomic; written pages outlive the process), and the journal (written with an
 * fsync) stays until every path is done, so the next call redoes them all. An fsync per file made a
 * 1,000-file undo cost seconds, where git checkout costs milliseconds.
 */
function replaceFile(dir: BeneathDir, name: string, tmp: string, bytes: Uint8Array, mode: number): void {
  const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, mode);
  try {
    let off = 0;
    while (off < bytes.length) off += fs.writeSync(fd, bytes, off, bytes.length - off);
    fs.fchmodSync(fd, mode); // the umask may have narrowed it
    inheritOwner(fd, dir.self()); // under identity separation: the user's, as anything they made
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  fs.renameSync(tmp, dir.child(name));
}

/** A folder the server made takes the owner of the one it is in (owner.ts's rule), through no link. */
function giveOwnerOf(parent: BeneathDir, made: string): void {
  const fd = fs.openSync(made, fs.constants.O_RDONLY | (fs.constants.O_DIRECTORY ?? 0) | (fs.constants.O_NOFOLLOW ?? 0));
  try {
    inheritOwner(fd, parent.self());
  } finally {
    fs.closeSync(fd);
  }
}

/** Folders a created file needed and that the undo leaves empty go too (not the zone root). */
function removeEmptyFolders(walk: BeneathWalk, relDir: string): void {
  for (let rel = relDir; rel !== ''; ) {
    const cut = rel.lastIndexOf('/');
    const up = cut < 0 ? '' : rel.slice(0, cut);
    try {
      const parent = walk.dir(up);
      if (parent === undefined) return;
      fs.rmdirSync(parent.child(rel.slice(cut + 1)));
    } catch {
      return;
    }
    walk.forget();
    rel = up;
  }
}
