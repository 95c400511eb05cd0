/**
 * Per-scope change stamps, so usage known in memory is never trusted after another process wrote.
 *
 * Usage answers rely on inotify (usage.ts), which sees other local processes' writes but not those
 * of other hosts on a shared network filesystem (NFS, CephFS). So every modifying call bumps a
 * small stamp file in its scope's internal state folder (outside the zones, not counted) before it returns,
 * and every usage question first compares the stamp with the last one this process saw or wrote:
 * a stranger's stamp means another process wrote, and the scope's trees are measured again.
 * The bump happens under the call lock (call-lock.ts), so the reader's next question (which waits
 * for that lock when it writes) always sees it.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { QuotaScope } from '../zones/zones.js';
import { invalidateTree } from './usage.js';
import { scopeStateDir, STAMP_NAME } from '../locks/state-dir.js';

const STAMP_BYTES = 48;

/** Scope key → the stamp this process last saw or wrote. */
const seen = new Map<string, string>();

/** The stamp of a scope, in the state folder of its home ("user:/base/users/alice" → /base/users/alice/...). */
function stampPath(scope: Pick<QuotaScope, 'key'>): string {
  return path.join(scopeStateDir(scope.key.slice(scope.key.indexOf(':') + 1)), STAMP_NAME);
}

function readStamp(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return ''; // none yet: no process has written through Fileshed
  }
}

/** Records that this process changed the scope (after each modifying call). */
export function bumpStamp(scope: Pick<QuotaScope, 'key'>): void {
  const file = stampPath(scope);
  // Fixed length, so rewriting never truncates (on ext4 a truncate-then-write forces a data flush).
  const token = `${process.pid} ${Date.now()} ${crypto.randomBytes(6).toString('hex')}`.padEnd(STAMP_BYTES, ' ').slice(0, STAMP_BYTES);
  try {
    // Overwritten in place (no temp + rename, no truncate: either cost every modifying call most of
    // a millisecond): a reader that catches it half-written sees a stamp that is not the one it
    // knows, and measures again, which is the safe side.
    let fd: number;
    try {
      fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o644);
    } catch {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW, 0o644);
    }
    try {
      fs.writeSync(fd, token, 0, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
    seen.set(scope.key, token);
  } catch {
    seen.delete(scope.key); // unknown state: the next question measures again
  }
}

/** Before a usage answer: forgets what is known about the scope's trees if another process wrote. */
export function checkStamp(scope: QuotaScope): void {
  const current = readStamp(stampPath(scope));
  if (seen.has(scope.key) && seen.get(scope.key) === current) return;
  if (seen.has(scope.key)) for (const root of Object.values(scope.trees)) invalidateTree(root);
  seen.set(scope.key, current);
}
