/**
 * `fileshed mcp`: MCP over stdio for a desktop client (one local user). Files move in and out
 * through what the user names, nothing else:
 * - in: `--import-dir DIR` — the regular files directly in DIR are this host's attachments, so
 *   shed_import copies them into Uploads (through the import checks: no links, no special files,
 *   the opened file's real path inside DIR, size cap and quota);
 * - out: download links that serve — the first call of a links function starts a listener on
 *   127.0.0.1 (`--link-port`, default a free port) that answers /files/{signed token} only, and
 *   links are made with its address (unless the valves set public_url to a server of their own).
 * Every stdin line must be UTF-8: one that is not is answered with a parse error and dropped.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { hostApi, version, type AttachedFile, type HostBridge } from '../../index.js';
import { bodyLimit } from '../http/body.js';
import { handleFilesRequest } from '../http/files/index.js';
import { sameMachine } from '../http/server.js';
import { parseFlags, valveFlags } from '../http/settings.js';
import { privateFiles } from '../private-files.js';
import { InvalidUtf8, assertUtf8 } from '../utf8.js';
import { valvesSource } from '../valves.js';
import { createMcpServer } from './server.js';
import { connectCoordination } from '../coordination/connect.js';
import { keepServing } from '../last-resort.js';

export const MCP_FLAGS = ['base', 'user', 'valve', 'config', 'import-dir', 'link-port', 'coordination'] as const;

export async function runMcpStdio(argv: string[]): Promise<void> {
  keepServing('mcp');
  const flags = parseFlags(argv, MCP_FLAGS);
  const base = path.resolve(flags.options.base ?? process.env.FILESHED_BASE ?? 'data');
  const configFile = path.resolve(flags.options.config ?? path.join(base, 'fileshed.json'));
  privateFiles(base);
  const coordination = flags.options.coordination ?? (process.env.FILESHED_COORDINATION || undefined);
  if (coordination !== undefined) await connectCoordination(coordination, base);
  const user = flags.options.user ?? process.env.FILESHED_USER ?? 'local';
  const importDir = flags.options['import-dir'] === undefined ? undefined : existingFolder(flags.options['import-dir'], '--import-dir');
  const links = linkListener(base, port(flags.options['link-port'] ?? '0'));
  const source = valvesSource(configFile, base, valveFlags(flags.lists.valve));
  const valves = (): Record<string, unknown> => {
    const v = source();
    const extra: Record<string, unknown> = {};
    // The import folder is readable by shed_import, beside what the admin allows.
    if (importDir !== undefined) extra.import_allowed_paths = [v.import_allowed_paths, importDir].filter((p) => typeof p === 'string' && p !== '').join(',');
    if (v.public_url === undefined && links.url() !== undefined) extra.public_url = links.url();
    return { ...v, ...extra };
  };
  const host: HostBridge = {
    name: 'fileshed mcp (stdio)',
    attachedFiles: () => (importDir === undefined ? [] : importable(importDir)),
    attachHint: importDir === undefined
      ? 'This desktop server has no import folder: ask the user to add one (fileshed mcp --import-dir FOLDER in the client settings) and put the file there, or to paste its content'
      : 'Ask the user to put the file in their import folder (fileshed mcp --import-dir)',
  };
  const linkFunctions = new Set(hostApi.functions.filter((f) => f.category === 'links').map((f) => f.name));
  const server = createMcpServer({
    api: hostApi,
    version,
    valves,
    callerOf: () => ({ mode: 'local', user: { id: user, name: user, email: '', role: 'admin' } }),
    hostFor: () => host,
    beforeCall: async (name) => {
      if (linkFunctions.has(name) && source().public_url === undefined) await links.start();
    },
  });
  const out = process.stdout;
  const limit = bodyLimit(valves());
  const input = strictLines(process.stdin, (message) => out.write(`${JSON.stringify(message)}\n`), limit);
  const transport = new StdioServerTransport(input, out, { maxBufferSize: limit + 1 });
  transport.onclose = () => void links.close();
  await server.connect(transport);
}

function existingFolder(given: string, flag: string): string {
  let real: string;
  try {
    real = fs.realpathSync(path.resolve(given));
  } catch {
    throw new Error(`${flag} ${given}: no such folder (create it first)`);
  }
  if (!fs.statSync(real).isDirectory()) throw new Error(`${flag} ${given} is not a folder`);
  if (real === '/') throw new Error(`${flag} / would make every file readable; name a folder of its own`);
  return real;
}

function port(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`--link-port must be 0-65535 (0: a free port), got '${text}'`);
  return n;
}

/** The regular files directly in the import folder (links, folders and special files are not offered). */
function importable(dir: string): AttachedFile[] {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries
    .filter((e) => e.isFile() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort()
    .slice(0, 1000)
    .map((name) => ({ name, path: path.join(dir, name) }));
}

/** A loopback listener for download links only, started at first use; it never keeps the process alive. */
function linkListener(base: string, wanted: number): { url(): string | undefined; start(): Promise<void>; close(): Promise<void> } {
  let url: string | undefined;
  let starting: Promise<void> | undefined;
  let server: http.Server | undefined;
  return {
    url: () => url,
    start: () =>
      (starting ??= new Promise<void>((resolve, reject) => {
        const s = http.createServer((req, res) => {
          const pathname = (req.url ?? '/').split('?')[0]!;
          if (!sameMachine(req) || !/^\/files(\/|$)/.test(pathname)) {
            res.writeHead(sameMachine(req) ? 404 : 403, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Only download links are served here.\n');
            return;
          }
          void handleFilesRequest(req, res, { storageBase: base });
        });
        s.once('error', (err) => {
          starting = undefined;
          reject(new Error(`the link listener could not start on 127.0.0.1:${wanted}: ${err.message}`));
        });
        s.listen(wanted, '127.0.0.1', () => {
          s.unref();
          server = s;
          url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
          process.stderr.write(`fileshed mcp: download links served at ${url}/files/ while this process runs\n`);
          resolve();
        });
      })),
    close: () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())),
  };
}

/**
 * stdin as complete lines, each checked as UTF-8 before the SDK (whose decoder would replace bad
 * bytes with U+FFFD) reads it. A bad line gets a parse error with its request id, so the client
 * does not wait for an answer that never comes; a line over `maxBytes` is answered and skipped.
 */
export function strictLines(input: Readable, answer: (message: object) => void, maxBytes: number): Readable {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let skipping = false;
  const refuse = (id: string | number | null, message: string) => answer({ jsonrpc: '2.0', id, error: { code: -32700, message: `Parse error: ${message}` } });
  const check = (line: Buffer, push: (b: Buffer) => void) => {
    try {
      assertUtf8(line, 'The message');
      push(line);
    } catch (err) {
      if (!(err instanceof InvalidUtf8)) throw err;
      refuse(requestId(line), err.message);
    }
  };
  return input.pipe(
    new Transform({
      transform(chunk: Buffer, _encoding, done) {
        let start = 0;
        for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
          const piece = chunk.subarray(start, nl + 1);
          if (!skipping) check(pending.length > 0 ? Buffer.concat([...pending, piece]) : piece, (b) => this.push(b));
          pending = [];
          pendingBytes = 0;
          skipping = false;
          start = nl + 1;
        }
        if (start < chunk.length && !skipping) {
          pending.push(chunk.subarray(start));
          pendingBytes += chunk.length - start;
          if (pendingBytes > maxBytes) {
            refuse(null, `a message is larger than ${maxBytes} bytes (the valve max_file_size_mb + 1 MiB); it was skipped. Write big content in several calls.`);
            pending = [];
            pendingBytes = 0;
            skipping = true;
          }
        }
        done();
      },
      flush(done) {
        if (pending.length > 0 && !skipping) check(Buffer.concat(pending), (b) => this.push(b));
        done();
      },
    }),
  );
}

function requestId(line: Buffer): string | number | null {
  try {
    const id = (JSON.parse(line.toString('utf8')) as { id?: unknown }).id;
    return typeof id === 'string' || typeof id === 'number' ? id : null;
  } catch {
    return null;
  }
}
