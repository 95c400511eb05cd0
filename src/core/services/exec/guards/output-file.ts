/**
 * stdout_file / stderr_file of a command or script: the output is written to a temp file where no
 * command can reach it (the scope's stash folder: server state beside the zones, same filesystem,
 * see locks/state-dir.ts), and once the command has ended it is renamed into place beneath the
 * zone by descriptor (fs/beneath.ts). Before, the temp file lay beside the target in the zone: a
 * script could move it next to another member's file and swap its folder for a link, and the
 * server's final rename, following the link, replaced the victim's file. Now the command never sees
 * the temp file, and the place is reached folder by folder without following any link: a link or a
 * file standing where a folder of the path belongs, or a folder at the file's own name, is moved
 * aside (`<name>.~N~`, nothing the command made is lost), so the output lands exactly where the
 * path says. Each temp file has a folder of its own in the stash, with no journal: what a kill
 * leaves is removed with the stash's leftovers by the next call (stash.ts: a folder without a
 * journal moved nothing).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { assertPublishable, fsyncOffLoop, TEMP_SUFFIX } from '../../../base/fs/atomic.js';
import { makeBeneath, syncBeneath, type MovedAside } from '../../../base/fs/beneath.js';
import { scopeHome, scopeStashDir } from '../../../base/locks/state-dir.js';
import type { Zone } from '../../../base/zones/zones.js';

export interface OutputTemp {
  /** Where the command's stream goes. */
  fd: number;
  /** fsync, close, rename into place at `rel` of the zone; returns what stood in the way, moved aside. */
  commit(): Promise<MovedAside[]>;
  /** Close (if open) and remove the temp file; safe after a failure at any point. */
  abort(): void;
}

/** A temp file out of every command's reach, to become `rel` (zone-relative) of `zone` once the command has ended. */
export function openOutputTemp(zone: Zone, rel: string, mode = 0o644): OutputTemp {
  const base = scopeStashDir(scopeHome(zone.scope));
  fs.mkdirSync(base, { recursive: true, mode: 0o700 });
  const own = path.join(base, `output-${crypto.randomBytes(8).toString('hex')}`);
  fs.mkdirSync(own, { mode: 0o700 });
  const tmp = path.join(own, `output${TEMP_SUFFIX}`);
  let fd: number;
  try {
    fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, mode);
  } catch (err) {
    dropEmpty(own);
    dropEmpty(base);
    throw err;
  }
  let open = true;
  const close = () => {
    if (open) fs.closeSync(fd);
    open = false;
  };
  const abort = () => {
    try {
      close();
    } catch {
      // already closed by the failure being handled
    }
    fs.rmSync(tmp, { force: true });
    dropEmpty(own);
    dropEmpty(base);
  };
  return {
    fd,
    async commit() {
      const moved: MovedAside[] = [];
      try {
        await fsyncOffLoop(fd); // a command's output can be large: flushed on the thread pool
        close();
        assertPublishable();
        const dir = makeBeneath(zone.root, path.posix.dirname(rel) === '.' ? '' : path.posix.dirname(rel), moved);
        try {
          const name = path.posix.basename(rel);
          // A folder the command made at the file's name is kept aside; a file or a link there is replaced (never followed).
          if (dir.lstat(name)?.isDirectory()) dir.moveAside(name, moved);
          fs.renameSync(tmp, dir.child(name));
          await syncBeneath(dir);
        } finally {
          dir.close();
        }
      } catch (err) {
        abort();
        throw err;
      }
      dropEmpty(own);
      dropEmpty(base);
      return moved;
    },
    abort,
  };
}

/** A folder of the stash goes once empty, so nothing of it stays beside the zones between calls. */
function dropEmpty(base: string): void {
  try {
    fs.rmdirSync(base);
  } catch {
    // a stash or another output is still there
  }
}
