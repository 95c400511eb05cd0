/**
 * The paths a change is about to record, kept in the repository while it is recorded: written
 * before the repository lock is even asked for (the working tree already holds the change), removed
 * once the commit is made. A process killed anywhere in between leaves them, so whoever takes its
 * locks over commits exactly those paths (O(change)) instead of walking the whole zone (O(zone):
 * minutes on a network filesystem with thousands of files). One record per change (its own name),
 * so changes that overlap never erase each other's. Not synced: a record lost in a crash only
 * means the walk.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { readText, writeBytes } from '../../base/fs/read.js';
import type { Repo } from './repo.js';

const PREFIX = 'fileshed-pending-';
const SUFFIX = '.json';

/** Runs `fn` with `paths` recorded as pending; the record goes when `fn` ends, however it ends. */
export async function withPendingPaths<T>(repo: Repo, paths: readonly string[], fn: () => Promise<T>): Promise<T> {
  const file = path.join(repo.gitdir, `${PREFIX}${crypto.randomBytes(6).toString('hex')}${SUFFIX}`);
  writeBytes(file, JSON.stringify({ paths }), { mode: 0o600, exclusive: true });
  try {
    return await fn();
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** Every pending record of the repository (readable or not). */
export function pendingRecords(repo: Repo): string[] {
  try {
    return fs.readdirSync(repo.gitdir).filter((n) => n.startsWith(PREFIX) && n.endsWith(SUFFIX)).map((n) => path.join(repo.gitdir, n));
  } catch {
    return [];
  }
}

/**
 * What killed changes left pending: the union of their paths and the records to remove once they
 * are committed; undefined when there is none, or one cannot be read (then only a walk is safe).
 */
export function pendingChanges(repo: Repo): { paths: string[]; records: string[] } | undefined {
  const records = pendingRecords(repo);
  if (records.length === 0) return undefined;
  const paths = new Set<string>();
  for (const record of records) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readText(record));
    } catch {
      return undefined; // killed while writing the record itself
    }
    const list = (parsed as { paths?: unknown } | null)?.paths;
    if (!Array.isArray(list) || !list.every((p) => typeof p === 'string')) return undefined;
    for (const p of list) paths.add(p);
  }
  return { paths: [...paths], records };
}
