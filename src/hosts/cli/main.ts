/**
 * Command line host: `fileshed call <function> '<json args>' [--user ID] [--chat ID] [--base DIR]
 * [--valve key=value ...] [--config FILE]` prints the JSON result with the valves of the config file
 * `fileshed serve` reads (default {base}/fileshed.json) under the --valve flags; `fileshed spec` prints the tool specs;
 * `fileshed doctor` tells what the command sandbox can do here; `fileshed serve` and `fileshed mcp`
 * load the server bundle (only then). Storage defaults to ./data, the user to $FILESHED_USER or "local".
 *
 * Errors: a mistake in the command line (unknown option, missing value) prints the message and the
 * command's usage (exit 2); anything else prints one line (exit 1).
 */
import fs from 'node:fs';
import path from 'node:path';
import { admin, specsFor, Tools, version } from '../../index.js';
import { readConfigFile } from '../http/config-file.js';
import { doctor } from './doctor.js';
import { COMMAND_USAGE, isCommand, isUsageError, USAGE, UsageError, type Command } from './usage.js';

/** Writes to stdout whose reader went away (`fileshed list | head`): the rest has nobody to read it. */
function quietPipes(keepRunning: boolean): void {
  const onError = (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    // A server keeps serving when whoever read its start lines is gone; a one-shot command is done.
    if (!keepRunning) process.exit(process.exitCode ?? 0);
  };
  process.stdout.on('error', onError);
  process.stderr.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}

function failUsage(command: Command | undefined, text: string): never {
  process.stderr.write(`${text}\n\n${command ? `Usage:\n  ${COMMAND_USAGE[command].replace(/\n/g, '\n  ')}` : USAGE}\n`);
  process.exit(2);
}

function failRun(command: string | undefined, text: string): never {
  process.stderr.write(`fileshed${command ? ` ${command}` : ''}: ${text}\n`);
  process.exit(1);
}

const wantsHelp = (argv: readonly string[]) => argv.includes('--help') || argv.includes('-h');

async function main(argv: string[]): Promise<number> {
  const first = argv[0];
  if (first === '--version' || first === '-V' || first === 'version') {
    process.stdout.write(`${version}\n`);
    return 0;
  }
  if (first === undefined) failUsage(undefined, 'Which command?');
  if (first === 'help' || (wantsHelp(argv) && !isCommand(first))) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (isCommand(first) && wantsHelp(argv)) {
    process.stdout.write(`Usage:\n  ${COMMAND_USAGE[first].replace(/\n/g, '\n  ')}\n`);
    return 0;
  }
  if (first === 'serve' || first === 'mcp') {
    quietPipes(true);
    const server = await import('../server.js');
    if (first === 'mcp') {
      await server.runMcpStdio(argv.slice(1)); // reports its own failures to the client (see stdio.ts)
      return -1; // ends when stdin closes
    }
    try {
      await server.runServe(argv.slice(1));
    } catch (err) {
      if (isUsageError(err)) failUsage('serve', `fileshed serve: ${(err as Error).message}`);
      failRun('serve', (err as Error).message);
    }
    return -1; // keeps running; the process ends on a signal
  }
  quietPipes(false);
  if (first === 'doctor') return doctor(process.stdout);
  const positional: string[] = [];
  const options: Record<string, string> = {};
  const valves: Record<string, unknown> = {};
  const command = isCommand(first) ? first : undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg.startsWith('--')) {
      const value = argv[++i];
      if (value === undefined) failUsage(command, `${arg} needs a value`);
      if (arg === '--valve') {
        const eq = value.indexOf('=');
        if (eq < 1) failUsage(command, `--valve expects key=value, got ${value}`);
        valves[value.slice(0, eq)] = value.slice(eq + 1);
      } else options[arg.slice(2)] = value;
      continue;
    }
    positional.push(arg);
  }
  const [, fn, json] = positional;
  if (first === 'spec') {
    process.stdout.write(`${JSON.stringify(specsFor(valves), null, 2)}\n`); // --valve functions=core narrows it
    return 0;
  }
  if (first === 'list') {
    for (const spec of specsFor(valves)) process.stdout.write(`${spec.function.name}\n`);
    return 0;
  }
  if (first === 'groups') return groupsCommand(positional.slice(1), options);
  if (first !== 'call') failUsage(undefined, `Unknown command '${first}'`);
  if (!fn) failUsage('call', 'fileshed call: which function? (fileshed list names them)');
  let args: Record<string, unknown> = {};
  if (json !== undefined) {
    try {
      args = JSON.parse(json) as Record<string, unknown>;
    } catch (err) {
      failUsage('call', `fileshed call: the arguments must be JSON: ${(err as Error).message}`);
    }
  }
  // The base and config file `fileshed serve` would use, so a call sees the server's valves (blocked
  // files, allow_python, quotas ...): the config file's valves, then --valve flags over them.
  const base = path.resolve(options.base ?? (process.env.FILESHED_BASE || 'data'));
  const configFile = path.resolve(options.config ?? (process.env.FILESHED_CONFIG || path.join(base, 'fileshed.json')));
  const fileValves = configValves(configFile);
  // A storage base shared by coordinated servers: this call takes its locks from the same service.
  const coordination = options.coordination ?? (process.env.FILESHED_COORDINATION || undefined);
  const coordinator = coordination !== undefined ? await (await import('../server.js')).connectCoordination(coordination, base).catch((err: Error) => failRun('call', err.message)) : undefined;
  const tools = new Tools();
  tools.valves = { ...tools.valves, ...fileValves, ...valves, storage_base_path: base };
  const method = (tools as unknown as Record<string, unknown>)[fn];
  if (typeof method !== 'function' || !fn.startsWith('shed_')) failUsage('call', `fileshed call: unknown function '${fn}'; 'fileshed list' names them.`);
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

/** The valves of the config file (none when it does not exist); a file that does not parse stops the call. */
function configValves(file: string): Record<string, unknown> {
  if (!fs.existsSync(file)) return {};
  try {
    return readConfigFile(file).valves ?? {};
  } catch (err) {
    failRun('call', `the config file ${file} cannot be used: ${(err as Error).message}. Fix it, or name another with --config FILE.`);
  }
}

async function groupsCommand(rest: string[], options: Record<string, string>): Promise<number> {
  const base = path.resolve(options.base ?? 'data');
  const [action, id, sub, user] = rest;
  const out = (text: string) => process.stdout.write(`${text}\n`);
  if (action === 'list') {
    const list = await admin.groups.list(base);
    if (list.length === 0) out('(no groups)');
    for (const g of list) out(`${g.id}\t${g.name}\t${g.members} member(s)\t${g.description}`);
    return 0;
  }
  if (action !== 'add' && action !== 'remove' && action !== 'members') throw new UsageError(`fileshed groups: unknown action '${action ?? ''}'`);
  if (!id) throw new UsageError(`fileshed groups ${action}: which group? (its id)`);
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
  if (sub === undefined) {
    for (const m of await admin.groups.members(base, id)) out(m);
    return 0;
  }
  if (!user || (sub !== 'add' && sub !== 'remove')) throw new UsageError('fileshed groups members <id> [add|remove <user>]');
  if (sub === 'add') await admin.groups.addMember(base, id, user);
  else await admin.groups.removeMember(base, id, user);
  out(`${sub === 'add' ? 'Added' : 'Removed'} ${user} ${sub === 'add' ? 'to' : 'from'} ${id}.`);
  return 0;
}

const argv = process.argv.slice(2);
main(argv).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    const command = isCommand(argv[0]) ? argv[0] : undefined;
    if (isUsageError(err)) failUsage(command, (err as Error).message);
    failRun(command, (err as Error)?.message ?? String(err));
  },
);
