/**
 * The Dockerfile, .dockerignore and compose example, checked without a Docker engine: the build
 * context carries no dependencies, storage, history or secrets; the image runs as `node` with a
 * HEALTHCHECK that works (run here against a real server); the compose example runs with Docker's
 * default security options and sets only variables the server reads.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { SERVE_FLAGS } from '../../src/hosts/http/settings.js';
import { serve } from '../hosts/helpers.js';

interface Instruction {
  op: string;
  args: string;
}

/** Dockerfile instructions, continuation lines joined, comments dropped. */
function instructions(text: string): Instruction[] {
  const joined = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  return joined.map((l) => {
    const [op, ...rest] = l.split(/\s+/);
    return { op: op!.toUpperCase(), args: rest.join(' ') };
  });
}

const docker = instructions(fs.readFileSync('Dockerfile', 'utf8'));
const envOf = (name: string) => docker.filter((i) => i.op === 'ENV').map((i) => new RegExp(`(?:^|\\s)${name}=(\\S+)`).exec(i.args)?.[1]).find(Boolean);

describe('Dockerfile', () => {
  it('runs as root (stripped of its powers by the compose file), requires identity separation, the storage folder passable only', () => {
    const users = docker.filter((i) => i.op === 'USER');
    expect(users.at(-1)?.args).toBe('root');
    expect(docker.findIndex((i) => i.op === 'USER')).toBeLessThan(docker.findIndex((i) => i.op === 'CMD'));
    expect(envOf('FILESHED_BASE')).toBe('/data');
    expect(docker.find((i) => i.op === 'VOLUME')?.args).toContain('/data');
    expect(docker.some((i) => i.op === 'RUN' && /chmod 711 \/data/.test(i.args))).toBe(true);
    expect(docker.find((i) => i.op === 'CMD')?.args).toContain('--valve=identity_separation=required');
  });

  it('copies only what .dockerignore lets into the context', () => {
    const allowed = fs.readFileSync('.dockerignore', 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    expect(allowed[0]).toBe('*'); // everything out, then what the image needs back in
    const reincluded = allowed.filter((l) => l.startsWith('!')).map((l) => l.slice(1).replace(/\/$/, ''));
    expect(reincluded.sort()).toEqual(['dist', 'package.json']);
    expect(allowed).toContain('dist/**/__pycache__');
    for (const copy of docker.filter((i) => i.op === 'COPY')) {
      const sources = copy.args.split(/\s+/).slice(0, -1).map((s) => s.replace(/\/$/, ''));
      for (const src of sources) expect(reincluded, `COPY ${src}`).toContain(src);
    }
    for (const secret of ['node_modules', 'data', 'data/fileshed.json', '.git', 'test', 'bench', 'src', '.env', 'id_rsa']) {
      expect(reincluded.some((r) => secret === r || secret.startsWith(`${r}/`)), secret).toBe(false);
    }
  });

  it('has a HEALTHCHECK on /healthz that needs no curl, and it tells up from down', async () => {
    const check = docker.find((i) => i.op === 'HEALTHCHECK');
    expect(check).toBeDefined();
    const argv = JSON.parse(/CMD\s+(\[.*\])$/.exec(check!.args)![1]!) as string[];
    expect(argv[0]).toBe('node');
    expect(argv.join(' ')).toContain('/healthz');
    expect(argv.join(' ')).not.toMatch(/curl|wget/);
    const run = (port: number) => spawnSync(process.execPath, argv.slice(1), { env: { ...process.env, FILESHED_PORT: String(port) }, timeout: 20_000 }).status;
    const served = await serve();
    const port = Number(new URL(served.url).port);
    try {
      expect(run(port)).toBe(0);
    } finally {
      await served.stop();
    }
    expect(run(port)).toBe(1);
  });
});

describe('docker-compose.example.yml', () => {
  const text = fs.readFileSync('docker-compose.example.yml', 'utf8');
  const compose = parseYaml(text) as { services: Record<string, { build?: string; environment?: Record<string, string>; ports?: string[]; volumes?: string[]; security_opt?: string[]; cap_drop?: string[]; cap_add?: string[]; networks?: string[] }> };
  const shed = compose.services.fileshed!;

  it("runs with Docker's default seccomp and AppArmor profiles, no new privileges, and only identity separation's capabilities", () => {
    expect(shed.security_opt).toEqual(['no-new-privileges:true']);
    expect(Object.values(compose.services).some((s) => (s.security_opt ?? []).some((o) => /unconfined/.test(o)))).toBe(false);
    expect(shed.cap_drop).toEqual(['ALL']);
    expect(shed.cap_add).toEqual(['SETUID', 'SETGID', 'CHOWN', 'FOWNER', 'DAC_OVERRIDE', 'KILL', 'SYS_NICE']);
  });

  it('sets only variables the server reads, on the port and volume the image uses', () => {
    const flags = new Set<string>(SERVE_FLAGS.map((f) => `FILESHED_${f.toUpperCase().replace(/-/g, '_')}`));
    for (const name of Object.keys(shed.environment ?? {})) expect(flags, name).toContain(name);
    expect(shed.build).toBe('.');
    expect(shed.ports).toContain(`${envOf('FILESHED_PORT')}:${envOf('FILESHED_PORT')}`);
    expect(shed.volumes?.some((v) => v.endsWith(`:${envOf('FILESHED_BASE')}`))).toBe(true);
    // Fileshed reaches Open WebUI by its service name on the shared network.
    const owui = new URL(shed.environment!.FILESHED_OPENWEBUI_URL!);
    expect(Object.keys(compose.services)).toContain(owui.hostname);
    expect(compose.services[owui.hostname]!.networks).toEqual(shed.networks);
  });

  it('says where the API key is', () => {
    expect(text).toContain('docker compose logs fileshed');
    expect(Object.keys(shed.environment ?? {})).toContain('FILESHED_API_KEY');
  });
});
