/**
 * Shared arena for the shed_exec attack corpus (test/security/exec-*.test.ts). Every attack runs
 * once per sandbox mode ('bwrap', 'landlock' and 'validated'), with canaries holding a secret outside the
 * attacked zone: a separate temp folder (outside the storage base), the folder beside the zone
 * root, another user's zones and another conversation's Uploads. After each attack the check is:
 * every canary byte-identical, nothing added or removed outside the zones in use, and the secret
 * absent from every response (as text, hex or base64).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { makeShed, type Result, type Shed } from '../helpers/shed.js';

export const MODES = ['bwrap', 'landlock', 'validated'] as const;
export type Mode = (typeof MODES)[number];

export const SECRET = `KANARIE-${crypto.randomBytes(8).toString('hex')}-TOPSECRET`;
const SECRET_HEAD = SECRET.slice(0, 12);

export interface Arena {
  s: Shed;
  mode: Mode;
  /** Real path of a folder outside the storage base holding secret.txt and dir/inner.txt. */
  outside: string;
  /** Real path of alice's Storage root. */
  zone: string;
  /** Real path of alice's Uploads root for conversation c1. */
  uploads: string;
  /** shed_exec as alice in conversation c1; the response is recorded for the secret check. */
  exec(args: Record<string, unknown>, as?: { user?: string; chat?: string }): Promise<Result>;
  /** Any function, recorded too. */
  call(fn: string, args: Record<string, unknown>): Promise<Result>;
  /** Writes a file in the zone (relative path) or anywhere (absolute). */
  put(p: string, content: string | Buffer, mode?: number): void;
  /** The zone-relative path from the Storage root to a path outside. */
  rel(to: string, from?: string): string;
  /** Asserts the canaries, the outside tree and the responses; then removes everything. */
  finish(): void;
}

/**
 * Reads are detected by access time: every file outside the zones is given an access time in
 * 2000; any read (relatime updates it because it is older than the change time) moves it. The
 * snapshot's own read puts it back.
 */
const OLD = new Date('2000-01-01T00:00:00Z');

function snapshot(roots: string[], skip: Set<string>, skipIn: (p: string) => boolean): Map<string, string> {
  const out = new Map<string, string>();
  const visit = (p: string) => {
    if (skip.has(p) || skipIn(p)) return;
    const st = fs.lstatSync(p, { throwIfNoEntry: false });
    if (st === undefined) return;
    if (st.isSymbolicLink()) out.set(p, `link:${fs.readlinkSync(p)}`);
    else if (st.isDirectory()) {
      out.set(p, `dir:${st.mode.toString(8)}`);
      for (const name of fs.readdirSync(p)) visit(path.join(p, name));
    } else {
      const untouched = st.atimeMs === OLD.getTime() ? 'unread' : `READ at ${st.atime.toISOString()}`;
      const hash = crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');
      fs.utimesSync(p, OLD, st.mtime);
      out.set(p, `file:${st.mode.toString(8)}:${hash}:${untouched}`);
    }
  };
  for (const r of roots) visit(r);
  return out;
}

export function makeArena(mode: Mode, valves: Record<string, unknown> = {}): Arena {
  // Undo capture off: its first call hashes the user's files once (a server read the atime canaries
  // would count as the command's); test/undo/reach.test.ts shows commands cannot reach its store.
  const s = makeShed({ sandbox: mode, undo_enabled: false, ...valves });
  const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-canary-')));
  const responses: string[] = [];
  const write = (p: string, content: string | Buffer, fileMode?: number) => {
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, content, fileMode === undefined ? undefined : { mode: fileMode });
  };
  write(path.join(outside, 'secret.txt'), `${SECRET}\n`);
  write(path.join(outside, 'dir', 'inner.txt'), `${SECRET}\n`);
  write(path.join(outside, 'db.sqlite'), `${SECRET}\n`);
  const users = path.join(s.base, 'users');
  write(path.join(users, 'alice', 'Storage', 'above-secret.txt'), `${SECRET}\n`);
  write(path.join(users, 'alice', 'Uploads', 'c2', 'other-chat.txt'), `${SECRET}\n`);
  write(path.join(users, 'bob', 'Storage', 'data', 'bob-secret.txt'), `${SECRET}\n`);
  write(path.join(users, 'bob', 'Documents', 'data', 'bob-doc.txt'), `${SECRET}\n`);
  const home = path.join(users, 'alice');
  for (const dir of [path.join(home, 'Storage', 'data'), path.join(home, 'Documents', 'data'), path.join(home, 'Uploads', 'c1')]) fs.mkdirSync(dir, { recursive: true });
  const zone = fs.realpathSync(path.join(home, 'Storage', 'data'));
  const uploads = fs.realpathSync(path.join(home, 'Uploads', 'c1'));
  // The zones under attack may change; everything else under the base and the outside folder may not.
  const skip = new Set([
    zone,
    uploads,
    path.join(home, 'Documents', 'data'),
    path.join(home, 'Documents', 'git'), // the history of Documents, server state (made at the first modifying call)
    path.join(home, 'Storage', 'editzone'),
    path.join(home, 'Storage', 'locks'),
    path.join(home, 'Storage', 'undo'), // the undo capture store (docs/undo.md), server state made at the first modifying call
    path.join(home, 'Documents', 'editzone'),
    path.join(home, 'Documents', 'locks'),
  ]);
  // Conversations other than c2 (the canary) may be created on first use.
  const uploadsDir = path.join(home, 'Uploads');
  const skipIn = (p: string) => path.dirname(p) === uploadsDir && !['c1', 'c2'].includes(path.basename(p));
  const roots = [outside, s.base];
  snapshot(roots, skip, skipIn); // marks every canary file unread
  let before: Map<string, string> | undefined;
  const arena: Arena = {
    s,
    mode,
    outside,
    zone,
    uploads,
    async exec(args, as = {}) {
      before ??= snapshot(roots, skip, skipIn);
      const r = await s.call('shed_exec', args, as);
      responses.push(JSON.stringify(r));
      return r;
    },
    async call(fn, args) {
      before ??= snapshot(roots, skip, skipIn);
      const r = await s.call(fn, args);
      responses.push(JSON.stringify(r));
      return r;
    },
    put(p, content, fileMode) {
      write(path.isAbsolute(p) ? p : path.join(zone, p), content, fileMode);
    },
    rel(to, from = zone) {
      return path.relative(from, to);
    },
    finish() {
      try {
        const after = snapshot(roots, skip, skipIn);
        if (before) {
          expect([...after.keys()].sort(), 'entries outside the zone were added or removed').toEqual([...before.keys()].sort());
          for (const [p, v] of before) expect(after.get(p), `canary ${p} changed or was read`).toBe(v);
        }
        expect(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe(`${SECRET}\n`);
        const hexHead = Buffer.from(SECRET_HEAD).toString('hex');
        const b64Head = Buffer.from(SECRET_HEAD).toString('base64');
        for (const text of responses) {
          expect(text, 'the secret leaked into a response').not.toContain(SECRET_HEAD);
          expect(text).not.toContain('TOPSECRET');
          expect(text.toLowerCase().replace(/[^0-9a-f]/g, '')).not.toContain(hexHead);
          expect(text).not.toContain(b64Head);
        }
      } finally {
        s.cleanup();
        fs.rmSync(outside, { recursive: true, force: true });
      }
    },
  };
  return arena;
}

/** A refused call: success false with one of the expected codes. */
export function expectRefused(r: Result, codes: string | string[] = ['ARGUMENT_FORBIDDEN', 'PATH_ESCAPE', 'COMMAND_FORBIDDEN']): void {
  const list = Array.isArray(codes) ? codes : [codes];
  expect(r.success, JSON.stringify(r)).toBe(false);
  expect(list, JSON.stringify(r.error)).toContain(r.error?.code);
  expect(r.error?.hint, 'a refusal says what to do instead').toBeTruthy();
}

/** Refused, or it ran and failed/did nothing harmful (checked by the arena afterwards). */
export function expectRefusedOrContained(r: Result): void {
  if (!r.success) expect(['ARGUMENT_FORBIDDEN', 'PATH_ESCAPE', 'COMMAND_FORBIDDEN', 'ZONE_READONLY'], JSON.stringify(r.error)).toContain(r.error?.code);
}

export function expectOk(r: Result): NonNullable<Result['data']> {
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  expect(r.success).toBe(true);
  return r.data!;
}

/** Ran and exited 0. */
export function expectRan(r: Result): NonNullable<Result['data']> {
  const d = expectOk(r);
  expect(d.returncode, `${d.command} failed: ${d.stderr}`).toBe(0);
  return d;
}

/** Installed on this machine (on the system PATH the executor uses). */
export function installed(cmd: string): boolean {
  return ['/usr/local/bin', '/usr/bin', '/bin'].some((d) => {
    try {
      fs.accessSync(path.join(d, cmd), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
