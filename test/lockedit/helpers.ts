/**
 * Helpers for the locked-edit, bridge, import and maintenance tests: arranging files on disk and
 * naming the internal places (locks, working copies) the tests check.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Shed } from '../helpers/shed.js';

export function put(file: string, content: string | Buffer = 'x'): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

export const read = (file: string) => fs.readFileSync(file, 'utf8');
export const exists = (file: string) => fs.lstatSync(file, { throwIfNoEntry: false }) !== undefined;

type Work = 'storage' | 'documents';
const BASE = { storage: 'Storage', documents: 'Documents' } as const;

export function workBase(s: Shed, zone: Work = 'storage', user = 'alice'): string {
  return path.join(s.base, 'users', user, BASE[zone]);
}
export function lockPath(s: Shed, rel: string, zone: Work = 'storage', user = 'alice'): string {
  return path.join(workBase(s, zone, user), 'locks', `${rel}.lock`);
}
export function copyPath(s: Shed, rel: string, conv = 'c1', zone: Work = 'storage', user = 'alice'): string {
  return path.join(workBase(s, zone, user), 'editzone', conv, rel);
}
export function readLockJson(s: Shed, rel: string, zone: Work = 'storage'): Record<string, unknown> {
  return JSON.parse(read(lockPath(s, rel, zone))) as Record<string, unknown>;
}
/** Plants a lock as another holder would have written it. */
export function plantLock(s: Shed, rel: string, lock: Record<string, unknown>, zone: Work = 'storage'): void {
  put(lockPath(s, rel, zone), JSON.stringify({ user_id: 'alice', conv_id: 'other', locked_at: new Date().toISOString(), path: rel, ...lock }));
}
/** Every entry below `dir` (relative), for "nothing else appeared" checks. */
export function listAll(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(dir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      out.push(child);
      if (e.isDirectory()) walk(child);
    }
  };
  walk('');
  return out.sort();
}
