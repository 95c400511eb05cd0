/**
 * A position in a folder tree that moves one component at a time at constant cost. A system call
 * on a path makes the kernel walk every component of it, so checking a path 2,000 folders deep
 * component by component (lstat of each prefix) costs 2,000 × 2,000 / 2 lookups, seconds on the
 * event loop. The cursor holds a descriptor of the folder it is at and names children through
 * `/proc/self/fd/N/name`: the kernel jumps to the folder and looks up one name, whatever the depth.
 * Without /proc (not Linux) it falls back to full paths, as before.
 */
import fs from 'node:fs';
import path from 'node:path';

const PROC_FD = (() => {
  try {
    return fs.statSync('/proc/self/fd').isDirectory();
  } catch {
    return false;
  }
})();

const DIR_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_DIRECTORY ?? 0) | (fs.constants.O_NOFOLLOW ?? 0);
/** Linux's O_PATH (Node does not export it): a descriptor that names an entry without opening it for I/O. */
const O_PATH = 0o10000000;

/**
 * Where `abs` really is, from one kernel path walk: the path of a descriptor naming it (O_PATH, so a
 * FIFO or device is not opened), links followed except a final one unless `followLast`. Undefined
 * when it cannot tell (missing, too long, no /proc): the caller walks component by component.
 */
export function realLocation(abs: string, followLast: boolean): string | undefined {
  if (!PROC_FD || process.platform !== 'linux') return undefined;
  let fd: number;
  try {
    fd = fs.openSync(abs, O_PATH | (followLast ? 0 : (fs.constants.O_NOFOLLOW ?? 0)));
  } catch {
    return undefined;
  }
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  } finally {
    fs.closeSync(fd);
  }
}

export class DirCursor {
  private fd: number | undefined;
  /** Absolute path of the folder the cursor is at. */
  here: string;

  constructor(start: string) {
    this.here = start;
    this.fd = PROC_FD ? openDir(start) : undefined;
  }

  /** What is at `name` in the current folder (not following a final link), or undefined. */
  lstat(name: string): fs.Stats | undefined {
    try {
      return fs.lstatSync(this.child(name));
    } catch {
      return undefined; // missing, or a name the kernel refuses: nothing there
    }
  }

  readlink(name: string): string {
    return fs.readlinkSync(this.child(name));
  }

  /** Moves into the folder `name` (a real folder the caller has seen, not a link). */
  enter(name: string): void {
    this.move(name, `${this.here === path.sep ? '' : this.here}${path.sep}${name}`);
  }

  /** Moves to the folder that holds the current one. */
  up(): void {
    this.move('..', path.dirname(this.here));
  }

  /** The descriptor follows when it can; if a folder cannot be opened (no descriptor left), full paths take over. */
  private move(name: string, here: string): void {
    if (this.fd !== undefined) {
      const next = openDir(this.child(name));
      fs.closeSync(this.fd);
      this.fd = next;
    }
    this.here = here;
  }

  /**
   * Removals on the thread pool: of the non-folder entry `name` (a link itself, never its target),
   * or of the empty folder `name`. A removal takes the folder's lock exclusively, waits for whoever
   * walks it (or spins on the lock while they run) and writes the journal: that time must hold a
   * worker thread, not the event loop. The cursor must not move until each has settled.
   */
  readonly removing = {
    unlink: (name: string) => fs.promises.unlink(this.child(name)),
    rmdir: (name: string) => fs.promises.rmdir(this.child(name)),
  };

  /** Jumps to an absolute folder (costs one full-path lookup). */
  reset(abs: string): void {
    this.close();
    this.here = abs;
    this.fd = PROC_FD ? openDir(abs) : undefined;
  }

  /** Creates the folder `name` in the current folder (EEXIST and the like are thrown as by mkdirSync). */
  mkdir(name: string): void {
    fs.mkdirSync(this.child(name));
  }

  /** The entries of the current folder (readdir through the descriptor: no path length limit). */
  list(): fs.Dirent[] {
    return fs.readdirSync(this.fd !== undefined ? `/proc/self/fd/${this.fd}` : this.here, { withFileTypes: true });
  }

  /** Removes the empty folder `name` in the current folder (ENOTEMPTY and the like are thrown). */
  rmdir(name: string): void {
    fs.rmdirSync(this.child(name));
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  private child(name: string): string {
    return this.fd !== undefined ? `/proc/self/fd/${this.fd}/${name}` : path.join(this.here, name);
  }
}

function openDir(p: string): number | undefined {
  try {
    return fs.openSync(p, DIR_FLAGS);
  } catch {
    return undefined;
  }
}

/** `fs.mkdirSync(path.join(base, rel), { recursive: true })` at constant cost per level (`base` is created as usual). */
export function makeFolders(base: string, rel: string): void {
  fs.mkdirSync(base, { recursive: true });
  const cursor = new DirCursor(base);
  try {
    for (const name of rel.split(/[\\/]/).filter((p) => p !== '' && p !== '.')) {
      const st = cursor.lstat(name);
      if (st === undefined) {
        try {
          cursor.mkdir(name);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err; // made meanwhile by another call
        }
      } else if (!st.isDirectory()) {
        throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${path.join(cursor.here, name)}'`), { code: 'ENOTDIR' });
      }
      cursor.enter(name);
    }
  } finally {
    cursor.close();
  }
}

/** Levels removed at once; deeper chains go on in the background (each rmdir is a journaled disk write, ~1 ms). */
const PRUNE_NOW = 16;

/**
 * Removes empty folders from `dir` up to (not including) `stop`: the first PRUNE_NOW levels now, at
 * constant cost per level, the rest on the thread pool, so a chain thousands of folders deep never
 * holds the event loop.
 */
export function removeEmptyFolders(dir: string, stop: string): void {
  if (!dir.startsWith(stop + path.sep)) return;
  const names = dir.slice(stop.length + 1).split(path.sep);
  const cursor = new DirCursor(path.dirname(dir));
  let current = dir;
  try {
    for (let i = names.length - 1; i >= 0; i--) {
      if (names.length - i > PRUNE_NOW) {
        void removeLater(current, stop);
        return;
      }
      try {
        cursor.rmdir(names[i]!);
      } catch {
        return; // not empty, or gone
      }
      cursor.up();
      current = path.dirname(current);
    }
  } finally {
    cursor.close();
  }
}

async function removeLater(dir: string, stop: string): Promise<void> {
  for (let current = dir; current.startsWith(stop + path.sep); current = path.dirname(current)) {
    try {
      await fs.promises.rmdir(current);
    } catch {
      return;
    }
  }
}
