/**
 * `fileshed mcp`: MCP over stdio for a desktop client (one local user). Files move in and out
 * through what the user names, nothing else:
 * - in: `--import-dir DIR` — the regular files directly in DIR are this host's attachments, so
 *   shed_import copies them into Uploads (through the import checks: no links, no special files,
 *   the opened file's real path inside DIR, size cap and quota); links and subfolders there are
 *   named, with the reason, instead of being offered;
 * - out: download links served by this process on 127.0.0.1 (unless the valves set public_url to a
 *   server of their own): with `--link-port` the listener starts with the process, so a link made
 *   before a restart of the client works again as soon as the client runs; without it, a free port
 *   is taken at the first link function call and its links end with the process.
 * Without --base the files live in the user's data folder ($XDG_DATA_HOME/fileshed, else
 * ~/.local/share/fileshed), never in whatever folder the client happened to start the process in.
 * A failure to start is answered to the client's requests (initialize included) as a JSON-RPC error
 * naming the cause, besides stderr: desktop clients show that, not merely "connection closed".
 * Every stdin line must be UTF-8: one that is not is answered with a parse error and dropped.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { Transform, type Readable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { hostApi, version, type AttachedFile, type HostBridge } from '../../index.js';
import { bodyLimit } from '../http/body.js';
import { handleFilesRequest } from '../http/files/index.js';
import { sameMachine } from '../http/server.js';
import { parseFlags, valveFlags } from '../http/settings.js';
import { privateFiles } from '../private-files.js';
import { warnAboutSecrets } from '../secret-flags.js';
import { isUsageError } from '../usage-error.js';
import { InvalidUtf8, assertUtf8 } from '../utf8.js';
import { valvesSource } from '../valves.js';
import { createMcpServer } from './server.js';
import { connectCoordination } from '../coordination/connect.js';
import { keepServing } from '../last-resort.js';

export const MCP_FLAGS = ['base', 'user', 'valve', 'config', 'import-dir', 'link-port', 'coordination'] as const;

const USAGE = 'fileshed mcp [--base DIR] [--user ID] [--valve key=value]... [--config FILE] [--import-dir DIR] [--link-port PORT] [--coordination URL]';

export async function runMcpStdio(argv: string[]): Promise<void> {
  keepServing('mcp');
  let server: Awaited<ReturnType<typeof prepare>>;
  try {
    server = await prepare(argv);
  } catch (err) {
    const text = `${(err as Error).message}${isUsageError(err) ? `. Usage: ${USAGE}` : ''}`;
    process.stderr.write(`fileshed mcp: ${text}\n`);
    refuseRequests(`fileshed mcp could not start: ${text}`);
    return;
  }
  await server.start();
}

async function prepare(argv: string[]) {
  const flags = parseFlags(argv, MCP_FLAGS);
  warnAboutSecrets([], flags.options.coordination);
  const base = path.resolve(flags.options.base ?? (process.env.FILESHED_BASE || defaultBase()));
  const configFile = path.resolve(flags.options.config ?? path.join(base, 'fileshed.json'));
  try {
    privateFiles(base);
    fs.accessSync(base, fs.constants.W_OK);
  } catch (err) {
    throw new Error(`cannot keep files in ${base} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): give a folder you can write with --base DIR`);
  }
  const coordination = flags.options.coordination ?? (process.env.FILESHED_COORDINATION || undefined);
  if (coordination !== undefined) await connectCoordination(coordination, base);
  const user = flags.options.user ?? process.env.FILESHED_USER ?? 'local';
  const importDir = flags.options['import-dir'] === undefined ? undefined : existingFolder(flags.options['import-dir'], '--import-dir');
  const fixedPort = flags.options['link-port'] !== undefined;
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
    attachedFiles: () => (importDir === undefined ? [] : importFolder(importDir).files),
    skippedFiles: () => (importDir === undefined ? [] : importFolder(importDir).skipped),
    attachHint: importDir === undefined
      ? 'This desktop server has no import folder: ask the user to add one (fileshed mcp --import-dir FOLDER in the client settings) and put the file there, or to paste its content'
      : `Ask the user to put the file in their import folder (${importDir})`,
    linkServer: (url) =>
      source().public_url !== undefined
        ? `by \`fileshed serve\` on the same storage at ${url}`
        : fixedPort
          ? `by this desktop Fileshed (fileshed mcp) at ${url} whenever the MCP client runs; the link does not open while the client is closed`
          : `by this desktop Fileshed (fileshed mcp) at ${url} only while this MCP client session runs: closing the client ends it (fileshed mcp --link-port PORT keeps links working across restarts)`,
  };
  process.stderr.write(`fileshed mcp: files of user ${user} in ${base}${importDir !== undefined ? `; import folder ${importDir}` : ''}\n`);
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
  // A fixed port serves the links of earlier runs from the start (they are signed with the storage's key).
  if (fixedPort && source().public_url === undefined) {
    await links.start().catch((err: Error) => process.stderr.write(`fileshed mcp: ${err.message}; links will be tried again at the next link function call\n`));
  }
  return {
    start: async () => {
      const out = process.stdout;
      const limit = bodyLimit(valves());
      const input = strictLines(process.stdin, (message) => out.write(`${JSON.stringify(message)}\n`), limit);
      const transport = new StdioServerTransport(input, out, { maxBufferSize: limit + 1 });
      transport.onclose = () => void links.close();
      await server.connect(transport);
    },
  };
}

/** The per-user data folder: $XDG_DATA_HOME/fileshed, else ~/.local/share/fileshed. */
function defaultBase(): string {
  const xdg = process.env.XDG_DATA_HOME;
  if (xdg !== undefined && path.isAbsolute(xdg)) return path.join(xdg, 'fileshed');
  const home = os.homedir();
  if (home === '' || home === '/') throw new Error('no --base given and no home folder to keep files in: give one with --base DIR (or FILESHED_BASE)');
  return path.join(home, '.local', 'share', 'fileshed');
}

/**
 * After a failed start: every request gets a JSON-RPC error naming the cause (the client shows it
 * instead of a bare "connection closed"); the process ends when the client closes stdin.
 */
function refuseRequests(message: string): void {
  process.exitCode = 1;
  const lines = readline.createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    let id: unknown;
    try {
      id = (JSON.parse(line) as { id?: unknown }).id;
    } catch {
      return;
    }
    if (typeof id === 'string' || typeof id === 'number') process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32603, message } })}\n`);
  });
  lines.on('close', () => process.exit(1));
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

/**
 * The regular files directly in the import folder, and what is there but not offered, with why:
 * links (never followed, so nothing outside the folder can come in) and subfolders (only the
 * folder's own files are offered). Hidden files (.DS_Store, ...) are ignored silently.
 */
function importFolder(dir: string): { files: AttachedFile[]; skipped: { name: string; reason: string }[] } {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return { files: [], skipped: [] };
  }
  const visible = entries.filter((e) => !e.name.startsWith('.')).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).slice(0, 1000);
  const files: AttachedFile[] = [];
  const skipped: { name: string; reason: string }[] = [];
  for (const e of visible) {
    if (e.isFile()) files.push({ name: e.name, path: path.join(dir, e.name) });
    else if (e.isSymbolicLink()) skipped.push({ name: e.name, reason: 'a symbolic link: links in the import folder are never followed, so put the file itself there' });
    else if (e.isDirectory()) skipped.push({ name: `${e.name}/`, reason: 'a folder: only the files directly in the import folder are offered (zip it, or put its files there)' });
    else skipped.push({ name: e.name, reason: 'not a regular file' });
  }
  return { files, skipped };
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
