/**
 * Git objects as a format: their ids, and the bytes of trees and commits, parsed and made. Pure; the
 * object store on disk is services/vcs/objects.ts.
 */
import crypto from 'node:crypto';
import { compareTreeNames, TREE_MODE } from './names.js';

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag';

export interface GitObject {
  type: ObjectType;
  body: Buffer;
}

export interface TreeEntry {
  mode: string;
  /** Byte string (see names.ts). */
  name: string;
  oid: string;
}

export interface Commit {
  oid: string;
  tree: string;
  parents: string[];
  /** "Name <email>" */
  author: string;
  authorTime: number;
  /** "+0100" */
  authorTz: string;
  committer: string;
  committerTime: number;
  committerTz: string;
  message: string;
}

export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
export function hashObject(type: ObjectType, body: Uint8Array): string {
  return crypto.createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');
}

/** An object as git stores it before deflating it (a loose object, an entry of the shadows' log): `type size\0body`. */
export function frameObject(type: ObjectType, body: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(`${type} ${body.length}\0`), body]);
}

/** The type and body of an inflated frame (frameObject's inverse). */
export function unframeObject(full: Buffer): GitObject {
  const nul = full.indexOf(0);
  const [type] = full.subarray(0, nul).toString('latin1').split(' ');
  return { type: type as ObjectType, body: full.subarray(nul + 1) };
}

export function parseTree(body: Buffer): TreeEntry[] {
  const out: TreeEntry[] = [];
  let pos = 0;
  while (pos < body.length) {
    const space = body.indexOf(0x20, pos);
    const nul = body.indexOf(0, space);
    if (space < 0 || nul < 0 || nul + 21 > body.length) throw new Error('malformed tree object');
    out.push({
      mode: body.toString('latin1', pos, space),
      name: body.toString('latin1', space + 1, nul),
      oid: body.toString('hex', nul + 1, nul + 21),
    });
    pos = nul + 21;
  }
  return out;
}

export function serializeTree(entries: TreeEntry[]): Buffer {
  const sorted = [...entries].sort(compareTreeNames);
  const parts: Buffer[] = [];
  for (const e of sorted) parts.push(...treeEntryBytes(e));
  return Buffer.concat(parts);
}

/** Git's bytes of one tree entry (the tree is these, in tree order). */
export function treeEntryBytes(e: TreeEntry): Buffer[] {
  return [Buffer.from(`${e.mode} ${e.name}\0`, 'latin1'), Buffer.from(e.oid, 'hex')];
}

/** A commit object's body. */
export function serializeCommit(c: NewCommit): Buffer {
  const lines = [`tree ${c.tree}`, ...c.parents.map((p) => `parent ${p}`), `author ${c.author} ${c.time} ${c.tz}`, `committer ${c.committer} ${c.time} ${c.tz}`];
  return Buffer.from(`${lines.join('\n')}\n\n${c.message}`, 'utf8');
}

export function isTreeMode(mode: string): boolean {
  return mode === TREE_MODE || mode === '040000';
}

export function parseCommit(oid: string, body: Buffer): Commit {
  const text = body.toString('utf8');
  const split = text.indexOf('\n\n');
  const head = split < 0 ? text : text.slice(0, split);
  const message = split < 0 ? '' : text.slice(split + 2);
  const commit: Commit = { oid, tree: EMPTY_TREE, parents: [], author: '', authorTime: 0, authorTz: '+0000', committer: '', committerTime: 0, committerTz: '+0000', message };
  for (const line of head.split('\n')) {
    const sp = line.indexOf(' ');
    const key = line.slice(0, sp);
    const value = line.slice(sp + 1);
    if (key === 'tree') commit.tree = value;
    else if (key === 'parent') commit.parents.push(value);
    else if (key === 'author' || key === 'committer') {
      const m = /^(.*>) (-?\d+) ([+-]\d{4})$/.exec(value);
      const who = m ? m[1]! : value;
      const time = m ? Number(m[2]) : 0;
      const tz = m ? m[3]! : '+0000';
      if (key === 'author') Object.assign(commit, { author: who, authorTime: time, authorTz: tz });
      else Object.assign(commit, { committer: who, committerTime: time, committerTz: tz });
    }
  }
  return commit;
}

export interface NewCommit {
  tree: string;
  parents: string[];
  author: string;
  committer: string;
  time: number;
  tz: string;
  message: string;
}
