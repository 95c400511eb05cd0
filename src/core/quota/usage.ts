/**
 * Exact disk usage of a folder tree without a full walk per question.
 *
 * Mechanism: the first question about a tree walks it once (synchronous readdir + lstat, the
 * fastest walk Node offers) and records, per folder, the bytes and count of the regular files
 * and links directly in it, and its subfolders. Each folder gets an inotify watch (fs.watch,
 * one per folder, not persistent). Any change by any process (create, write, truncate, rename,
 * delete) marks that folder dirty. Before answering, the event loop is turned twice so events
 * already queued by the kernel are delivered, then only the dirty folders are read again.
 * The cost of a question is O(entries in changed folders), and the answer equals a fresh walk.
 *
 * A refreshed folder always gets a fresh watch (it may have been replaced under the same name), and
 * files with several hard links are re-checked by stat on every question (a write through one link
 * only notifies its own folder); a newly seen multi-linked file triggers one re-walk to find all of
 * its folders.
 * Fallbacks keep it exact: if a watch cannot be set up (inotify limit) or reports an error, the
 * tree is walked again on every question. Trees are kept in a small LRU so a long-lived server
 * does not hold watches for every user forever. Limits: changes made while the kernel's inotify
 * queue overflows (over 16k events between two turns of our event loop, by another process) can be
 * missed until the tree is evicted or `invalidate` is called; callers that run commands in a zone
 * call `invalidate` afterwards.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface Usage {
  bytes: number;
  files: number;
}

interface FolderRecord {
  bytes: number;
  files: number;
  subfolders: Set<string>;
  /** Files with several hard links, by name → size: a write through another link notifies another folder. */
  linked: Map<string, number>;
  watcher: fs.FSWatcher | undefined;
}

const MAX_TREES = 64;

class TreeUsage {
  private readonly folders = new Map<string, FolderRecord>();
  private readonly dirty = new Set<string>();
  /** Folders holding multi-linked files, re-checked by stat on every question. */
  private readonly withLinks = new Set<string>();
  /** Inodes known to have several links; a new one means another folder may hold it too. */
  private readonly linkedInodes = new Set<number>();
  private sawNewLink = false;
  private total: Usage = { bytes: 0, files: 0 };
  private scanned = false;
  /** True when watches cannot be trusted: every question walks the tree again. */
  private unwatched = false;

  constructor(readonly root: string) {}

  async usage(): Promise<Usage> {
    if (this.scanned && !this.unwatched) {
      await turnEventLoop();
      this.checkLinkedFiles();
      this.refreshDirty();
      if (this.sawNewLink) this.rescan(); // a new hard link: find every folder that holds it
    }
    if (!this.scanned || this.unwatched) this.rescan();
    return { ...this.total };
  }

  invalidate(): void {
    this.closeAll();
    this.scanned = false;
  }

  closeAll(): void {
    for (const rec of this.folders.values()) rec.watcher?.close();
    this.folders.clear();
    this.dirty.clear();
    this.withLinks.clear();
    this.linkedInodes.clear();
    this.total = { bytes: 0, files: 0 };
  }

  private rescan(): void {
    this.closeAll();
    if (!isFolder(this.root)) return; // nothing yet: stays unscanned, so the next question looks again
    this.scanned = true;
    this.addSubtree(this.root);
    this.sawNewLink = false;
    if (!this.unwatched) return;
    // Without watches the records are not needed between questions.
    for (const rec of this.folders.values()) rec.watcher?.close();
  }

  private addSubtree(dir: string): void {
    const stack = [dir];
    while (stack.length > 0) {
      const current = stack.pop()!;
      const rec = this.readFolder(current);
      if (rec === undefined) continue;
      this.folders.set(current, rec);
      if (rec.linked.size > 0) this.withLinks.add(current);
      this.total.bytes += rec.bytes;
      this.total.files += rec.files;
      for (const name of rec.subfolders) stack.push(path.join(current, name));
    }
  }

  private dropSubtree(dir: string): void {
    const rec = this.folders.get(dir);
    if (rec === undefined) return;
    if (dir === this.root) this.scanned = false; // the root itself went away: walk again next time
    this.folders.delete(dir);
    this.dirty.delete(dir);
    this.withLinks.delete(dir);
    rec.watcher?.close();
    this.total.bytes -= rec.bytes;
    this.total.files -= rec.files;
    for (const name of rec.subfolders) this.dropSubtree(path.join(dir, name));
  }

  private checkLinkedFiles(): void {
    for (const dir of this.withLinks) {
      const rec = this.folders.get(dir)!;
      for (const [name, size] of rec.linked) {
        if (fs.lstatSync(path.join(dir, name), { throwIfNoEntry: false })?.size !== size) this.dirty.add(dir);
      }
    }
  }

  private refreshDirty(): void {
    // Parents first, so a folder that disappeared is dropped before anyone re-reads it.
    const todo = [...this.dirty].sort((a, b) => a.length - b.length);
    this.dirty.clear();
    for (const dir of todo) {
      const old = this.folders.get(dir);
      if (old === undefined) continue;
      // A fresh watch every time: the folder may have been replaced under the same name (ext4 even
      // reuses the inode number), which leaves the old watch dead.
      const fresh = this.readFolder(dir);
      old.watcher?.close();
      if (fresh === undefined) {
        this.dropSubtree(dir);
        continue;
      }
      this.total.bytes += fresh.bytes - old.bytes;
      this.total.files += fresh.files - old.files;
      this.folders.set(dir, fresh);
      if (fresh.linked.size > 0) this.withLinks.add(dir);
      else this.withLinks.delete(dir);
      for (const name of old.subfolders) if (!fresh.subfolders.has(name)) this.dropSubtree(path.join(dir, name));
      for (const name of fresh.subfolders) if (!old.subfolders.has(name)) this.addSubtree(path.join(dir, name));
    }
  }

  /** Lists one folder; the watch is set up before listing so no change can slip between the two. */
  private readFolder(dir: string): FolderRecord | undefined {
    const rec: FolderRecord = { bytes: 0, files: 0, subfolders: new Set(), linked: new Map(), watcher: undefined };
    if (!this.unwatched) rec.watcher = this.watch(dir);
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      rec.watcher?.close();
      return undefined;
    }
    for (const entry of entries) {
      if (entry.isDirectory()) {
        rec.subfolders.add(entry.name);
        continue;
      }
      const st = fs.lstatSync(path.join(dir, entry.name), { throwIfNoEntry: false });
      if (st === undefined) continue;
      if (st.isDirectory()) {
        rec.subfolders.add(entry.name); // replaced by a folder between readdir and lstat
        continue;
      }
      rec.bytes += st.size;
      rec.files += 1;
      if (st.nlink > 1 && st.isFile()) {
        rec.linked.set(entry.name, st.size);
        if (!this.linkedInodes.has(st.ino)) {
          this.linkedInodes.add(st.ino);
          this.sawNewLink = true;
        }
      }
    }
    return rec;
  }

  private watch(dir: string): fs.FSWatcher | undefined {
    try {
      const watcher = fs.watch(dir, { persistent: false }, () => this.dirty.add(dir));
      watcher.on('error', () => {
        this.unwatched = true;
      });
      return watcher;
    } catch {
      this.unwatched = true;
      return undefined;
    }
  }
}

const trees = new Map<string, TreeUsage>();

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

/** Exact bytes and file count of regular files (and links) under `root`; 0 if it does not exist. */
export function treeUsage(root: string): Promise<Usage> {
  return treeFor(root).usage();
}

/** Forgets what is known about `root` (after a command ran there, or when exactness is in doubt). */
export function invalidateTree(root: string): void {
  trees.get(path.resolve(root))?.invalidate();
}

/** Two turns of the loop: the first may start inside a poll callback, the second passes a poll phase. */
function turnEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

function isFolder(p: string): boolean {
  try {
    return fs.statSync(p).isDirectory();
  } catch {
    return false;
  }
}
