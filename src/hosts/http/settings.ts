/**
 * Server settings (SPEC 13.1): flags > environment (FILESHED_*) > config file > defaults. Secrets
 * that are needed but absent (API key in api-key mode, link-signing secret) are generated once
 * into the config file, so keys and links survive a restart; `generated` tells the caller which
 * ones to print (once, at that first start).
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { newSecret, readConfigFile, writeConfigFile, type ConfigFile } from './config-file.js';
import { UsageError } from '../usage-error.js';

export const AUTH_MODES = ['local', 'api-key', 'openwebui-session', 'openwebui-jwt'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];

export interface ServerSettings {
  host: string;
  port: number;
  /** Absolute storage base (valve storage_base_path). */
  base: string;
  configFile: string;
  auth: AuthMode[];
  apiKeys: string[];
  jwtSecret: string | undefined;
  /** User of `local` mode. */
  localUser: string;
  /** Base of URLs given to users (links); defaults to http://HOST:PORT once the port is known. */
  publicUrl: string | undefined;
  openwebuiUrl: string;
  linkSecret: string;
  /** Valves given on the command line (--valve), above the config file's. */
  flagValves: Record<string, string>;
  /** "stderr" (default), "off", or a file path (relative paths are under the base). */
  accessLog: string;
  /** How long a graceful shutdown waits for in-flight calls. */
  shutdownMs: number;
  /** Fairness and slow-client limits (see LIMIT_SETTINGS). */
  limits: ServerLimits;
  /** Coordination across hosts (redis://...); undefined: one host, lock files. */
  coordination: string | undefined;
  /**
   * Host names (Host and Origin headers) accepted besides loopback names on a loopback bind: the
   * public name a load balancer on the same host forwards (fileshed.example.com), or its upstream name.
   */
  allowedHosts: string[];
  /** Port of the health thread (GET /healthz, /readyz answered off the main thread); undefined: none. */
  healthPort: number | undefined;
  /** Who may read GET /metrics: admins (as the admin page), everyone, or nobody. */
  metrics: 'admin' | 'public' | 'off';
  /**
   * The admin accepts valve sandbox="validated" (argument checks only, no kernel confinement) for a
   * server of several users: --allow-unconfined, FILESHED_ALLOW_UNCONFINED=1 or the config file's
   * server.allow_unconfined. Without it serve refuses to start in that mode, and a later change to
   * it refuses commands.
   */
  allowUnconfined: boolean;
}

/** Fairness (fairness.ts) and slow-client protection (server.ts, body.ts). */
export interface ServerLimits {
  /** Calls running at once, all users together; more wait in one FIFO. */
  maxRunning: number;
  /** Calls one user may have waiting behind their running one; beyond: SERVER_BUSY. */
  maxQueuedPerUser: number;
  /** The whole request (headers and body) must arrive within this (Node's requestTimeout); 408 otherwise. */
  requestTimeoutMs: number;
  /** The headers must arrive within this (Node's headersTimeout: slowloris); 408 otherwise. */
  headersTimeoutMs: number;
  /** A body that stops arriving for this long is abandoned (408, connection closed). */
  bodyIdleTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** Largest request line + headers, bytes (Node's maxHeaderSize); 431 beyond. */
  maxHeaderSize: number;
}

/** Flag, config key (under "server") and default of each limit; seconds for timeouts. */
export const LIMIT_SETTINGS = {
  maxRunning: { flag: 'max-running', key: 'max_running', fallback: 16, unit: 1 },
  maxQueuedPerUser: { flag: 'max-queued-per-user', key: 'max_queued_per_user', fallback: 8, unit: 1 },
  requestTimeoutMs: { flag: 'request-timeout', key: 'request_timeout', fallback: 300, unit: 1000 },
  headersTimeoutMs: { flag: 'headers-timeout', key: 'headers_timeout', fallback: 20, unit: 1000 },
  bodyIdleTimeoutMs: { flag: 'body-timeout', key: 'body_timeout', fallback: 30, unit: 1000 },
  keepAliveTimeoutMs: { flag: 'keep-alive-timeout', key: 'keep_alive_timeout', fallback: 5, unit: 1000 },
  maxHeaderSize: { flag: 'max-header-size', key: 'max_header_size', fallback: 16384, unit: 1 },
} as const satisfies Record<keyof ServerLimits, { flag: string; key: string; fallback: number; unit: number }>;

export interface Flags {
  options: Record<string, string>;
  lists: Record<string, string[]>;
}

/** Flags that may be given several times. */
const REPEATED = new Set(['api-key', 'valve']);
/** Flags that are switches: `--name` alone means true (`--name=false` also works). */
const SWITCHES = new Set(['allow-unconfined']);

export function parseFlags(argv: string[], allowed: readonly string[]): Flags {
  const options: Record<string, string> = {};
  const lists: Record<string, string[]> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new UsageError(`unexpected argument '${arg}'`);
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (!allowed.includes(name)) throw new UsageError(`unknown option --${name}`);
    const value = eq > 0 ? arg.slice(eq + 1) : SWITCHES.has(name) ? 'true' : argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    if (REPEATED.has(name)) (lists[name] ??= []).push(value);
    else options[name] = value;
  }
  return { options, lists };
}

export function valveFlags(list: readonly string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of list) {
    const eq = item.indexOf('=');
    if (eq < 1) throw new UsageError(`--valve expects key=value, got '${item}'`);
    out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}

export const SERVE_FLAGS = [
  'host', 'port', 'base', 'config', 'auth', 'api-key', 'jwt-secret', 'user', 'public-url', 'openwebui-url', 'valve', 'access-log', 'shutdown-timeout',
  'coordination', 'allowed-hosts', 'health-port', 'metrics', 'link-secret', 'allow-unconfined',
  ...Object.values(LIMIT_SETTINGS).map((l) => l.flag),
] as const;

type Env = Record<string, string | undefined>;

export function resolveSettings(flags: Flags, env: Env = process.env): { settings: ServerSettings; generated: string[]; config: ConfigFile } {
  const pick = (flag: string): string | undefined => {
    const f = flags.options[flag];
    if (f !== undefined) return f;
    const e = env[`FILESHED_${flag.toUpperCase().replace(/-/g, '_')}`];
    return e !== undefined && e !== '' ? e : undefined;
  };
  const base = path.resolve(pick('base') ?? 'data');
  const configFile = path.resolve(pick('config') ?? path.join(base, 'fileshed.json'));
  const config = readConfigFile(configFile);
  const server = config.server ?? {};

  const authText = pick('auth') ?? (Array.isArray(server.auth) ? server.auth.join(',') : server.auth) ?? 'local';
  const auth = [...new Set(authText.split(',').map((s) => s.trim()).filter(Boolean))] as AuthMode[];
  for (const mode of auth) {
    if (!AUTH_MODES.includes(mode)) throw new Error(`unknown auth mode '${mode}'; modes: ${AUTH_MODES.join(', ')}`);
  }
  if (auth.length === 0) throw new Error(`--auth needs at least one mode: ${AUTH_MODES.join(', ')}`);

  const host = pick('host') ?? server.host ?? '127.0.0.1';
  const portText = pick('port') ?? (server.port !== undefined ? String(server.port) : '8765');
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0-65535, got '${portText}'`);
  if (auth.includes('local') && !isLoopback(host)) {
    throw new Error(`auth mode 'local' trusts every caller, so it only runs on a loopback address; got --host ${host}. Use --auth api-key or openwebui-session (or openwebui-jwt) on a network address.`);
  }

  const coordination = pick('coordination') ?? (typeof server.coordination === 'string' && server.coordination !== '' ? server.coordination : undefined);
  const flagKeys = flags.lists['api-key'] ?? [];
  const envKeys = (env.FILESHED_API_KEY ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  const givenKeys = flagKeys.length > 0 ? flagKeys : envKeys;
  const jwtSecret = pick('jwt-secret') ?? server.jwt_secret;
  if (auth.includes('openwebui-jwt') && !jwtSecret) {
    throw new Error("auth mode 'openwebui-jwt' needs the secret Open WebUI signs with (FORWARD_USER_INFO_HEADER_JWT_SECRET): --jwt-secret or FILESHED_JWT_SECRET");
  }
  const { apiKeys, linkSecret, generated } = ensureSecrets(configFile, config, {
    apiKeys: givenKeys,
    needApiKey: auth.includes('api-key'),
    linkSecret: pick('link-secret'),
    // Instances on other hosts read the config file only if it is on the shared storage base.
    shared: coordination === undefined || isInside(configFile, base),
  });
  const flagValves = valveFlags(flags.lists.valve);
  const publicUrl = publicUrlSetting(pick('public-url') ?? server.public_url);
  if (publicUrl === undefined && isWildcard(host) && flagValves.public_url === undefined && config.valves?.public_url === undefined) {
    throw new Error(
      `--host ${host} listens on every interface, so this server cannot know the address users' browsers reach it at, which download links must point to. Give it with --public-url (FILESHED_PUBLIC_URL, or server.public_url in the config file), e.g. --public-url http://files.example.com:8765. Behind Open WebUI it is this server's address as the user's browser sees it, not the one Open WebUI connects to (a name like http://fileshed:8765 only resolves inside their network).`,
    );
  }
  const shutdownText = pick('shutdown-timeout') ?? '10';
  const shutdownSeconds = Number(shutdownText);
  if (!Number.isFinite(shutdownSeconds) || shutdownSeconds < 0) throw new Error(`--shutdown-timeout must be seconds >= 0, got '${shutdownText}'`);
  const limits = {} as ServerLimits;
  for (const [name, spec] of Object.entries(LIMIT_SETTINGS) as [keyof ServerLimits, (typeof LIMIT_SETTINGS)[keyof ServerLimits]][]) {
    const fromFile = (server as Record<string, unknown>)[spec.key];
    const text = pick(spec.flag) ?? (fromFile !== undefined ? String(fromFile) : String(spec.fallback));
    const value = Number(text);
    // Timeouts may be fractions of a second; counts and sizes are whole numbers. All must be > 0.
    if (!Number.isFinite(value) || value <= 0 || (spec.unit === 1 && !Number.isInteger(value))) {
      throw new Error(`--${spec.flag} must be a ${spec.unit === 1 ? 'whole number' : 'number of seconds'} > 0, got '${text}'`);
    }
    limits[name] = Math.round(value * spec.unit);
  }
  return {
    settings: {
      host,
      port,
      base,
      configFile,
      auth,
      apiKeys,
      jwtSecret,
      localUser: pick('user') ?? 'local',
      publicUrl,
      openwebuiUrl: (pick('openwebui-url') ?? server.openwebui_url ?? 'http://localhost:8080').replace(/\/+$/, ''),
      linkSecret,
      flagValves,
      accessLog: pick('access-log') ?? server.access_log ?? 'stderr',
      shutdownMs: shutdownSeconds * 1000,
      limits,
      coordination,
      allowedHosts: listSetting(pick('allowed-hosts') ?? server.allowed_hosts).map((h) => h.toLowerCase()),
      healthPort: optionalPort(pick('health-port') ?? (server.health_port !== undefined ? String(server.health_port) : undefined), 'health-port'),
      metrics: metricsSetting(pick('metrics') ?? (typeof server.metrics === 'string' ? server.metrics : 'admin')),
      allowUnconfined: switchSetting(pick('allow-unconfined') ?? server.allow_unconfined, 'allow-unconfined'),
    },
    generated,
    config,
  };
}

/** The public URL without trailing slash; an address no browser can use is refused. */
function publicUrlSetting(text: string | undefined): string | undefined {
  if (text === undefined || text === '') return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`--public-url must be the http(s) URL browsers reach this server at, e.g. https://files.example.com; got '${text}'`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
    throw new Error(`--public-url must be an http(s) URL without query or fragment, e.g. https://files.example.com; got '${text}'`);
  }
  if (isWildcard(url.hostname)) throw new Error(`--public-url ${text}: ${url.hostname} is where a server listens, not an address a browser can open; give this server's name or address`);
  return text.replace(/\/+$/, '');
}

/** 0.0.0.0 or :: (every interface). */
export function isWildcard(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '');
  return h === '0.0.0.0' || (net.isIPv6(h) && /^[0:]+$/.test(h));
}

function listSetting(v: unknown): string[] {
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string' && x.trim() !== '').map((x) => x.trim());
  return typeof v === 'string' ? v.split(',').map((x) => x.trim()).filter(Boolean) : [];
}

function optionalPort(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--${flag} must be 0-65535, got '${text}'`);
  return port;
}

function switchSetting(value: unknown, flag: string): boolean {
  if (value === undefined || value === false || value === true) return value === true;
  const text = String(value).trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(text)) return true;
  if (['0', 'false', 'no', 'off', ''].includes(text)) return false;
  throw new Error(`--${flag} is a switch (true or false), got '${String(value)}'`);
}

function metricsSetting(text: string): ServerSettings['metrics'] {
  if (text === 'admin' || text === 'public' || text === 'off') return text;
  throw new Error(`--metrics must be admin, public or off, got '${text}'`);
}

function isInside(file: string, dir: string): boolean {
  const rel = path.relative(dir, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

/**
 * The API keys and the link-signing secret: given ones win; missing ones are generated ONCE into
 * the config file. Instances starting together on one storage base must not each generate their
 * own (each would then accept a different key and sign links with a different secret): generation
 * happens under an exclusive lock file beside the config file, and re-reads the file inside the
 * lock, so the second instance finds and uses what the first one wrote.
 */
function ensureSecrets(configFile: string, config: ConfigFile, want: { apiKeys: string[]; needApiKey: boolean; linkSecret: string | undefined; shared: boolean }): { apiKeys: string[]; linkSecret: string; generated: string[] } {
  const fromFile = (c: ConfigFile) => ({
    apiKeys: want.apiKeys.length > 0 ? want.apiKeys : (c.server?.api_keys ?? []).filter((k) => typeof k === 'string' && k !== ''),
    linkSecret: want.linkSecret ?? c.server?.link_secret,
  });
  let have = fromFile(config);
  const missing = () => (want.needApiKey && have.apiKeys.length === 0) || !have.linkSecret;
  if (!missing()) return { apiKeys: have.apiKeys, linkSecret: have.linkSecret!, generated: [] };
  if (!want.shared) {
    throw new Error(
      `with --coordination (several hosts) the ${want.needApiKey && have.apiKeys.length === 0 ? 'API key' : 'link-signing secret'} cannot be generated into ${configFile}: other hosts would generate their own. Give it to every instance (FILESHED_API_KEY, FILESHED_LINK_SECRET, e.g. from a Kubernetes Secret) or put the config file on the shared storage base.`,
    );
  }
  return withConfigLock(configFile, () => {
    const fresh = readConfigFile(configFile); // another instance may have generated them meanwhile
    have = fromFile(fresh);
    const server = (fresh.server ??= {});
    const generated: string[] = [];
    if (want.needApiKey && have.apiKeys.length === 0) {
      have.apiKeys = [newSecret('fs_')];
      server.api_keys = have.apiKeys;
      generated.push('api_key');
    }
    if (!have.linkSecret) {
      have.linkSecret = newSecret();
      server.link_secret = have.linkSecret;
      generated.push('link_secret');
    }
    if (generated.length > 0) writeConfigFile(configFile, fresh);
    Object.assign(config, fresh);
    return { apiKeys: have.apiKeys, linkSecret: have.linkSecret, generated };
  });
}

/** Runs `fn` holding `{configFile}.lock` (O_EXCL; a lock older than 30 s is a crashed starter's). */
function withConfigLock<T>(configFile: string, fn: () => T): T {
  const lock = `${configFile}.lock`;
  fs.mkdirSync(path.dirname(configFile), { recursive: true });
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      fs.closeSync(fs.openSync(lock, 'wx', 0o600));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const age = Date.now() - (fs.statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 30_000) fs.rmSync(lock, { force: true });
      else if (Date.now() > deadline) throw new Error(`${lock} is held by another starting instance; remove it if none is starting`);
      else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
  try {
    return fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (net.isIPv4(h)) return h.startsWith('127.');
  if (net.isIPv6(h)) return h === '::1' || h.startsWith('::ffff:127.');
  return false;
}
