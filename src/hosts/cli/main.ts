/**
 * Command line host: `fileshed call <function> '<json args>' [--user ID] [--chat ID] [--base DIR]
 * [--valve key=value ...]` prints the JSON result; `fileshed spec` prints the tool specs;
 * `fileshed serve` and `fileshed mcp` load the server bundle (only then).
 * Storage defaults to ./data, the user to $FILESHED_USER or "local".
 */
import path from 'node:path';
import { admin, specsFor, Tools } from '../../index.js';

const USAGE = `Usage:
  fileshed serve [--host 127.0.0.1] [--port 8765] [--base ./data] [--config FILE]
                 [--auth MODE[,MODE...]] [--api-key KEY]... [--jwt-secret SECRET] [--user ID]
                 [--public-url URL] [--openwebui-url URL] [--valve key=value]...
                 [--access-log stderr|off|FILE] [--shutdown-timeout SECONDS]
                 [--coordination redis://HOST:6379] [--allowed-hosts NAME,...] [--health-port PORT]
                 [--metrics admin|public|off] [--link-secret SECRET] [--allow-unconfined]
                 [--max-running N] [--max-queued-per-user N] [--request-timeout S] [--headers-timeout S]
                 [--body-timeout S] [--keep-alive-timeout S] [--max-header-size BYTES]
                 OpenAPI tool server + MCP over HTTP; auth modes: local, api-key, openwebui-session, openwebui-jwt
  fileshed mcp [--base DIR] [--user ID] [--valve key=value]... [--config FILE] [--import-dir DIR] [--link-port PORT]
               [--coordination URL]
                 MCP over stdio (one user); files in DIR can be imported, download links are served on 127.0.0.1
  fileshed call <function> ['<json args>'] [--user ID] [--chat ID] [--base DIR] [--valve key=value ...] [--coordination URL]
  fileshed spec                      print the LLM tool specs (JSON)
  fileshed list                      list the functions
  fileshed groups add <id> [--name NAME] [--description D] [--base DIR]
  fileshed groups remove <id> | list | members <id> [add|remove <user>]   (standalone group directory)

Examples:
  fileshed call shed_create_file '{"zone":"storage","path":"hello.txt","content":"Hello"}'
  fileshed call shed_tree '{"zone":"storage"}' --base ./data --user alice`;

function fail(text: string): never {
  process.stderr.write(`${text}\n\n${USAGE}\n`);
  process.exit(2);
}

async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'serve' || argv[0] === 'mcp') {
    const server = await import('../server.js');
    try {
      if (argv[0] === 'serve') await server.runServe(argv.slice(1));
      else await server.runMcpStdio(argv.slice(1));
    } catch (err) {
      fail(`fileshed ${argv[0]}: ${(err as Error).message}`);
    }
    return -1; // keeps running; the process ends on a signal (serve) or when stdin closes (mcp)
  }
  const positional: string[] = [];
  const options: Record<string, string> = {};
  const valves: Record<string, unknown> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (arg.startsWith('--')) {
      const value = argv[++i];
      if (value === undefined) fail(`${arg} needs a value`);
      if (arg === '--valve') {
        const eq = value.indexOf('=');
        if (eq < 1) fail(`--valve expects key=value, got ${value}`);
        valves[value.slice(0, eq)] = value.slice(eq + 1);
      } else options[arg.slice(2)] = value;
      continue;
    }
    positional.push(arg);
  }
  const [command, fn, json] = positional;
  if (command === 'spec') {
    process.stdout.write(`${JSON.stringify(specsFor(valves), null, 2)}\n`); // --valve functions=core narrows it
    return 0;
  }
  if (command === 'list') {
    for (const spec of specsFor(valves)) process.stdout.write(`${spec.function.name}\n`);
    return 0;
  }
  if (command === 'groups') return groupsCommand(positional.slice(1), options);
  if (command !== 'call' || !fn) fail(command ? `Unknown command '${command}'` : 'Missing command');
  let args: Record<string, unknown> = {};
  if (json !== undefined) {
    try {
      args = JSON.parse(json) as Record<string, unknown>;
    } catch (err) {
      fail(`The arguments must be JSON: ${(err as Error).message}`);
    }
  }
  const base = path.resolve(options.base ?? 'data');
  // A storage base shared by coordinated servers: this call takes its locks from the same service.
  const coordination = options.coordination ?? (process.env.FILESHED_COORDINATION || undefined);
  const coordinator = coordination !== undefined ? await (await import('../server.js')).connectCoordination(coordination, base).catch((err: Error) => fail(err.message)) : undefined;
  const tools = new Tools();
  tools.valves = { ...tools.valves, storage_base_path: base, ...valves };
  const method = (tools as unknown as Record<string, unknown>)[fn];
  if (typeof method !== 'function' || !fn.startsWith('shed_')) fail(`Unknown function '${fn}'; see 'fileshed list'.`);
  const user = options.user ?? process.env.FILESHED_USER ?? 'local';
  const result = await (method as (a: unknown) => Promise<string>).call(tools, {
    ...args,
    __user__: { id: user, name: user, role: 'user' },
    __metadata__: { chat_id: options.chat ?? 'cli' },
  });
  process.stdout.write(`${result}\n`);
  coordinator?.close();
  return (JSON.parse(result) as { success: boolean }).success ? 0 : 1;
}

async function groupsCommand(rest: string[], options: Record<string, string>): Promise<number> {
  const base = path.resolve(options.base ?? 'data');
  const [action, id, sub, user] = rest;
  const out = (text: string) => process.stdout.write(`${text}\n`);
  try {
    if (action === 'list') {
      const list = await admin.groups.list(base);
      if (list.length === 0) out('(no groups)');
      for (const g of list) out(`${g.id}\t${g.name}\t${g.members} member(s)\t${g.description}`);
      return 0;
    }
    if (!id) fail(`groups ${action ?? ''}: missing group id`);
    if (action === 'add') {
      const g = await admin.groups.add(base, id, options.name ?? id, options.description ?? '');
      out(`Added group ${g.id} (${g.name}).`);
      return 0;
    }
    if (action === 'remove') {
      await admin.groups.remove(base, id);
      out(`Removed group ${id} (its files stay under groups/${id}/).`);
      return 0;
    }
    if (action === 'members') {
      if (sub === undefined) {
        for (const m of await admin.groups.members(base, id)) out(m);
        return 0;
      }
      if (!user || (sub !== 'add' && sub !== 'remove')) fail('usage: groups members <id> [add|remove <user>]');
      if (sub === 'add') await admin.groups.addMember(base, id, user);
      else await admin.groups.removeMember(base, id, user);
      out(`${sub === 'add' ? 'Added' : 'Removed'} ${user} ${sub === 'add' ? 'to' : 'from'} ${id}.`);
      return 0;
    }
    fail(`Unknown groups action '${action ?? ''}'`);
  } catch (err) {
    process.stderr.write(`fileshed groups: ${(err as Error).message}\n`);
    return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`fileshed: ${(err as Error).message}\n`);
    process.exitCode = 2;
  },
);
