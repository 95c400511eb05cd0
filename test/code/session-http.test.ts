/**
 * A realistic session over HTTP, as a model drives `fileshed serve` (dist/, loopback): a CSV the
 * user uploaded goes to Documents, shed_run_python cleans it with pandas and draws a chart, both are
 * committed, a download link is made, and the PNG fetched through it is a PNG.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, serve, type Served } from '../hosts/helpers.js';

describe('a data session over HTTP with shed_run_python', () => {
  let s: Served;
  const headers = { Authorization: 'Bearer k1', 'X-OpenWebUI-User-Id': 'ana', 'X-OpenWebUI-Chat-Id': 'chat1' };
  const call = async (fn: string, body: unknown) => json(await s.post(fn, body, headers));

  beforeAll(async () => {
    s = await serve(['--auth', 'api-key', '--api-key', 'k1', '--access-log', 'off', '--valve', 'allow_python=true']);
  });
  afterAll(async () => {
    await s.stop();
    fs.rmSync(s.base, { recursive: true, force: true });
  });

  it('offers shed_run_python once allowed (OpenAPI, MCP), and shed_run_shell, still off, nowhere', async () => {
    const doc = await json(await fetch(`${s.url}/openapi.json`));
    const ops = Object.values(doc.paths as Record<string, { post: { operationId: string } }>).map((p) => p.post.operationId);
    expect(ops).toContain('shed_run_python');
    expect(ops).not.toContain('shed_run_shell');
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers } }));
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toContain('shed_run_python');
      expect(tools).not.toContain('shed_run_shell');
    } finally {
      await client.close();
    }
    const off = await call('shed_run_shell', { zone: 'storage', script: 'ls' });
    expect(off.error.code).toBe('FUNCTION_DISABLED');
    // The default deployment's specs (tools.json) hold neither. The Open WebUI tool file holds both:
    // Open WebUI stores a tool's specs when it is saved, so it carries every function a server can
    // offer, and one the server has off answers FUNCTION_DISABLED naming the setting (SPEC 13.6).
    expect(fs.readFileSync(path.resolve('dist/tools.json'), 'utf8')).not.toMatch(/shed_run_(python|shell)/);
    const toolFile = fs.readFileSync(path.resolve('dist/fileshed_openwebui.py'), 'utf8');
    expect(toolFile).toMatch(/def shed_exec\(/);
    expect(toolFile).toMatch(/def shed_run_python\(/);
    expect(toolFile).toMatch(/def shed_run_shell\(/);
  });

  it('upload → pandas clean + chart in Documents → one commit → link → PNG over HTTP', async () => {
    // The user's upload, as the host stores it.
    const uploads = path.join(s.base, 'users', 'ana', 'Uploads', 'chat1');
    fs.mkdirSync(uploads, { recursive: true });
    const rows = ['date,region,amount'];
    for (let i = 0; i < 200; i++) rows.push(`2024-01-${String((i % 28) + 1).padStart(2, '0')},${[' North', 'south ', 'EAST'][i % 3]},${i % 17 === 0 ? '' : (i * 3.5).toFixed(1)}`);
    fs.writeFileSync(path.join(uploads, 'sales.csv'), `${rows.join('\n')}\n`);

    const moved = await call('shed_move_uploads_to_documents', { src: 'sales.csv', dest: 'raw/sales.csv' });
    expect(moved.success, JSON.stringify(moved)).toBe(true);

    const code = [
      'import os',
      'import pandas as pd',
      'import matplotlib.pyplot as plt',
      "os.makedirs('clean', exist_ok=True); os.makedirs('charts', exist_ok=True)",
      "df = pd.read_csv('raw/sales.csv', parse_dates=['date'])",
      "df['region'] = df['region'].str.strip().str.title()",
      "df = df.dropna(subset=['amount'])",
      "df.to_csv('clean/sales.csv', index=False)",
      "totals = df.groupby('region')['amount'].sum().sort_values()",
      "ax = totals.plot(kind='barh', title='Sales by region')",
      "plt.tight_layout(); plt.savefig('charts/sales.png', dpi=80)",
      'print(len(df), totals.round(1).to_dict())',
    ].join('\n');
    // The model thinks between calls (a file changed within 100 ms before a call counts as the call's).
    await new Promise((resolve) => setTimeout(resolve, 300));
    const ran = await call('shed_run_python', { zone: 'documents', code });
    expect(ran.success, JSON.stringify(ran)).toBe(true);
    expect(ran.data.returncode, ran.data.stderr).toBe(0);
    expect(ran.data.stdout).toMatch(/^188 \{/);
    for (const region of ['East', 'North', 'South']) expect(ran.data.stdout).toContain(`'${region}': `);
    expect(ran.data.files_changed).toEqual(['charts/sales.png', 'clean/sales.csv']);
    expect(ran.data.commit).toMatch(/^[0-9a-f]{7,}$/);

    const docs = path.join(s.base, 'users', 'ana', 'Documents');
    const log = execFileSync('git', ['--git-dir=git', '--work-tree=data', 'log', '--format=%s', '--name-only', '-n', '1'], { cwd: docs, encoding: 'utf8' });
    expect(log).toContain('Run Python: import os');
    expect(log).toContain('charts/sales.png');
    expect(log).toContain('clean/sales.csv');
    const tracked = execFileSync('git', ['--git-dir=git', '--work-tree=data', 'ls-files'], { cwd: docs, encoding: 'utf8' }).split('\n');
    expect(tracked).toEqual(expect.arrayContaining(['raw/sales.csv', 'clean/sales.csv', 'charts/sales.png']));

    const link = await call('shed_link_create', { zone: 'documents', path: 'charts/sales.png' });
    expect(link.success, JSON.stringify(link)).toBe(true);
    const res = await fetch(link.data.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^image\/png/);
    const png = Buffer.from(await res.arrayBuffer());
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect(png.equals(fs.readFileSync(path.join(docs, 'data', 'charts', 'sales.png')))).toBe(true);
  });
});
