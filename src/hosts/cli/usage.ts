/**
 * What each command takes, shown by `fileshed COMMAND --help` and after a usage error (an unknown
 * option, a missing value). Runtime errors are one line without it.
 */
export { isUsageError, UsageError } from '../usage-error.js';

export const COMMAND_USAGE = {
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
  setting (sandbox=auto) uses, perl, and which command-line tools are installed.`,
} as const;

export type Command = keyof typeof COMMAND_USAGE;

export const USAGE = `Usage:
${Object.values(COMMAND_USAGE)
  .map((text) => `  ${text.replace(/\n/g, '\n  ')}`)
  .join('\n')}
  fileshed --version

Every command takes --help.`;

export function isCommand(name: string | undefined): name is Command {
  return name !== undefined && Object.hasOwn(COMMAND_USAGE, name);
}
