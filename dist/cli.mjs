#!/usr/bin/env node

// src/hosts/cli/main.ts
import path from "node:path";
import { admin, specsFor, Tools } from "./fileshed.mjs";
var USAGE = `Usage:
  fileshed serve [--host 127.0.0.1] [--port 8765] [--base ./data] [--config FILE]
                 [--auth MODE[,MODE...]] [--api-key KEY]... [--jwt-secret SECRET] [--user ID]
                 [--public-url URL] [--openwebui-url URL] [--valve key=value]...
                 [--access-log stderr|off|FILE] [--shutdown-timeout SECONDS]
                 [--coordination redis://HOST:6379] [--allowed-hosts NAME,...] [--health-port PORT]
                 [--metrics admin|public|off] [--link-secret SECRET]
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
function fail(text) {
  process.stderr.write(`${text}

${USAGE}
`);
  process.exit(2);
}
async function main(argv) {
  if (argv[0] === "serve" || argv[0] === "mcp") {
    const server = await import("./server.mjs");
    try {
      if (argv[0] === "serve") await server.runServe(argv.slice(1));
      else await server.runMcpStdio(argv.slice(1));
    } catch (err) {
      fail(`fileshed ${argv[0]}: ${err.message}`);
    }
    return -1;
  }
  const positional = [];
  const options = {};
  const valves = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "-h" || arg === "--help") {
      process.stdout.write(`${USAGE}
`);
      return 0;
    }
    if (arg.startsWith("--")) {
      const value = argv[++i];
      if (value === void 0) fail(`${arg} needs a value`);
      if (arg === "--valve") {
        const eq = value.indexOf("=");
        if (eq < 1) fail(`--valve expects key=value, got ${value}`);
        valves[value.slice(0, eq)] = value.slice(eq + 1);
      } else options[arg.slice(2)] = value;
      continue;
    }
    positional.push(arg);
  }
  const [command, fn, json] = positional;
  if (command === "spec") {
    process.stdout.write(`${JSON.stringify(specsFor(valves), null, 2)}
`);
    return 0;
  }
  if (command === "list") {
    for (const spec of specsFor(valves)) process.stdout.write(`${spec.function.name}
`);
    return 0;
  }
  if (command === "groups") return groupsCommand(positional.slice(1), options);
  if (command !== "call" || !fn) fail(command ? `Unknown command '${command}'` : "Missing command");
  let args = {};
  if (json !== void 0) {
    try {
      args = JSON.parse(json);
    } catch (err) {
      fail(`The arguments must be JSON: ${err.message}`);
    }
  }
  const base = path.resolve(options.base ?? "data");
  const coordination = options.coordination ?? (process.env.FILESHED_COORDINATION || void 0);
  const coordinator = coordination !== void 0 ? await (await import("./server.mjs")).connectCoordination(coordination, base).catch((err) => fail(err.message)) : void 0;
  const tools = new Tools();
  tools.valves = { ...tools.valves, storage_base_path: base, ...valves };
  const method = tools[fn];
  if (typeof method !== "function" || !fn.startsWith("shed_")) fail(`Unknown function '${fn}'; see 'fileshed list'.`);
  const user = options.user ?? process.env.FILESHED_USER ?? "local";
  const result = await method.call(tools, {
    ...args,
    __user__: { id: user, name: user, role: "user" },
    __metadata__: { chat_id: options.chat ?? "cli" }
  });
  process.stdout.write(`${result}
`);
  coordinator?.close();
  return JSON.parse(result).success ? 0 : 1;
}
async function groupsCommand(rest, options) {
  const base = path.resolve(options.base ?? "data");
  const [action, id, sub, user] = rest;
  const out = (text) => process.stdout.write(`${text}
`);
  try {
    if (action === "list") {
      const list = await admin.groups.list(base);
      if (list.length === 0) out("(no groups)");
      for (const g of list) out(`${g.id}	${g.name}	${g.members} member(s)	${g.description}`);
      return 0;
    }
    if (!id) fail(`groups ${action ?? ""}: missing group id`);
    if (action === "add") {
      const g = await admin.groups.add(base, id, options.name ?? id, options.description ?? "");
      out(`Added group ${g.id} (${g.name}).`);
      return 0;
    }
    if (action === "remove") {
      await admin.groups.remove(base, id);
      out(`Removed group ${id} (its files stay under groups/${id}/).`);
      return 0;
    }
    if (action === "members") {
      if (sub === void 0) {
        for (const m of await admin.groups.members(base, id)) out(m);
        return 0;
      }
      if (!user || sub !== "add" && sub !== "remove") fail("usage: groups members <id> [add|remove <user>]");
      if (sub === "add") await admin.groups.addMember(base, id, user);
      else await admin.groups.removeMember(base, id, user);
      out(`${sub === "add" ? "Added" : "Removed"} ${user} ${sub === "add" ? "to" : "from"} ${id}.`);
      return 0;
    }
    fail(`Unknown groups action '${action ?? ""}'`);
  } catch (err) {
    process.stderr.write(`fileshed groups: ${err.message}
`);
    return 1;
  }
}
main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`fileshed: ${err.message}
`);
    process.exitCode = 2;
  }
);
