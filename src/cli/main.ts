/**
 * Command line host: `fileshed call <function> '<json args>' [--user ID] [--chat ID] [--base DIR]
 * [--valve key=value ...]` prints the JSON result; `fileshed spec` prints the tool specs.
 * Storage defaults to ./data, the user to $FILESHED_USER or "local".
 */
import path from 'node:path';
import { toolSpecs, Tools } from '../index.js';

const USAGE = `Usage:
  fileshed call <function> ['<json args>'] [--user ID] [--chat ID] [--base DIR] [--valve key=value ...]
  fileshed spec                      print the LLM tool specs (JSON)
  fileshed list                      list the functions

Examples:
  fileshed call shed_create_file '{"zone":"storage","path":"hello.txt","content":"Hello"}'
  fileshed call shed_tree '{"zone":"storage"}' --base ./data --user alice`;

function fail(text: string): never {
  process.stderr.write(`${text}\n\n${USAGE}\n`);
  process.exit(2);
}

async function main(argv: string[]): Promise<number> {
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
    process.stdout.write(`${JSON.stringify(toolSpecs, null, 2)}\n`);
    return 0;
  }
  if (command === 'list') {
    for (const spec of toolSpecs) process.stdout.write(`${spec.function.name}\n`);
    return 0;
  }
  if (command !== 'call' || !fn) fail(command ? `Unknown command '${command}'` : 'Missing command');
  let args: Record<string, unknown> = {};
  if (json !== undefined) {
    try {
      args = JSON.parse(json) as Record<string, unknown>;
    } catch (err) {
      fail(`The arguments must be JSON: ${(err as Error).message}`);
    }
  }
  const tools = new Tools();
  tools.valves = { ...tools.valves, storage_base_path: path.resolve(options.base ?? 'data'), ...valves };
  const method = (tools as unknown as Record<string, unknown>)[fn];
  if (typeof method !== 'function' || !fn.startsWith('shed_')) fail(`Unknown function '${fn}'; see 'fileshed list'.`);
  const user = options.user ?? process.env.FILESHED_USER ?? 'local';
  const result = await (method as (a: unknown) => Promise<string>).call(tools, {
    ...args,
    __user__: { id: user, name: user, role: 'user' },
    __metadata__: { chat_id: options.chat ?? 'cli' },
  });
  process.stdout.write(`${result}\n`);
  return (JSON.parse(result) as { success: boolean }).success ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`fileshed: ${(err as Error).message}\n`);
    process.exitCode = 2;
  },
);
