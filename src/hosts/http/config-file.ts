/**
 * The server's config file (default `{base}/fileshed.json`): server settings, generated secrets
 * and valve values. Written atomically (temp file + rename) with mode 0600 because it holds
 * secrets; the admin page saves valves through `writeConfigFile` too.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { serving } from '../../index.js';

export interface ConfigFile {
  server?: {
    host?: string;
    port?: number;
    auth?: string[] | string;
    api_keys?: string[];
    jwt_secret?: string;
    /** HMAC key of download links. */
    link_secret?: string;
    public_url?: string;
    openwebui_url?: string;
    access_log?: string;
    /** Coordination across hosts (redis://...), allowed Host names, health thread port, /metrics access. */
    coordination?: string;
    allowed_hosts?: string[] | string;
    health_port?: number;
    metrics?: string;
    /** Run commands of several users with valve sandbox="validated" (no kernel confinement) all the same. */
    allow_unconfined?: boolean;
    /** Fairness and slow-client limits (settings.ts LIMIT_SETTINGS): max_running, max_queued_per_user, *_timeout (s), max_header_size. */
    [limit: string]: unknown;
  };
  valves?: Record<string, unknown>;
}

export function readConfigFile(file: string): ConfigFile {
  let text: string;
  try {
    text = serving.readText(file); // never aborts on a stale handle (network filesystem)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new Error(`cannot read the config file ${file}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new Error(`the config file ${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`the config file ${file} must hold a JSON object`);
  return parsed as ConfigFile;
}

/** Replaces the file in one rename; readers see the old or the new content, never a mix. */
export function writeConfigFile(file: string, config: ConfigFile): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  const fd = fs.openSync(tmp, 'wx', 0o600);
  try {
    fs.writeSync(fd, `${JSON.stringify(config, null, 2)}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, file);
  fs.chmodSync(file, 0o600);
}

/** A new secret: 32 random bytes, URL-safe. */
export function newSecret(prefix = ''): string {
  return `${prefix}${crypto.randomBytes(32).toString('base64url')}`;
}
