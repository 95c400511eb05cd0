#!/usr/bin/env node

// src/hosts/cli/main.ts
import fs from "node:fs";
import path from "node:path";
import { admin, specsFor, Tools, version as version2 } from "./fileshed.mjs";

// src/hosts/http/config-file.ts
import { serving } from "./fileshed.mjs";
function readConfigFile(file) {
  let text;
  try {
    text = serving.readText(file);
  } catch (err) {
    if (err.code === "ENOENT") return {};
    throw new Error(`cannot read the config file ${file}: ${err.message}`);
  }
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`the config file ${file} is not valid JSON: ${err.message}`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error(`the config file ${file} must hold a JSON object`);
  return parsed;
}

// src/hosts/cli/doctor.ts
import os from "node:os";
import { hostApi, version } from "./fileshed.mjs";
async function doctor(out) {
  const check = await hostApi.sandboxCheck();
  const commands = JSON.parse(await hostApi.call("shed_allowed_commands", {}, { storage_base_path: os.tmpdir() }));
  const tools = commands.data?.storage ?? { available: [], missing: {} };
  const missing = Object.keys(tools.missing);
  const packages = [...new Set(Object.values(tools.missing))].sort();
  const kernelSandbox = check.auto.active === "bwrap" || check.auto.active === "landlock";
  const line = (label, text) => out.write(`${label.padEnd(14)}${text}
`);
  out.write(`Fileshed ${version}, Node ${process.version}, Linux ${os.release()} (${process.arch})

`);
  line("bubblewrap", check.bwrap.ok ? "works" : `does not work: ${check.bwrap.reason}`);
  line("Landlock", check.landlock.ok ? `works (ABI ${check.landlock.abi})` : `does not work: ${check.landlock.reason}`);
  line("sandbox=auto", kernelSandbox ? `runs commands under ${check.auto.active}` : 'refuses commands (SANDBOX_UNAVAILABLE): no kernel sandbox works here; sandbox="validated" would run them under the argument policy alone (weaker)');
  line("separation", `identity_separation=auto gives ${check.separation.separation}: ${check.separation.reason}`);
  line("perl", check.perl ?? "not installed (Debian package perl-base): the command launcher and the Landlock sandbox need it");
  line("tools", `${tools.available.length} of ${tools.available.length + missing.length} allowed commands installed${missing.length ? `; missing: ${missing.join(" ")}` : ""}`);
  if (packages.length > 0) line("", `to add them: apt-get install ${packages.join(" ")}`);
  return kernelSandbox ? 0 : 1;
}

// src/hosts/usage-error.ts
var UsageError = class extends Error {
  name = "UsageError";
};
function isUsageError(err) {
  return err instanceof Error && err.name === "UsageError";
}

// src/hosts/cli/usage.ts
var COMMAND_USAGE = {
  serve: `fileshed serve [--host 127.0.0.1] [--port 8765] [--base ./data] [--config FILE]
               [--auth MODE[,MODE...]] [--user ID] [--public-url URL] [--openwebui-url URL]
               [--valve key=value]... [--access-log stderr|off|FILE] [--shutdown-timeout SECONDS]
               [--coordination redis://HOST:6379] [--allowed-hosts NAME,...] [--health-port PORT]
               [--metrics admin|public|off] [--allow-unconfined]
               [--max-running N] [--max-queued-per-user N] [--request-timeout S] [--headers-timeout S]
               [--body-timeout S] [--keep-alive-timeout S] [--max-header-size BYTES]
  OpenAPI tool server + MCP over HTTP; auth modes: local, api-key, openwebui-session, openwebui-jwt.
  Secrets come from the environment or the config file ({base}/fileshed.json, "server" section):
  FILESHED_API_KEY (comma-separated), FILESHED_JWT_SECRET, FILESHED_LINK_SECRET. The flags
  --api-key, --jwt-secret and --link-secret work too, but every local user can read a command line.
  On --host 0.0.0.0 (or any other address), --public-url is the address users' browsers reach this
  server at: download links point there.`,
  mcp: `fileshed mcp [--base DIR] [--user ID] [--valve key=value]... [--config FILE] [--import-dir DIR]
             [--link-port PORT] [--coordination URL]
  MCP over stdio for a desktop client (one user). Files in the --import-dir folder can be imported;
  download links are served on 127.0.0.1 while the client runs (--link-port: the same port each time).
  Without --base (or FILESHED_BASE) the files live in $XDG_DATA_HOME/fileshed (~/.local/share/fileshed).`,
  call: `fileshed call <function> ['<json args>'] [--user ID] [--chat ID] [--base DIR] [--valve key=value]...
              [--config FILE] [--coordination URL]
  Runs one function and prints its JSON result (exit 1 when the result is an error), with the valves
  of the config file fileshed serve uses (--config, FILESHED_CONFIG, default {base}/fileshed.json),
  --valve flags over them. --base defaults to FILESHED_BASE, then ./data.
  Example: fileshed call shed_create_file '{"zone":"storage","path":"hello.txt","content":"Hello"}'`,
  spec: `fileshed spec [--valve key=value]...     the LLM tool specs (JSON) of the enabled functions`,
  list: `fileshed list [--valve key=value]...     the names of the enabled functions`,
  groups: `fileshed groups add <id> [--name NAME] [--description D] [--base DIR]
fileshed groups remove <id> | list | members <id> [add|remove <user>]
  The standalone group directory ({base}/access_auth.sqlite).`,
  doctor: `fileshed doctor
  What the command sandbox can do on this machine: bubblewrap, Landlock, which one the default
  setting (sandbox=auto) uses, perl, and which command-line tools are installed.`
};
var USAGE = `Usage:
${Object.values(COMMAND_USAGE).map((text) => `  ${text.replace(/\n/g, "\n  ")}`).join("\n")}
  fileshed --version

Every command takes --help.`;
function isCommand(name) {
  return name !== void 0 && Object.hasOwn(COMMAND_USAGE, name);
}

// src/hosts/cli/main.ts
function quietPipes(keepRunning) {
  const onError = (err) => {
    if (err.code !== "EPIPE") throw err;
    if (!keepRunning) process.exit(process.exitCode ?? 0);
  };
  process.stdout.on("error", onError);
  process.stderr.on("error", (err) => {
    if (err.code !== "EPIPE") throw err;
  });
}
function failUsage(command, text) {
  process.stderr.write(`${text}

${command ? `Usage:
  ${COMMAND_USAGE[command].replace(/\n/g, "\n  ")}` : USAGE}
`);
  process.exit(2);
}
function failRun(command, text) {
  process.stderr.write(`fileshed${command ? ` ${command}` : ""}: ${text}
`);
  process.exit(1);
}
var wantsHelp = (argv2) => argv2.includes("--help") || argv2.includes("-h");
async function main(argv2) {
  const first = argv2[0];
  if (first === "--version" || first === "-V" || first === "version") {
    process.stdout.write(`${version2}
`);
    return 0;
  }
  if (first === void 0) failUsage(void 0, "Which command?");
  if (first === "help" || wantsHelp(argv2) && !isCommand(first)) {
    process.stdout.write(`${USAGE}
`);
    return 0;
  }
  if (isCommand(first) && wantsHelp(argv2)) {
    process.stdout.write(`Usage:
  ${COMMAND_USAGE[first].replace(/\n/g, "\n  ")}
`);
    return 0;
  }
  if (first === "serve" || first === "mcp") {
    quietPipes(true);
    const server = await import("./server.mjs");
    if (first === "mcp") {
      await server.runMcpStdio(argv2.slice(1));
      return -1;
    }
    try {
      await server.runServe(argv2.slice(1));
    } catch (err) {
      if (isUsageError(err)) failUsage("serve", `fileshed serve: ${err.message}`);
      failRun("serve", err.message);
    }
    return -1;
  }
  quietPipes(false);
  if (first === "doctor") return doctor(process.stdout);
  const positional = [];
  const options = {};
  const valves = {};
  const command = isCommand(first) ? first : void 0;
  for (let i = 0; i < argv2.length; i++) {
    const arg = argv2[i];
    if (arg.startsWith("--")) {
      const value = argv2[++i];
      if (value === void 0) failUsage(command, `${arg} needs a value`);
      if (arg === "--valve") {
        const eq = value.indexOf("=");
        if (eq < 1) failUsage(command, `--valve expects key=value, got ${value}`);
        valves[value.slice(0, eq)] = value.slice(eq + 1);
      } else options[arg.slice(2)] = value;
      continue;
    }
    positional.push(arg);
  }
  const [, fn, json] = positional;
  if (first === "spec") {
    process.stdout.write(`${JSON.stringify(specsFor(valves), null, 2)}
`);
    return 0;
  }
  if (first === "list") {
    for (const spec of specsFor(valves)) process.stdout.write(`${spec.function.name}
`);
    return 0;
  }
  if (first === "groups") return groupsCommand(positional.slice(1), options);
  if (first !== "call") failUsage(void 0, `Unknown command '${first}'`);
  if (!fn) failUsage("call", "fileshed call: which function? (fileshed list names them)");
  let args = {};
  if (json !== void 0) {
    try {
      args = JSON.parse(json);
    } catch (err) {
      failUsage("call", `fileshed call: the arguments must be JSON: ${err.message}`);
    }
  }
  const base = path.resolve(options.base ?? (process.env.FILESHED_BASE || "data"));
  const configFile = path.resolve(options.config ?? (process.env.FILESHED_CONFIG || path.join(base, "fileshed.json")));
  const fileValves = configValves(configFile);
  const coordination = options.coordination ?? (process.env.FILESHED_COORDINATION || void 0);
  const coordinator = coordination !== void 0 ? await (await import("./server.mjs")).connectCoordination(coordination, base).catch((err) => failRun("call", err.message)) : void 0;
  const tools = new Tools();
  tools.valves = { ...tools.valves, ...fileValves, ...valves, storage_base_path: base };
  const method = tools[fn];
  if (typeof method !== "function" || !fn.startsWith("shed_")) failUsage("call", `fileshed call: unknown function '${fn}'; 'fileshed list' names them.`);
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
function configValves(file) {
  if (!fs.existsSync(file)) return {};
  try {
    return readConfigFile(file).valves ?? {};
  } catch (err) {
    failRun("call", `the config file ${file} cannot be used: ${err.message}. Fix it, or name another with --config FILE.`);
  }
}
async function groupsCommand(rest, options) {
  const base = path.resolve(options.base ?? "data");
  const [action, id, sub, user] = rest;
  const out = (text) => process.stdout.write(`${text}
`);
  if (action === "list") {
    const list = await admin.groups.list(base);
    if (list.length === 0) out("(no groups)");
    for (const g of list) out(`${g.id}	${g.name}	${g.members} member(s)	${g.description}`);
    return 0;
  }
  if (action !== "add" && action !== "remove" && action !== "members") throw new UsageError(`fileshed groups: unknown action '${action ?? ""}'`);
  if (!id) throw new UsageError(`fileshed groups ${action}: which group? (its id)`);
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
  if (sub === void 0) {
    for (const m of await admin.groups.members(base, id)) out(m);
    return 0;
  }
  if (!user || sub !== "add" && sub !== "remove") throw new UsageError("fileshed groups members <id> [add|remove <user>]");
  if (sub === "add") await admin.groups.addMember(base, id, user);
  else await admin.groups.removeMember(base, id, user);
  out(`${sub === "add" ? "Added" : "Removed"} ${user} ${sub === "add" ? "to" : "from"} ${id}.`);
  return 0;
}
var argv = process.argv.slice(2);
main(argv).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err) => {
    const command = isCommand(argv[0]) ? argv[0] : void 0;
    if (isUsageError(err)) failUsage(command, err.message);
    failRun(command, err?.message ?? String(err));
  }
);
