// Host benches, medians in one run:
// - POST /shed_read of a small file over a keep-alive connection vs the same call in-process (overhead <= 1 ms);
// - MCP stdio tools/call reading a small file vs @modelcontextprotocol/server-filesystem read_text_file, same SDK client (<= 1.2x);
// - `npm start` (node dist/cli.mjs serve) to the first answered request (<= 1 s).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { median, printTable, sized } from './lib.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CLI = path.join(root, 'dist/cli.mjs');
const RUNS = Number(process.env.BENCH_RUNS ?? sized(300, 20));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-bench-hosts-'));
const CONTENT = 'a small file\n'.repeat(10);

const now = () => performance.now();
async function series(fn, runs = RUNS) {
  for (let i = 0; i < Math.min(30, runs); i++) await fn();
  const xs = [];
  for (let i = 0; i < runs; i++) {
    const t = now();
    await fn();
    xs.push(now() - t);
  }
  return median(xs);
}

function startServe(base) {
  const t0 = now();
  const proc = spawn(process.execPath, [CLI, 'serve', '--port', '0', '--base', base, '--access-log', 'off'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = new Promise((resolve, reject) => {
    let buf = '';
    proc.stdout.on('data', (d) => {
      buf += d;
      const m = /^Fileshed listening on (\S+)/.exec(buf);
      if (m) resolve(m[1]);
    });
    proc.on('exit', (c) => reject(new Error(`serve exited ${c}`)));
  });
  return { proc, url, t0 };
}

function post(agent, url, fn, body) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(`${url}/${fn}`, { method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve(JSON.parse(text)));
    });
    req.on('error', reject);
    req.end(data);
  });
}

async function httpRow() {
  const base = path.join(work, 'http');
  const zone = path.join(base, 'users', 'local', 'Storage', 'data');
  fs.mkdirSync(zone, { recursive: true });
  fs.writeFileSync(path.join(zone, 'small.txt'), CONTENT);
  const { Tools } = await import(pathToFileURL(path.join(root, 'dist/fileshed.mjs')).href);
  const tools = new Tools();
  tools.valves = { ...tools.valves, storage_base_path: base };
  const args = { zone: 'storage', path: 'small.txt' };
  const inproc = await series(async () => {
    const r = JSON.parse(await tools.shed_read({ ...args, __user__: { id: 'local', name: 'local', role: 'admin' }, __metadata__: { chat_id: 'c' } }));
    if (!r.success) throw new Error('in-process read failed');
  });
  const s = startServe(base);
  const url = await s.url;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const over = await series(async () => {
    const r = await post(agent, url, 'shed_read', args);
    if (!r.success) throw new Error('HTTP read failed');
  });
  agent.destroy();
  s.proc.kill('SIGTERM');
  const overhead = over - inproc;
  return { scenario: 'POST /shed_read (keep-alive) vs in-process', ours: `${over.toFixed(2)} ms`, anchor: 'in-process call', anchorValue: `${inproc.toFixed(2)} ms`, ratio: `+${overhead.toFixed(2)} ms`, target: '<= +1 ms', result: overhead <= 1 ? 'ok' : 'MISSED' };
}

async function mcpClient(command, args) {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StdioClientTransport({ command, args, stderr: 'ignore' }));
  return client;
}

async function mcpRow() {
  const base = path.join(work, 'mcp');
  const zone = path.join(base, 'users', 'local', 'Storage', 'data');
  fs.mkdirSync(zone, { recursive: true });
  fs.writeFileSync(path.join(zone, 'small.txt'), CONTENT);
  const ours = await mcpClient(process.execPath, [CLI, 'mcp', '--base', base]);
  const refBin = path.join(root, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
  const ref = await mcpClient(process.execPath, [refBin, fs.realpathSync(zone)]);
  const refFile = path.join(fs.realpathSync(zone), 'small.txt');
  const oursMs = await series(async () => {
    const r = await ours.callTool({ name: 'shed_read', arguments: { zone: 'storage', path: 'small.txt' } });
    if (r.isError) throw new Error('shed_read over MCP failed');
  });
  const refMs = await series(async () => {
    const r = await ref.callTool({ name: 'read_text_file', arguments: { path: refFile } });
    if (r.isError) throw new Error('read_text_file failed');
  });
  await ours.close();
  await ref.close();
  const ratio = oursMs / refMs;
  return { scenario: 'MCP stdio tools/call read', ours: `${oursMs.toFixed(2)} ms`, anchor: 'server-filesystem read_text_file', anchorValue: `${refMs.toFixed(2)} ms`, ratio: `${ratio.toFixed(2)}x`, target: '<= 1.2x', result: ratio <= 1.2 ? 'ok' : 'MISSED' };
}

async function startRow() {
  const times = [];
  for (let i = 0; i < 5; i++) {
    const s = startServe(path.join(work, `start${i}`));
    const url = await s.url;
    await new Promise((resolve, reject) => http.get(`${url}/healthz`, (res) => res.resume().on('end', resolve)).on('error', reject));
    times.push(now() - s.t0);
    s.proc.kill('SIGTERM');
    await new Promise((r) => s.proc.on('exit', r));
  }
  const ms = median(times);
  return { scenario: 'npm start to first answered request', ours: `${ms.toFixed(0)} ms`, anchor: '-', anchorValue: '-', ratio: '-', target: '<= 1000 ms', result: ms <= 1000 ? 'ok' : 'MISSED' };
}

try {
  const rows = [await httpRow(), await mcpRow(), await startRow()];
  printTable(rows);
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
