/**
 * Entry of the server bundle (dist/server.mjs, loaded by the CLI only for `serve` and `mcp`):
 * `fileshed serve` and `fileshed mcp` (stdio). Imports the plugin as ./fileshed.mjs at run time.
 */
import { serving } from '../index.js';
import { startServer } from './http/server.js';
import { parseFlags, resolveSettings, SERVE_FLAGS, type ServerSettings } from './http/settings.js';
import { privateFiles } from './private-files.js';
import { connectCoordination } from './coordination/connect.js';
import { warnAboutSecrets } from './secret-flags.js';
import { keepServing } from './last-resort.js';
import { valvesSource } from './valves.js';
import { startLagReport } from './lag-report.js';

export { runMcpStdio } from './mcp/stdio.js';
export { connectCoordination };

export async function runServe(argv: string[]): Promise<void> {
  keepServing('serve');
  const flags = parseFlags(argv, SERVE_FLAGS);
  warnAboutSecrets([...Object.keys(flags.options), ...Object.keys(flags.lists)], flags.options.coordination);
  const { settings, generated } = resolveSettings(flags);
  refuseUnconfined(settings);
  privateFiles(settings.base);
  // Before anything takes a lock (recovery does): with coordination, every lock is a Redis lease.
  const coordinator = settings.coordination !== undefined ? await connectCoordination(settings.coordination, settings.base) : undefined;
  // A previous run killed mid-call (kill -9, crash, power cut) may have left uncommitted writes
  // and temp files: recover them before the first call (each scope under its call lock, so an
  // instance already serving the same base is not disturbed).
  const recovered = await serving.recoverStorage(settings.base);
  if (recovered.commits.length > 0 || recovered.temp_files.length > 0) {
    process.stderr.write(`fileshed: recovery: ${recovered.commits.length} recovery commit(s), ${recovered.temp_files.length} temp file(s) removed\n`);
  }
  for (const m of recovered.migrations) {
    process.stderr.write(`fileshed: ${m.space ?? m.zone} (${m.zone}): ${m.outcome === 'moved' ? 'version history moved from data/.git to git/' : `data/.git not trusted (${m.reason}): left as user data, a new history starts`}\n`);
  }
  const running = await startServer(settings, coordinator ? { coordination: coordinator } : {});
  startLagReport();
  const storage = serving.storageKind(settings.base);
  const lines = [
    `Fileshed listening on ${running.url}`,
    `OpenAPI: ${running.url}/openapi.json`,
    `MCP:     ${running.url}/mcp`,
    `Admin:   ${running.url}/admin`,
    `Auth:    ${settings.auth.join(', ')}; storage ${settings.base} (${storage.type}${storage.shared ? ', shared' : ''}); coordination: ${coordinator?.description ?? 'lock files (one host)'}`,
    `Links:   ${String(running.ctx.valves().public_url)}/files/... (download links: the address users' browsers must reach; --public-url sets it)`,
    ...(running.healthPort !== undefined ? [`Health:  http://${settings.host.includes(':') ? `[${settings.host}]` : settings.host}:${running.healthPort}/healthz, /readyz`] : []),
    ...(generated.includes('api_key') ? [`Generated API key (stored in ${settings.configFile}; shown once): ${settings.apiKeys[0]}`] : []),
  ];
  // One write: readers of the first line get the rest with it.
  process.stdout.write(`${lines.join('\n')}\n`);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`fileshed: ${signal}: finishing running calls (up to ${settings.shutdownMs / 1000} s), then stopping.\n`);
    running.close().then(
      () => serving.shutdownPool().finally(() => {
        coordinator?.close();
        process.exit(0);
      }),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/**
 * `validated` runs commands with the argument checks alone: one local user's mode (fileshed mcp). A
 * server for several users does not start in it unless the admin says so (--allow-unconfined).
 */
function refuseUnconfined(settings: ServerSettings): void {
  if (settings.allowUnconfined || valvesSource(settings.configFile, settings.base, settings.flagValves)().sandbox !== 'validated') return;
  const from = Object.hasOwn(settings.flagValves, 'sandbox') ? '--valve sandbox=validated' : `"sandbox": "validated" in ${settings.configFile}`;
  throw new Error(
    `refusing to start: ${from} would run every user's commands with argument checks alone, without kernel confinement, which is meant for one local user (fileshed mcp). Use sandbox=auto (bubblewrap or Landlock), or accept it with --allow-unconfined (FILESHED_ALLOW_UNCONFINED=1, or "allow_unconfined": true under "server" in the config file).`,
  );
}
