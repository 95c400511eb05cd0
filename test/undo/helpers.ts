/** What the undo tests share: calls that carry an assistant message id (a turn), and tree hashes. */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { frameObject } from '../../src/core/formats/git/objects.js';
import { readLogged } from '../../src/core/services/vcs/object-log.js';
import type { Result, Shed } from '../helpers/shed.js';

/** Calls `fn` as `user` in conversation `chat`, inside the turn (assistant message) `turn`. */
export async function inTurn(s: Shed, turn: string | undefined, fn: string, args: Record<string, unknown> = {}, as: { user?: string; chat?: string } = {}): Promise<Result & { turn?: string }> {
  const user = as.user ?? 'alice';
  const method = (s.tools as unknown as Record<string, (a: unknown) => Promise<string>>)[fn];
  if (typeof method !== 'function') throw new Error(`no method ${fn}`);
  const meta: Record<string, unknown> = { chat_id: as.chat ?? 'c1', ...(turn !== undefined ? { message_id: turn } : {}) };
  const json = await method.call(s.tools, { ...args, __user__: { id: user, name: user.toUpperCase() }, __metadata__: meta });
  return JSON.parse(json) as Result & { turn?: string };
}

/** path → sha256 (files), 'link:target' (links), of every entry under `root` except the skipped top names. */
export function hashTree(root: string, skip: readonly string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string, rel: string): void => {
    let names: string[];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names.sort()) {
      const r = rel === '' ? name : `${rel}/${name}`;
      if (rel === '' && skip.includes(name)) continue;
      const abs = path.join(dir, name);
      const st = fs.lstatSync(abs);
      if (st.isDirectory()) walk(abs, r);
      else if (st.isSymbolicLink()) out[r] = `link:${fs.readlinkSync(abs)}`;
      else out[r] = `${crypto.createHash('sha256').update(fs.readFileSync(abs)).digest('hex')}:${(st.mode & 0o100) !== 0 ? 'x' : '-'}`;
    }
  };
  walk(root, '');
  return out;
}

/** A user's turn records log (server state): one JSON line per call ({add}), whole record ({set}) or drop. */
export function turnLog(s: Shed, user = 'alice'): string {
  return path.join(s.base, 'users', user, 'Storage', 'undo', 'turns.log');
}

export interface LoggedTurn {
  turn: string;
  conv: string;
  updated: number;
  calls: { fn: string; at: number }[];
  /** label and versioned are left out for Storage, Uploads and Documents (their usual values). */
  commits: { tree: string; oid: string; label?: string; versioned?: boolean }[];
}

/** The records the log holds now, folded line by line as another reader would (an oracle of our own). */
export function loggedTurns(s: Shed, user = 'alice'): Map<string, LoggedTurn> {
  const out = new Map<string, LoggedTurn>();
  if (!fs.existsSync(turnLog(s, user))) return out;
  for (const text of fs.readFileSync(turnLog(s, user), 'utf8').split('\n')) {
    if (text === '') continue;
    const line = JSON.parse(text) as { add?: LoggedTurn & { fn: string; at: number }; set?: LoggedTurn; drop?: string };
    if (line.add !== undefined) {
      const a = line.add;
      const rec = out.get(a.turn) ?? { turn: a.turn, conv: a.conv, updated: a.at, calls: [], commits: [] };
      rec.updated = Math.max(rec.updated, a.at);
      rec.calls.push({ fn: a.fn, at: a.at });
      rec.commits.push(...a.commits);
      out.set(a.turn, rec);
    } else if (line.set !== undefined) out.set(line.set.turn, line.set);
    else if (line.drop !== undefined) out.delete(line.drop);
  }
  return out;
}

/** Appends a line to the log as another instance's call (or retention) would. */
export function appendToLog(s: Shed, line: unknown, user = 'alice'): void {
  fs.appendFileSync(turnLog(s, user), `${JSON.stringify(line)}\n`);
}

/**
 * The entries of a shadow repository's trees-and-commits log (vcs/object-log.ts): id and the object
 * deflated as a loose object holds it (the log's own reader decodes each, checked against its id).
 */
export function loggedObjects(gitdir: string): { oid: string; deflated: Buffer }[] {
  const file = path.join(gitdir, 'objects', 'fileshed-objects.log');
  if (!fs.existsSync(file)) return [];
  const bytes = fs.readFileSync(file);
  const out: { oid: string; deflated: Buffer }[] = [];
  for (let at = 0; at + 24 <= bytes.length; ) {
    const length = bytes.readUInt32BE(at + 20);
    if (at + 24 + length > bytes.length) break;
    const oid = bytes.subarray(at, at + 20).toString('hex');
    const obj = readLogged(gitdir, oid)!;
    out.push({ oid, deflated: zlib.deflateSync(frameObject(obj.type, obj.body)) });
    at += 24 + length;
  }
  return out;
}

/**
 * A copy of a shadow repository the git CLI can read whole: its logged trees and commits written out
 * as loose objects (git knows nothing of the log). The caller removes it.
 */
export function gitReadableCopy(gitdir: string): string {
  const copy = fs.mkdtempSync(path.join(path.dirname(gitdir), '.git-view-'));
  fs.cpSync(gitdir, copy, { recursive: true });
  for (const { oid, deflated } of loggedObjects(gitdir)) {
    const file = path.join(copy, 'objects', oid.slice(0, 2), oid.slice(2));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    if (!fs.existsSync(file)) fs.writeFileSync(file, deflated);
  }
  return copy;
}
