/**
 * Exact disk usage of a folder tree without a full walk per question.
 *
 * Mechanism: the first question about a tree walks it once (synchronous readdir + lstat, the
 * fastest walk Node offers, in slices that yield to the event loop) and records, per folder, its own
 * size, the bytes and count of the regular files and links directly in it, and its subfolders.
 * Each entry counts the disk it takes (chargedBytes), files and folders alike; the tree's root is
 * not counted. Each folder gets an inotify watch (fs.watch,
 * one per folder, not persistent). Any change by any process (create, write, truncate, rename,
 * delete) marks that folder dirty. Before answering, the event loop is turned twice so events
 * already queued by the kernel are delivered, then only the dirty folders are read again.
 * The cost of a question is O(entries in changed folders), and the answer equals a fresh walk.
 *
 * A refreshed folder always gets a fresh watch (it may have been replaced under the same name), and
 * files with several hard links are re-checked by stat on every question (a write through one link
 * only notifies its own folder); a newly seen multi-linked file triggers one re-walk to find all of
 * its folders.
 * Fallbacks keep it exact: a folder whose watch cannot be set up (the inotify limit reached) is
 * read again at every question, and asked for a watch again then; if a watch reports an error, the
 * tree is walked again on every question. Trees are kept in a small LRU so a long-lived server
 * does not hold watches for every user forever. Limits: changes made while the kernel's inotify
 * queue overflows (over 16k events between two turns of our event loop, by another process) can be
 * missed until the tree is evicted or `invalidate` is called; callers that run commands in a zone
 * call `invalidate` afterwards.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { TimeSlice } from '../../base/fs/slice.js';
import { lstatIfAny } from '../../base/fs/stat.js';
import { listSliced } from '../../base/fs/list.js';

export interface Usage {
  bytes: number;
  files: number;
}

interface FolderRecord {
  bytes: number;
  files: number;
  subfolders: Set<string>;
  /** Files with several hard links, by name → stat signature: a write through another link notifies another folder. */
  linked: Map<string, string>;
  watcher: fs.FSWatcher | undefined;
  /** Non-folder entries by name → stat signature and newest timestamp (only in trees that keep entries). */
  entries: Map<string, EntryStat> | undefined;
  /**
   * The same, in a tree that keeps no entries, for a folder this process refreshed lately (the last
   * RECENT_TIMES of them, RECENT_ENTRIES entries together): what the capture after a call asks
   * (undo/shadow.ts), so it does not lstat every file of the folder a second time. Lives and dies
   * with this record.
   */
  recent?: Map<string, EntryStat>;
}

/** Refreshed folders whose entries a tree that keeps none still holds (FolderRecord.recent), and their entries together (~150 bytes each). */
const RECENT_TIMES = 32;
const RECENT_ENTRIES = 50_000;

/** What a change watch compares: type+mode, size, inode, mtime and ctime (ctime catches `touch -r`, `cp -p`). */
interface EntryStat {
  sig: string;
  /** max(mtime, ctime) in ms: entries changed just before the watch began are "racy" (coarse clocks). */
  newestMs: number;
}

const MAX_TREES = 64;
/** Linux's limit on a path given to a system call, its final NUL included. */
const PATH_MAX = 4096;

interface Listing {
  dir: string;
  /** The folder's own count (chargedBytes, like files); 0 for the tree's root. */
  own: number;
  watcher: fs.FSWatcher | undefined;
  subfolders: string[];
  names: string[];
}

interface Measurement {
  bytes: number;
  files: number;
  /** Files with several hard links: [name, stat signature, inode]. */
  linked: [string, string, number][];
  /** Names that turned out to be folders (created between listing and measuring). */
  becameFolders: string[];
  /** [name, stat signature, newest timestamp ms] of every non-folder entry, when asked for. */
  entries: [string, string, number][] | undefined;
}

/**
 * What one entry counts toward the quota: the disk it really takes (SPEC section 8), while an
 * ordinary file still counts exactly its own size:
 * - its apparent size (st_size): a sparse file counts what it claims, as RLIMIT_FSIZE bounds it, so
 *   holes are no way around the quota, and a file counts the same on every file system;
 * - plus the blocks allocated beyond what that size needs (st_blocks * 512 above the size rounded up
 *   to the block): space reserved behind a small file (fallocate FALLOC_FL_KEEP_SIZE) counts whole;
 * - a folder at least one block (4 KiB, what ext4 gives it; XFS reports less for a small one), so
 *   a tree of empty folders counts the same everywhere.
 * Inodes of files are bounded by their number (callwatch.ts: one file per 256 bytes of quota).
 * Self-contained: its source text also runs in the measuring worker thread.
 */
export function chargedBytes(st: { size: number; blocks: number; blksize: number }, folder = false): number {
  const block = Math.max(4096, st.blksize || 0);
  const needed = Math.ceil(st.size / block) * block;
  const reserved = Math.max(0, st.blocks * 512 - needed);
  return folder ? Math.max(4096, st.size + reserved) : st.size + reserved;
}

/**
 * Sizes of the non-folder entries of one folder. Self-contained (lstat and chargedBytes are passed
 * in) because its source text also runs in the worker thread, where no name of this module exists
 * (the minified plugin renames them).
 */
function measureFiles(lstat: typeof fs.lstatSync, charged: typeof chargedBytes, dir: string, names: readonly string[], withEntries: boolean): Measurement {
  const out: Measurement = { bytes: 0, files: 0, linked: [], becameFolders: [], entries: withEntries ? [] : undefined };
  const prefix = dir.endsWith('/') ? dir : `${dir}/`; // plain concatenation: path.join costs ~10% of a cold walk
  for (const name of names) {
    let st: fs.Stats | undefined;
    try {
      st = lstat(prefix + name, { throwIfNoEntry: false });
    } catch {
      st = undefined; // a folder on the way replaced by a file meanwhile (ENOTDIR), unreadable: gone for this count
    }
    if (st === undefined) continue;
    if (st.isDirectory()) {
      out.becameFolders.push(name);
      continue;
    }
    out.bytes += charged(st);
    out.files += 1;
    if ((st.nlink > 1 && st.isFile()) || withEntries) {
      const sig = `${st.mode}:${st.size}:${st.ino}:${st.mtimeMs}:${st.ctimeMs}`;
      if (st.nlink > 1 && st.isFile()) out.linked.push([name, sig, st.ino]);
      if (withEntries) out.entries!.push([name, sig, Math.max(st.mtimeMs, st.ctimeMs)]);
    }
  }
  return out;
}

/** Names measured between two looks at the clock (about a millisecond of lstat). */
const MEASURE_STEP = 256;

/** measureFiles on the main thread for a folder of any size: a turn of the event loop may come between steps. */
async function measureSliced(listing: Listing, withEntries: boolean, slice: TimeSlice): Promise<Measurement> {
  if (listing.names.length <= MEASURE_STEP) return measureFiles(fs.lstatSync, chargedBytes, listing.dir, listing.names, withEntries);
  const out: Measurement = { bytes: 0, files: 0, linked: [], becameFolders: [], entries: withEntries ? [] : undefined };
  for (let i = 0; i < listing.names.length; i += MEASURE_STEP) {
    await slice.tick();
    const m = measureFiles(fs.lstatSync, chargedBytes, listing.dir, listing.names.slice(i, i + MEASURE_STEP), withEntries);
    out.bytes += m.bytes;
    out.files += m.files;
    out.linked.push(...m.linked);
    out.becameFolders.push(...m.becameFolders);
    out.entries?.push(...m.entries!);
  }
  return out;
}

/** Below this many files a worker's start-up (~50 ms) costs more than it saves. */
const PARALLEL_MIN_FILES = 20_000;

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { lstatSync } = require('node:fs');
const chargedBytes = ${chargedBytes.toString()};
const measureFiles = ${measureFiles.toString()};
const results = [];
parentPort.on('message', (jobs) => {
  if (jobs === 'end') parentPort.postMessage(results);
  else for (const [dir, names, withEntries] of jobs) results.push(measureFiles(lstatSync, chargedBytes, dir, names, withEntries));
});
`;

/**
 * A worker thread that measures folders while the main thread is still walking: once the walk has
 * seen PARALLEL_MIN_FILES files it starts (booting meanwhile) and is handed three folders in four
 * as they are listed; the main thread measures the rest after the walk. With ~1.5 µs per listed
 * entry and ~4 µs per lstat, that split finishes both threads at about the same time.
 */
class MeasuringWorker {
  private readonly worker: Worker | undefined;
  private readonly sent: Listing[] = [];
  private batch: [string, string[], boolean][] = [];
  private seen = 0;
  private failed = false;

  constructor(private readonly withEntries: boolean) {
    try {
      // Its own flags: one of this process's (--input-type=module) would take `require` from its code.
      this.worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [] });
      this.worker.unref();
      // A worker that fails (at any moment) is measured for here, and said: never an uncaught 'error' event.
      this.worker.on('error', (err) => {
        this.failed = true;
        process.stderr.write(`fileshed: the usage worker failed (${String(err)}); its folders are measured on the main thread\n`);
      });
    } catch {
      this.worker = undefined; // no worker threads: everything is measured here
    }
  }

  /** Takes the folder for the worker (true), or leaves it to the main thread (false). */
  take(listing: Listing): boolean {
    if (this.worker === undefined || this.seen++ % 4 === 0) return false;
    this.sent.push(listing);
    this.batch.push([listing.dir, listing.names, this.withEntries]);
    if (this.batch.length >= 16) this.flush();
    return true;
  }

  /** The worker's measurements, paired with the folders it took (measured here if the worker failed). */
  async results(): Promise<[Listing, Measurement][]> {
    const worker = this.worker;
    if (worker === undefined || this.sent.length === 0) {
      void worker?.terminate();
      return [];
    }
    this.flush();
    const answer = new Promise<Measurement[] | undefined>((resolve) => {
      if (this.failed) return resolve(undefined);
      worker.once('message', (result: Measurement[]) => resolve(result));
      worker.once('error', () => resolve(undefined));
      worker.once('exit', () => resolve(undefined));
    });
    worker.postMessage('end');
    const measured = (await answer) ?? this.sent.map((l) => measureFiles(fs.lstatSync, chargedBytes, l.dir, l.names, this.withEntries));
    void worker.terminate();
    return this.sent.map((l, i) => [l, measured[i]!]);
  }

  private flush(): void {
    if (this.batch.length === 0) return;
    this.worker?.postMessage(this.batch);
    this.batch = [];
  }
}

class TreeUsage {
  private readonly folders = new Map<string, FolderRecord>();
  private readonly dirty = new Set<string>();
  /** Folders holding multi-linked files, re-checked by stat on every question. */
  private readonly withLinks = new Set<string>();
  /** Inodes known to have several links; a new one means another folder may hold it too. */
  private readonly linkedInodes = new Set<number>();
  private sawNewLink = false;
  private busy: Promise<void> = Promise.resolve();
  private total: Usage = { bytes: 0, files: 0 };
  private scanned = false;
  /** True when watches cannot be trusted: every question walks the tree again. */
  private unwatched = false;
  /** Folders recorded without a watch (none could be had): read again at every question. */
  private readonly blind = new Set<string>();
  /** Entries whose path is PATH_MAX bytes or longer, by folder: no call by path reaches them, so they are not measured. */
  private readonly tooLong = new Map<string, string[]>();
  /** Keep every entry's stat signature, so change watches can tell what changed in a folder. */
  keepEntries = false;
  /** Records holding `recent` entries, oldest first, and how many entries they hold together. */
  private readonly withRecent: FolderRecord[] = [];
  private recentEntries = 0;
  private readonly trackers = new Set<Tracker>();
  /** `changeSeq` of this tree's last full walk or invalidation: what it knows starts there. */
  private fullSeq = 0;
  /** Folders refreshed since, in order ([changeSeq, folder]); the oldest are dropped past LOG_MAX. */
  private readonly refreshed: [number, string][] = [];
  /** Entries up to this changeSeq were dropped from `refreshed`. */
  private droppedThrough = 0;

  constructor(readonly root: string) {}

  /**
   * Folders refreshed after `mark` (a usageMark()), or undefined when this tree cannot vouch for
   * every change since: walked or invalidated since, watches lost, or the log overflowed.
   */
  changedSince(mark: number): string[] | undefined {
    if (!this.scanned || this.unwatched || this.fullSeq > mark || this.droppedThrough > mark) return undefined;
    const out = new Set<string>();
    for (let i = this.refreshed.length - 1; i >= 0 && this.refreshed[i]![0] > mark; i--) out.add(this.refreshed[i]![1]);
    return [...out];
  }

  /** The non-folder entries of `dir` as last measured (a tree that keeps entries, or a folder refreshed lately). */
  entriesOf(dir: string): ReadonlyMap<string, EntryStat> | undefined {
    const rec = this.folders.get(dir);
    return rec?.entries ?? rec?.recent;
  }

  /** Another process changed these folders (it said so in the change stamp): read them again at the next question. */
  markDirty(dirs: readonly string[]): void {
    for (const dir of dirs) if (this.folders.has(dir)) this.dirty.add(dir);
  }

  private logRefresh(dir: string): void {
    this.refreshed.push([++changeSeq, dir]);
    if (this.refreshed.length > LOG_MAX) this.droppedThrough = this.refreshed.shift()![0];
  }

  track(): Tracker {
    // The records of this moment (a refresh installs new ones, never changes these): what was there.
    const t: Tracker = { startedMs: Date.now(), eventsAtStart: watchEvents, trusted: this.scanned && !this.unwatched && this.keepEntries, before: new Map(), start: new Map(this.folders) };
    this.trackers.add(t);
    return t;
  }

  untrack(t: Tracker): void {
    this.trackers.delete(t);
  }

  /** Zone-relative paths that changed in the folders `t` saw change (folders appearing or vanishing as themselves). */
  changesOf(t: Tracker): WatchResult {
    const reliable = this.scanned && !this.unwatched && watchEvents - t.eventsAtStart <= EVENT_BUDGET;
    return { reliable, paths: reliable && t.trusted ? this.changedPaths(t) : undefined, prior: (rel) => this.priorOf(t, rel) };
  }

  /** What `rel` was when the watch `t` began: its folder's record then says (undefined: it did not exist). */
  private priorOf(t: Tracker, rel: string): Prior | undefined {
    const slash = rel.lastIndexOf('/');
    const rec = t.start.get(slash < 0 ? this.root : `${this.root}/${rel.slice(0, slash)}`);
    const name = rel.slice(slash + 1);
    if (rec === undefined) return undefined;
    if (rec.subfolders.has(name)) return { folder: true, size: 0, ino: 0 };
    const entry = rec.entries?.get(name);
    return entry === undefined ? undefined : entryPrior(entry.sig);
  }

  private changedPaths(t: Tracker): string[] {
    const out = new Set<string>();
    const racyFrom = t.startedMs - RACY_MS;
    for (const [dir, before] of t.before) {
      // A folder made during the watch is reported by its parent, as itself: it stands for all it
      // holds (10 paths for `mkdir -p` of 10 chains 2,000 levels deep, not 20,000).
      if (before === undefined && dir !== this.root) continue;
      const after = this.folders.get(dir);
      const rel = dir === this.root ? '' : dir.slice(this.root.length + 1);
      const at = (name: string) => (rel === '' ? name : `${rel}/${name}`);
      const was = before?.entries ?? NO_ENTRIES;
      const now = after?.entries ?? NO_ENTRIES;
      for (const [name, a] of was) {
        const b = now.get(name);
        if (b === undefined || b.sig !== a.sig || a.newestMs >= racyFrom) out.add(at(name));
      }
      for (const name of now.keys()) if (!was.has(name)) out.add(at(name));
      const wasFolders = before?.subfolders ?? NO_NAMES;
      const nowFolders = after?.subfolders ?? NO_NAMES;
      for (const name of wasFolders) if (!nowFolders.has(name)) out.add(at(name));
      for (const name of nowFolders) if (!wasFolders.has(name)) out.add(at(name));
    }
    return [...out].sort();
  }

  /** Before a folder's record changes: every active watch keeps what it held at the watch's start. */
  private noteBefore(dir: string): void {
    if (this.trackers.size === 0) return;
    const rec = this.folders.get(dir);
    for (const t of this.trackers) {
      if (t.before.has(dir)) continue;
      t.before.set(dir, rec === undefined ? undefined : { entries: rec.entries ?? NO_ENTRIES, subfolders: rec.subfolders });
      if (rec !== undefined && rec.entries === undefined) t.trusted = false;
    }
  }

  private distrustWatches(): void {
    for (const t of this.trackers) t.trusted = false;
  }

  async usage(): Promise<Usage> {
    // One question at a time per tree: a walk and a refresh must not interleave.
    const previous = this.busy;
    let release!: () => void;
    this.busy = new Promise((resolve) => (release = resolve));
    await previous;
    try {
      if (this.scanned && !this.unwatched) {
        await turnEventLoop();
        for (const dir of this.blind) this.dirty.add(dir);
        this.checkLinkedFiles();
        await this.refreshDirty();
        if (this.sawNewLink) await this.rescan(); // a new hard link: find every folder that holds it
      }
      if (!this.scanned || this.unwatched) await this.rescan();
      return { ...this.total };
    } finally {
      release();
    }
  }

  hasEntriesTooLong(): boolean {
    return this.tooLong.size > 0;
  }

  /** Absolute paths of the entries too long to be named (see `tooLong`), as of the last question. */
  entriesTooLong(): string[] {
    return [...this.tooLong].flatMap(([dir, names]) => names.map((name) => `${dir}/${name}`));
  }

  invalidate(): void {
    this.closeAll();
    this.scanned = false;
    this.fullSeq = ++changeSeq;
  }

  closeAll(): void {
    this.distrustWatches();
    // Closed in slices (closeLater): a tree of thousands of folders has as many watches.
    for (const rec of this.folders.values()) if (rec.watcher) closeLater(rec.watcher);
    this.folders.clear();
    this.dirty.clear();
    this.blind.clear();
    this.tooLong.clear();
    this.withLinks.clear();
    this.linkedInodes.clear();
    this.total = { bytes: 0, files: 0 };
  }

  /**
   * The full walk. Each folder is watched before it is listed, on this thread, so no change can slip
   * by. File sizes are measured afterwards; in large trees a worker thread measures most folders
   * while the walk goes on, since a cold walk is mostly per-file JavaScript overhead.
   */
  private async rescan(): Promise<void> {
    this.closeAll();
    this.fullSeq = ++changeSeq;
    if (!isFolder(this.root)) return; // nothing yet: stays unscanned, so the next question looks again
    this.scanned = true;
    let helper: MeasuringWorker | undefined;
    let names = 0;
    const mine: Listing[] = [];
    const stack = [this.root];
    const slice = new TimeSlice(); // the user shapes this tree: never hold the event loop for all of it
    while (stack.length > 0) {
      await slice.tick();
      const dir = stack.pop()!;
      const listing = await this.listFolder(dir, slice);
      if (listing === undefined) continue;
      for (const name of listing.subfolders) stack.push(`${dir}/${name}`);
      names += listing.names.length;
      if (helper === undefined && names >= PARALLEL_MIN_FILES) helper = new MeasuringWorker(this.keepEntries); // big tree: it boots while we walk
      if (!helper?.take(listing)) mine.push(listing);
    }
    for (const listing of mine) {
      await slice.tick();
      this.install(listing, await measureSliced(listing, this.keepEntries, slice));
    }
    for (const [listing, measured] of (await helper?.results()) ?? []) this.install(listing, measured);
    this.sawNewLink = false;
    if (!this.unwatched) return;
    // Without watches the records are not needed between questions.
    for (const rec of this.folders.values()) if (rec.watcher) closeLater(rec.watcher);
  }

  /** Records a folder from its listing and its measurement. */
  private install(listing: Listing, m: Measurement): FolderRecord {
    const entries = m.entries === undefined ? undefined : new Map(m.entries.map(([name, sig, newestMs]) => [name, { sig, newestMs }]));
    const rec: FolderRecord = { bytes: m.bytes + listing.own, files: m.files, subfolders: new Set(listing.subfolders), linked: new Map(), watcher: listing.watcher, entries };
    for (const [name, sig, ino] of m.linked) {
      rec.linked.set(name, sig);
      if (!this.linkedInodes.has(ino)) {
        this.linkedInodes.add(ino);
        this.sawNewLink = true;
      }
    }
    for (const name of m.becameFolders) rec.subfolders.add(name);
    this.folders.set(listing.dir, rec);
    if (rec.watcher === undefined && !this.unwatched) this.blind.add(listing.dir);
    else this.blind.delete(listing.dir);
    if (rec.linked.size > 0) this.withLinks.add(listing.dir);
    this.total.bytes += rec.bytes;
    this.total.files += rec.files;
    return rec;
  }

  /** Watches a folder, then lists it (in that order, so nothing changes unseen); in batches, a folder can hold 30,000 entries. */
  private async listFolder(dir: string, slice: TimeSlice): Promise<Listing | undefined> {
    const watcher = this.unwatched ? undefined : this.watch(dir);
    let entries: fs.Dirent[];
    try {
      entries = await listSliced(dir, slice);
    } catch {
      watcher?.close();
      return undefined;
    }
    const subfolders: string[] = [];
    const names: string[] = [];
    const room = PATH_MAX - Buffer.byteLength(dir) - 1;
    const tooLong: string[] = [];
    for (const entry of entries) {
      if (Buffer.byteLength(entry.name) >= room) tooLong.push(entry.name);
      else (entry.isDirectory() ? subfolders : names).push(entry.name);
    }
    if (tooLong.length > 0) this.tooLong.set(dir, tooLong);
    else this.tooLong.delete(dir);
    // Folders take disk space too (4 KiB and up on ext4): counted, so a tree of empty folders cannot fill the disk at "0 B used".
    const st = dir === this.root ? undefined : lstatIfAny(dir);
    const own = st === undefined ? 0 : chargedBytes(st, true);
    return { dir, own, watcher, subfolders, names };
  }

  private async addSubtree(dir: string, slice: TimeSlice): Promise<void> {
    const stack = [dir];
    while (stack.length > 0) {
      await slice.tick();
      const current = stack.pop()!;
      this.noteBefore(current);
      const rec = await this.readFolder(current, slice);
      if (rec === undefined) continue;
      for (const name of rec.subfolders) stack.push(`${current}/${name}`);
    }
  }

  /**
   * Forgets a folder and all below it. Iterative, and a child's path is its parent's plus its name:
   * normalising a 4,000-byte parent path for each of 2,000 nested folders (path.join) made this
   * O(depth²), 170 ms of one turn of the loop for three such chains.
   */
  private dropSubtree(top: string): void {
    const stack = [top];
    while (stack.length > 0) {
      const dir = stack.pop()!;
      const rec = this.folders.get(dir);
      if (rec === undefined) continue;
      this.noteBefore(dir);
      if (dir === this.root) this.scanned = false; // the root itself went away: walk again next time
      this.folders.delete(dir);
      this.dirty.delete(dir);
      this.blind.delete(dir);
      this.tooLong.delete(dir);
      this.withLinks.delete(dir);
      if (rec.watcher) closeLater(rec.watcher);
      this.total.bytes -= rec.bytes;
      this.total.files -= rec.files;
      for (const name of rec.subfolders) stack.push(`${dir}/${name}`);
    }
  }

  private checkLinkedFiles(): void {
    for (const dir of this.withLinks) {
      const rec = this.folders.get(dir)!;
      for (const [name, sig] of rec.linked) {
        const st = lstatIfAny(path.join(dir, name));
        if (st === undefined || `${st.mode}:${st.size}:${st.ino}:${st.mtimeMs}:${st.ctimeMs}` !== sig) this.dirty.add(dir);
      }
    }
  }

  private async refreshDirty(): Promise<void> {
    // Parents first, so a folder that disappeared is dropped before anyone re-reads it.
    const todo = [...this.dirty].sort((a, b) => a.length - b.length);
    this.dirty.clear();
    const slice = new TimeSlice(); // a command may have made thousands of folders: yield between them
    for (const dir of todo) {
      await slice.tick();
      const old = this.folders.get(dir);
      if (old === undefined) continue;
      this.noteBefore(dir);
      this.logRefresh(dir);
      // A fresh watch every time: the folder may have been replaced under the same name (ext4 even
      // reuses the inode number), which leaves the old watch dead.
      this.total.bytes -= old.bytes;
      this.total.files -= old.files;
      this.withLinks.delete(dir);
      const fresh = await this.readFolder(dir, slice);
      old.watcher?.close();
      if (fresh === undefined) {
        this.folders.set(dir, { ...old, bytes: 0, files: 0, watcher: undefined, recent: undefined });
        this.dropSubtree(dir);
        continue;
      }
      for (const name of old.subfolders) if (!fresh.subfolders.has(name)) this.dropSubtree(`${dir}/${name}`);
      for (const name of fresh.subfolders) if (!old.subfolders.has(name)) await this.addSubtree(`${dir}/${name}`, slice);
    }
  }

  /**
   * Lists, measures and records one folder (the refresh path, on this thread, in slices). Its entries
   * are kept either way: in `entries` when the tree keeps them, else as `recent` (the lstat is made
   * anyway; only the signatures are extra).
   */
  private async readFolder(dir: string, slice: TimeSlice): Promise<FolderRecord | undefined> {
    const listing = await this.listFolder(dir, slice);
    if (listing === undefined) return undefined;
    const rec = this.install(listing, await measureSliced(listing, true, slice));
    if (!this.keepEntries) {
      const recent = rec.entries!;
      rec.entries = undefined;
      if (recent.size > RECENT_ENTRIES) return rec;
      rec.recent = recent;
      this.withRecent.push(rec);
      this.recentEntries += recent.size;
      while (this.withRecent.length > RECENT_TIMES || this.recentEntries > RECENT_ENTRIES) {
        const oldest = this.withRecent.shift()!;
        this.recentEntries -= oldest.recent?.size ?? 0;
        delete oldest.recent;
      }
    }
    return rec;
  }

  private watch(dir: string): fs.FSWatcher | undefined {
    try {
      const watcher = fs.watch(dir, { persistent: false }, (_event, name) => {
        watchEvents++;
        this.dirty.add(dir);
        if (this.trackers.size === 0) return;
        const entry = typeof name === 'string' ? `${dir}/${name}` : undefined;
        for (const t of this.trackers) {
          try {
            t.onEvent?.(entry);
          } catch {
            // A listener's failure must not escape a watcher callback (it would end the process);
            // the folder is dirty, so the next measurement sees the change anyway.
          }
        }
      });
      watcher.on('error', () => {
        this.unwatched = true;
        this.distrustWatches();
      });
      return watcher;
    } catch {
      // No watch for this folder (the inotify limit, most likely): it is read again at every question.
      return undefined;
    }
  }
}

const trees = new Map<string, TreeUsage>();
/** Counts refreshes and walks of every tree of this process (the order of the change logs). */
let changeSeq = 0;
/** Refreshed folders kept per tree for the change stamp (a call rarely refreshes more than a few dozen). */
const LOG_MAX = 4096;

/** Folders a change watch saw change, each with what it held when the watch began (undefined: it did not exist). */
interface Tracker {
  startedMs: number;
  eventsAtStart: number;
  /** False once anything could have slipped by (watches lost, tree re-walked or evicted, too many events). */
  trusted: boolean;
  before: Map<string, { entries: ReadonlyMap<string, EntryStat>; subfolders: ReadonlySet<string> } | undefined>;
  /** Every folder's record when the watch began. */
  start: ReadonlyMap<string, FolderRecord>;
  /** Called on every event in the tree while the watch lasts, with the entry it names (absolute) when known. */
  onEvent?: (entry: string | undefined) => void;
}

const NO_ENTRIES: ReadonlyMap<string, EntryStat> = new Map();
const NO_NAMES: ReadonlySet<string> = new Set();
/** Entries changed within this long before a watch began are always reported (timestamps are coarse). */
const RACY_MS = 100;
/**
 * inotify events of this process (all trees share one kernel queue). Node does not report a queue
 * overflow, but one needs the queue full (fs.inotify.max_queued_events, 16384 by default): a watch
 * that saw more events than half that distrusts itself, and its caller falls back to a full walk.
 */
let watchEvents = 0;
const EVENT_BUDGET = 8192;

/** What a changed path was when the watch began (a path missing from `prior` did not exist then). */
export interface Prior {
  folder: boolean;
  /** Apparent size and inode of a non-folder entry. */
  size: number;
  ino: number;
}

/** An entry signature (`mode:size:ino:mtime:ctime`) read back. */
function entryPrior(sig: string): Prior {
  const [, size, ino] = sig.split(':');
  return { folder: false, size: Number(size), ino: Number(ino) };
}

export interface WatchResult {
  /**
   * The tree-relative paths of files and links that appeared, vanished or changed (a folder that
   * appeared or vanished as itself), sorted; undefined when the watch cannot vouch for them (the
   * caller compares in full instead) or was not asked to keep entries.
   */
  paths: string[] | undefined;
  /**
   * What a tree-relative path was when the watch began (undefined: nothing was there), from the
   * folder records of that moment: known whether or not events were lost since (only in trees that
   * keep entries; elsewhere every file reads as new).
   */
  prior(rel: string): Prior | undefined;
  /** False when events may have been lost (watches failed, far too many events): the usage cache should be dropped. */
  reliable: boolean;
}

export interface ChangeWatch {
  /** True when the watch can tell what changed (entries kept, watches working); else compare in full. */
  readonly exact: boolean;
  /** Usage of the tree now; only folders changed since the last question are read again. */
  usage(): Promise<Usage>;
  /** Ends the watch. */
  finish(): Promise<WatchResult>;
  /**
   * `fn` runs on every change event in the tree until the watch ends, with the absolute path of the
   * entry the event names when the kernel says (cheap work only: it runs once per event).
   */
  onChange(fn: (entry: string | undefined) => void): void;
}

/**
 * "Which folders changed during this command": one mechanism for the per-call quota check (usage
 * while the command runs) and for finding what a command changed in a versioned zone (`entries`:
 * the tree keeps each entry's stat signature, so only the changed folders are compared).
 */
export async function watchChanges(root: string, opts: { entries: boolean }): Promise<ChangeWatch> {
  const tree = treeFor(root);
  if (opts.entries && !tree.keepEntries) {
    tree.keepEntries = true;
    tree.invalidate(); // one walk that records the entries; every later command is O(change)
  }
  await tree.usage();
  const tracker = tree.track();
  return {
    exact: tracker.trusted,
    usage: () => tree.usage(),
    onChange: (fn) => (tracker.onEvent = fn),
    async finish() {
      await tree.usage();
      tree.untrack(tracker);
      return tree.changesOf(tracker);
    },
  };
}

function treeFor(root: string): TreeUsage {
  const key = path.resolve(root);
  let tree = trees.get(key);
  if (tree !== undefined) {
    trees.delete(key); // move to the most-recent end
  } else {
    tree = new TreeUsage(key);
    if (trees.size >= MAX_TREES) {
      const [oldestKey, oldest] = trees.entries().next().value as [string, TreeUsage];
      oldest.closeAll();
      trees.delete(oldestKey);
    }
  }
  trees.set(key, tree);
  return tree;
}

/** Exact bytes (files, links and folders below `root`) and file count under `root`; 0 if it does not exist. */
export function treeUsage(root: string): Promise<Usage> {
  return treeFor(root).usage();
}


/** A point in this process's change logs: `foldersChangedSince(root, mark)` lists what was refreshed after it. */
export function usageMark(): number {
  return changeSeq;
}

/**
 * The folders of `root` this process saw change since `mark` (its own writes, through inotify),
 * after delivering pending events; undefined when it cannot vouch for every change (the tree is
 * not loaded, was walked or invalidated since the mark, or lost its watches).
 */
export async function foldersChangedSince(root: string, mark: number): Promise<string[] | undefined> {
  const tree = trees.get(path.resolve(root));
  if (tree === undefined) return undefined;
  await tree.usage();
  return tree.changedSince(mark);
}

/**
 * The newest timestamp (mtime or ctime, ms) of each non-folder entry of `dir`, a folder of `root`,
 * as the last question measured it; undefined when the tree does not know the folder, or keeps no
 * entries (no command ran in it yet) and did not refresh it lately. Right after
 * foldersChangedSince it is what is on disk now.
 */
export function measuredTimes(root: string, dir: string): ReadonlyMap<string, { newestMs: number }> | undefined {
  return trees.get(path.resolve(root))?.entriesOf(path.resolve(dir));
}

/** Marks folders of `root` changed by another process (read again at the next question); nothing when the tree is not loaded. */
export function markFoldersDirty(root: string, dirs: readonly string[]): void {
  trees.get(path.resolve(root))?.markDirty(dirs);
}

/** True when usage of `root` is known in memory (a question will not walk it). */
export function treeLoaded(root: string): boolean {
  return trees.has(path.resolve(root));
}

/**
 * Entries below `root` whose absolute path is PATH_MAX bytes or longer (a command nests folders that
 * deep through descriptors or chdir). No call by path reaches them, so usage cannot count them: the
 * caller removes them. Empty when the tree is not loaded.
 */
export async function entriesTooLong(root: string): Promise<string[]> {
  const tree = trees.get(path.resolve(root));
  if (tree === undefined) return [];
  await tree.usage();
  return tree.entriesTooLong();
}

/** True when the last question about `root` found entries too long to be named (no new question asked). */
export function foundEntriesTooLong(root: string): boolean {
  return trees.get(path.resolve(root))?.hasEntriesTooLong() === true;
}

/** Forgets what is known about `root` (after a command ran there, or when exactness is in doubt). */
export function invalidateTree(root: string): void {
  trees.get(path.resolve(root))?.invalidate();
}

/** Drops `root` and its watches altogether (a folder about to be removed, such as a locked edit's scratch folder). */
export function forgetTree(root: string): void {
  const key = path.resolve(root);
  trees.get(key)?.closeAll();
  trees.delete(key);
}

/** Two turns of the loop: the first may start inside a poll callback, the second passes a poll phase. */
function turnEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

function isFolder(p: string): boolean {
  try {
    // A tree that does not exist yet is asked about at every usage question: no exception for it.
    return fs.statSync(p, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    return false;
  }
}

/**
 * Watches of a removed subtree or a forgotten tree are closed a few milliseconds' worth at a time:
 * closing the 2,000 watches of a deep tree in one go held the event loop about 100 ms. A late event of a watch not yet
 * closed names a folder no longer recorded, which the refresh skips.
 */
const closing: { close(): void }[] = [];
function closeLater(watcher: { close(): void }): void {
  closing.push(watcher);
  if (closing.length === 1) setImmediate(closeSome);
}
function closeSome(): void {
  const until = performance.now() + 4;
  while (closing.length > 0 && performance.now() < until) {
    try {
      closing.pop()!.close();
    } catch {
      // already closed
    }
  }
  if (closing.length > 0) setImmediate(closeSome);
}
