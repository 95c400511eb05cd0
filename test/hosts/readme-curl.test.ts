/**
 * The README's curl example, run as written (only the port changed) against `fileshed serve` as a
 * child process: JSON calls and a file uploaded with multipart through shed_import land in the
 * user's zones; the upload obeys the quota; with --auth api-key, the README's two headers are what
 * a call needs (without them: 401, or 400 naming the user header).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as D from '../helpers/documents.mjs';
import { serve, type Served } from './helpers.js';

const README = fs.readFileSync('README.md', 'utf8');
/** The sh block after "Against `npm start`", as the README shows it. */
const EXAMPLE = /Against `npm start`[^\n]*\n\n```sh\n([\s\S]*?)```/.exec(README)?.[1] ?? '';
const servers: Served[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const s of servers) {
    await s.stop();
    fs.rmSync(s.base, { recursive: true, force: true });
  }
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

/** Runs shell text in a folder holding report.pdf, against the server's port; each curl's output parsed. */
function run(script: string, srv: Served, env: Record<string, string> = {}): Array<{ success: boolean; error?: { code: string }; data?: Record<string, unknown> }> {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-curl-'));
  dirs.push(cwd);
  fs.writeFileSync(path.join(cwd, 'report.pdf'), D.makePdf(['Quarterly report']));
  const port = new URL(srv.url).port;
  const r = spawnSync('bash', ['-euc', script.replaceAll('127.0.0.1:8765', `127.0.0.1:${port}`).replaceAll('curl -s ', "curl -s -w '\\n' ")], { cwd, encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  // Each answer is one pretty-printed JSON object; split them at the top-level closing brace.
  return r.stdout.split(/\n(?=\{)/).filter((t) => t.trim() !== '').map((t) => JSON.parse(t));
}

describe('the README curl example', () => {
  it('is in the README, and runs as written: a JSON call, a multipart upload into Uploads, moved to Storage', async () => {
    expect(EXAMPLE).toContain('-F files=@report.pdf');
    const srv = await serve([]);
    servers.push(srv);
    const answers = run(EXAMPLE, srv);
    expect(answers.map((a) => a.success)).toEqual([true, true, true, true]);
    expect(String(answers[3]!.data!.tree)).toMatch(/hello\.txt[\s\S]*report\.pdf|report\.pdf[\s\S]*hello\.txt/);
    const stored = path.join(srv.base, 'users', 'local', 'Storage', 'data', 'report.pdf');
    expect(fs.readFileSync(stored).subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('an upload over the quota is refused and nothing is kept', async () => {
    const srv = await serve(['--valve', 'quota_per_user_mb=0']);
    servers.push(srv);
    const [answer] = run(`curl -s http://127.0.0.1:8765/shed_import -F 'arguments={"import_all":true}' -F files=@report.pdf`, srv);
    expect(answer!.success).toBe(false);
    expect(answer!.error!.code).toBe('QUOTA_EXCEEDED');
    const uploads = path.join(srv.base, 'users', 'local', 'Uploads');
    const kept = fs.existsSync(uploads) ? fs.readdirSync(uploads, { recursive: true }).map(String) : [];
    expect(kept.filter((n) => n.endsWith('report.pdf'))).toEqual([]);
  });

  it('with --auth api-key the README headers are what a call needs', async () => {
    const key = 'fs_readme-curl-key-0123456789';
    const srv = await serve(['--auth', 'api-key'], { env: { FILESHED_API_KEY: key } });
    servers.push(srv);
    const headers = /add `(-H "Authorization: Bearer \$FILESHED_API_KEY" -H 'X-OpenWebUI-User-Id: alice')`/.exec(README)?.[1];
    expect(headers).toBeDefined();
    const upload = `curl -s http://127.0.0.1:8765/shed_import ${headers} -F 'arguments={"import_all":true}' -F files=@report.pdf`;
    const [ok] = run(upload, srv, { FILESHED_API_KEY: key });
    expect(ok!.success).toBe(true);
    expect(fs.existsSync(path.join(srv.base, 'users', 'alice'))).toBe(true);
    const port = new URL(srv.url).port;
    const bare = spawnSync('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', `http://127.0.0.1:${port}/shed_tree`, '-H', 'Content-Type: application/json', '-d', '{"zone":"storage"}'], { encoding: 'utf8' });
    expect(bare.stdout).toBe('401');
  });
});
