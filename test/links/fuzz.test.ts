/**
 * 1,000 random mutations of tokens and subpaths against a real server: only 404/410 for a token
 * that is not exactly a valid one, never a 5xx, and never a byte of the canary files placed
 * outside the zone, in another user's zone, and outside the linked folder (reached by links
 * planted inside it). Seeded, so a failure replays.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { onServer, rawGet, startFilesServer, type FilesServer } from './server.js';

let s: Shed;
let server: FilesServer;
const tokens: Record<string, string> = {};
const outsideTmp = path.join(os.tmpdir(), `links-fuzz-canary-${process.pid}.txt`);

function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

beforeAll(async () => {
  s = makeShed();
  const put = (p: string, c: string) => {
    fs.mkdirSync(path.dirname(p), { recursive: true });
    fs.writeFileSync(p, c);
  };
  put(path.join(s.base, 'CANARY-ROOT.txt'), 'CANARY-ROOT');
  put(s.zonePath('storage', 'bob.txt', 'bob'), 'CANARY-BOB');
  put(s.zonePath('storage', 'sibling.txt'), 'CANARY-SIBLING');
  put(outsideTmp, 'CANARY-TMP');
  put(s.zonePath('storage', 'share/in.txt'), 'inside');
  put(s.zonePath('storage', 'share/sub/deep.md'), '# deep');
  put(s.zonePath('storage', 'share/page.html'), '<p>hi</p>');
  const share = s.zonePath('storage', 'share');
  fs.symlinkSync('../../../../..', path.join(share, 'esc'));
  fs.symlinkSync(path.join(s.base, 'CANARY-ROOT.txt'), path.join(share, 'canary'));
  fs.symlinkSync(outsideTmp, path.join(share, 'tmp'));
  fs.symlinkSync('../sibling.txt', path.join(share, 'sib'));
  fs.symlinkSync(s.zonePath('storage', '', 'bob'), path.join(share, 'bob'));
  server = await startFilesServer({ storageBase: s.base });
  const link = async (p: string, extra: Record<string, unknown> = {}) => onServer(server, (await s.call('shed_link_create', { zone: 'storage', path: p, ...extra })).data!.url);
  tokens.folder = await link('share');
  tokens.file = await link('share/in.txt');
  tokens.revoked = await link('share');
  tokens.expired = await link('share', { expires_hours: 0.0000001 });
  await s.call('shed_link_delete', { link_id: new URL(tokens.revoked).pathname.split('/')[2]!.split('.')[0] });
});

afterAll(async () => {
  await server.close();
  s.cleanup();
  fs.rmSync(outsideTmp, { force: true });
});

const PIECES = ['..', '%2e%2e', '%2E.', '.%2e', '.', '%2f', '%5c', '\\', '%00', '%0a', 'esc', 'canary', 'tmp', 'sib', 'bob', 'bob.txt', 'sub', 'deep.md', 'in.txt', 'page.html', '', '%c0%ae%c0%ae', '..;', '%252e%252e', 'CANARY-ROOT.txt', 'sibling.txt', '.git', '%C3%A9', '%ff', '%', 'storage', 'data', 'users', 'Storage', '*', '%2e%2e%2f%2e%2e'];
const QUERIES = ['', '', '', '?zip=1', '?view=1', '?download=1', '?sort=size&order=desc', '?zip=1&view=1'];
const ALPHA = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.%/';

function mutateToken(tok: string, r: () => number): string {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
  const i = Math.floor(r() * tok.length);
  switch (Math.floor(r() * 8)) {
    case 0: return tok.slice(0, i) + pick([...ALPHA].filter((c) => c !== tok[i])) + tok.slice(i + 1);
    case 1: return tok.slice(0, i) + tok.slice(i + 1);
    case 2: return tok.slice(0, i) + pick([...ALPHA]) + tok.slice(i);
    case 3: return tok.slice(0, i);
    case 4: return tok.toUpperCase() === tok ? tok.toLowerCase() : tok.toUpperCase();
    case 5: return tok.split('.').reverse().join('.');
    case 6: return `${tok.split('.')[0]}.${pick(Object.values(tokens)).split('/files/')[1]!.split('/')[0]!.split('.')[1]}`;
    default: return encodeURIComponent(tok).replace(/./, (c) => `%${c.charCodeAt(0).toString(16)}`);
  }
}

describe('fuzz', () => {
  it('1,000 mutated requests: only 404/410 for bad tokens, never 5xx, never a canary byte', async () => {
    const r = rng(0x5eed);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
    const tokenOf = (url: string) => new URL(url).pathname.split('/')[2]!;
    const seen: Record<number, number> = {};
    for (let n = 0; n < 1000; n++) {
      const which = pick(['folder', 'folder', 'file', 'revoked', 'expired'] as const);
      const valid = tokenOf(tokens[which]!);
      const mutateTok = r() < 0.4;
      const tok = mutateTok ? mutateToken(valid, r) : valid;
      const depth = Math.floor(r() * 5);
      const sub = Array.from({ length: depth }, () => pick(PIECES)).join(pick(['/', '/', '/', '//']));
      const raw = `/files/${tok}${depth > 0 || r() < 0.5 ? '/' : ''}${sub}${r() < 0.3 ? '/' : ''}${pick(QUERIES)}`;
      const method = r() < 0.2 ? 'HEAD' : 'GET';
      const res = await rawGet(server.url, raw, method);
      seen[res.status] = (seen[res.status] ?? 0) + 1;
      const ctx = `${method} ${raw} → ${res.status}`;
      expect(res.status, ctx).toBeLessThan(500);
      expect(res.body.includes('CANARY'), ctx).toBe(false);
      if (mutateTok && tok !== valid) expect([404, 410], ctx).toContain(res.status);
      if (which === 'revoked' || which === 'expired') expect([404, 410], ctx).toContain(res.status);
    }
    console.log('fuzz statuses', JSON.stringify(seen));
    // The run exercised real successes too, not only refusals.
    expect(seen[200] ?? 0).toBeGreaterThan(20);
    expect(seen[404] ?? 0).toBeGreaterThan(200);
    expect(seen[410] ?? 0).toBeGreaterThan(50);
  }, 120_000);
});
