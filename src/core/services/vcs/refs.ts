/**
 * HEAD and branch references. Reads understand loose refs, packed-refs and symbolic HEAD (a
 * repository made by an older version may sit on `master`); writes replace the loose ref file
 * atomically (temp file in the git folder, rename), so HEAD is always the old or the new commit.
 * Like git's defaults (core.fsync leaves out refs and loose objects), nothing is fsynced: a killed
 * process cannot tear a rename; only a power cut could lose the newest commits.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { writeAll } from '../../base/fs/read.js';
import { createStateFile, makeStateDir, readStateText, renameState } from '../../base/fs/nofollow.js';
import { assertFence } from '../../base/locks/lease.js';

export interface Head {
  /** Branch HEAD points to ('refs/heads/main'), or undefined when HEAD is detached. */
  ref: string | undefined;
  /** Current commit, undefined before the first commit. */
  oid: string | undefined;
}

const OID = /^[0-9a-f]{40}$/;
// Only plain branch and tag names: a damaged HEAD must never make us write outside refs/.
const SAFE_REF = /^refs\/(?:heads|tags)\/(?!\.)(?!.*(?:\.\.|\/\.|\/\/|\.lock$|@\{))[A-Za-z0-9._\/-]+$/;

export function isSafeRef(name: string): boolean {
  return SAFE_REF.test(name);
}

export function readHead(gitdir: string): Head {
  return headOf(gitdir, readText(path.join(gitdir, 'HEAD')));
}

/** HEAD from its text, read a moment ago by the caller (ensureRepo); undefined: no HEAD file. */
export function headOf(gitdir: string, headText: string | undefined): Head {
  const text = headText?.trim();
  if (text === undefined) return { ref: 'refs/heads/main', oid: undefined };
  if (text.startsWith('ref:')) {
    const ref = text.slice(4).trim();
    if (!isSafeRef(ref)) throw new Error(`HEAD points to an unusable ref '${ref}'`);
    return { ref, oid: readRef(gitdir, ref) };
  }
  if (OID.test(text)) return { ref: undefined, oid: text };
  throw new Error('HEAD is damaged');
}

/** The commit a branch or tag points to (loose file first, then packed-refs). */
export function readRef(gitdir: string, ref: string): string | undefined {
  if (!isSafeRef(ref)) return undefined;
  const loose = readText(path.join(gitdir, ...ref.split('/')));
  if (loose !== undefined) return OID.test(loose) ? loose : undefined;
  const packed = readText(path.join(gitdir, 'packed-refs'));
  if (packed === undefined) return undefined;
  for (const line of packed.split('\n')) {
    const [oid, name] = line.split(' ');
    if (name === ref && oid !== undefined && OID.test(oid)) return oid;
  }
  return undefined;
}

/** Points `ref` (or a detached HEAD when ref is undefined) at `oid`, atomically. */
export function writeRef(gitdir: string, ref: string | undefined, oid: string): void {
  const target = ref === undefined ? path.join(gitdir, 'HEAD') : path.join(gitdir, ...ref.split('/'));
  if (ref !== undefined && !isSafeRef(ref)) throw new Error(`refusing to write ref '${ref}'`);
  makeStateDir(path.dirname(target));
  // The temp file lives in the git folder itself: a leftover there is never mistaken for a ref.
  const tmp = path.join(gitdir, `fileshed-ref-${crypto.randomBytes(6).toString('hex')}.tmp`);
  const fd = createStateFile(tmp);
  try {
    writeAll(fd, Buffer.from(`${oid}\n`));
  } finally {
    fs.closeSync(fd);
  }
  try {
    assertFence(); // the commit point: a holder whose lease ended never moves the branch
    renameState(tmp, target);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

/** A ref file's text; a link or special file there fails (IO_ERROR), it is never followed. */
function readText(file: string): string | undefined {
  return readStateText(file)?.trim();
}
