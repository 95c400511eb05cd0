/** What the undo tests share: calls that carry an assistant message id (a turn), and tree hashes. */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
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
