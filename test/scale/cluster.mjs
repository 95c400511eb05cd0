// Several `fileshed serve` instances on a real distributed filesystem, behind a real balancer:
// the machinery shared by the scale test (test/scale/cluster.test.ts) and its bench
// (bench/scale.mjs). Everything listens on 127.0.0.1; every process started here is stopped by
// its pid.
//
// - GlusterFS on loopback: gluster-up.sh / gluster-down.sh beside this file (copied from the
//   project's dfs tools so a clean clone has them), a replica-2 volume mounted at {root}/mnt.
// - An instance is `dist/cli.mjs serve` either on that mount (all instances share one FUSE
//   client) or in its own mount namespace with its own FUSE client mounted at the same path
//   (`unshare -m --propagation private`), as on separate hosts.
// - Redis (redis-server) for --coordination; HAProxy and nginx run the example configurations
//   of deploy/ with the ports replaced.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const REPO = path.resolve(here, '..', '..');
export const CLI = path.join(REPO, 'dist', 'cli.mjs');
export const KEY = 'fs_scale_test_key';
const VOLUME = 'vol';

/** Why this machine cannot run the scale test (undefined when it can). */
export function cannotRun() {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not root (mounting FUSE and creating mount namespaces need root)';
  if (!fs.existsSync('/dev/fuse')) return 'no /dev/fuse';
  for (const tool of ['glusterd', 'mount.glusterfs', 'unshare', 'redis-server', 'haproxy', 'nginx']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `${tool} is not installed (apt-get install glusterfs-server glusterfs-client redis-server haproxy nginx)`;
  }
  return undefined;
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Mount options of a client that reads what another client just wrote (see gluster-up.sh COHERENT). */
export const COHERENT_MOUNT = 'attribute-timeout=0,entry-timeout=0,negative-timeout=0,direct-io-mode=enable';
const CACHES = ['performance.quick-read', 'performance.stat-prefetch', 'performance.open-behind', 'performance.write-behind'];

/** A GlusterFS volume on loopback mounted at {root}/mnt; `down()` undoes everything. */
export function glusterUp(root, log = () => {}) {
  const env = { ...process.env, ROOT: root, MOUNTS: '1', COHERENT: '1' };
  const r = spawnSync('bash', [path.join(here, 'gluster-up.sh')], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`gluster-up.sh failed (${r.status}): ${r.stderr}\n${r.stdout}`);
  log(r.stdout.trim().split('\n').pop());
  // A stopped brick holds operations until the client gives up on it: 10 s, not 42.
  gluster('volume', 'set', VOLUME, 'network.ping-timeout', '10');
  return {
    root,
    mnt: path.join(root, 'mnt'),
    /** Client caches on or off for the clients mounted after this (volume options). */
    setCoherent(on) {
      for (const o of CACHES) gluster('volume', 'set', VOLUME, o, on ? 'off' : 'on');
    },
    /** Pid of the first brick process (SIGSTOP it to make the storage stall). */
    brickPid() {
      const dir = `/var/run/gluster/vols/${VOLUME}`;
      const file = fs.readdirSync(dir).filter((n) => n.endsWith('.pid')).sort()[0];
      return Number(fs.readFileSync(path.join(dir, file), 'utf8').trim());
    },
    down() {
      spawnSync('bash', [path.join(here, 'gluster-down.sh')], { env, encoding: 'utf8' });
    },
  };
}

function gluster(...args) {
  return execFileSync('gluster', ['--mode=script', ...args], { encoding: 'utf8' });
}

/** redis-server on a free loopback port, no persistence. */
export async function startRedis(dir) {
  const port = await freePort();
  fs.mkdirSync(dir, { recursive: true });
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    if (spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout?.trim() === 'PONG') break;
    await sleep(50);
  }
  return { url: `redis://127.0.0.1:${port}`, port, pid: proc.pid, stop: () => stopPid(proc) };
}

function stopPid(proc, signal = 'SIGTERM') {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  const done = new Promise((r) => proc.once('exit', r));
  try {
    process.kill(proc.pid, signal);
  } catch {
    return Promise.resolve();
  }
  return Promise.race([done, sleep(5000).then(() => { try { process.kill(proc.pid, 'SIGKILL'); } catch { /* gone */ } })]);
}

/**
 * One `fileshed serve`. `client`: 'shared' (this process's mount namespace, one FUSE client for
 * all instances), 'own' (its own mount namespace and FUSE client at the same path, mounted with
 * `mountOptions`), or 'local' (no GlusterFS). `cli` defaults to this checkout's build.
 */
export async function startInstance({ name, base, client = 'local', mnt, mountOptions = '', logDir, flags = [], cli = CLI, health = true }) {
  const args = [cli, 'serve', '--port', '0', '--base', base, '--auth', 'api-key', '--api-key', KEY, '--access-log', 'off', '--valve', 'sandbox=validated', '--allow-unconfined', ...(health ? ['--health-port', '0'] : []), ...flags];
  let proc;
  let clientLog;
  if (client === 'own') {
    clientLog = path.join(logDir, `client-${name}-${crypto.randomBytes(3).toString('hex')}.log`);
    const opts = [`log-file=${clientLog}`, mountOptions].filter(Boolean).join(',');
    // Its own host name too (UTS namespace): lock holders on "other hosts" cannot be judged by pid.
    // The namespace starts with a copy of this one's mounts: the shared client's mount is detached
    // there first (mount.glusterfs refuses a path it sees mounted), then its own client is mounted.
    const script = `hostname 'fileshed-${name}' && { umount -l '${mnt}' 2>/dev/null || true; } && mount -t glusterfs -o '${opts}' 127.0.0.1:/${VOLUME} '${mnt}' && exec "$@"`;
    proc = spawn('unshare', ['-m', '-u', '--propagation', 'private', 'sh', '-c', script, 'sh', process.execPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  } else {
    proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  }
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += d.toString()));
  const lines = [];
  const exited = new Promise((r) => proc.once('exit', (code, signal) => r(code ?? signal)));
  const ready = await new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`${name} did not start in 60 s: ${stderr}`)), 60_000);
    proc.stdout.on('data', (d) => {
      buf += d.toString();
      const parts = buf.split('\n');
      buf = parts.pop();
      lines.push(...parts);
      const url = lines.map((l) => /^Fileshed listening on (\S+)/.exec(l)?.[1]).find(Boolean);
      const healthUrl = lines.map((l) => /^Health:\s+(http:\/\/[^/]+)/.exec(l)?.[1]).find(Boolean);
      if (url && (!health || healthUrl) && lines.some((l) => l.startsWith('Auth:'))) {
        clearTimeout(timer);
        resolve({ url, healthUrl });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}) before listening: ${stderr}`));
    });
  });
  const port = Number(new URL(ready.url).port);
  const healthPort = ready.healthUrl ? Number(new URL(ready.healthUrl).port) : undefined;
  const inst = {
    name,
    url: ready.url,
    port,
    healthPort,
    healthUrl: ready.healthUrl,
    pid: proc.pid,
    lines,
    stderr: () => stderr,
    exited,
    /** kill -9: the instance dies mid-call; its FUSE client (own namespace) is stopped too. */
    async kill9() {
      try {
        process.kill(proc.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await exited;
      stopClient(clientLog);
    },
    async stop() {
      await stopPid(proc);
      stopClient(clientLog);
    },
    call: (fn, body, user, extra = {}) => callFunction(ready.url, fn, body, user, extra),
  };
  return inst;
}

/** The FUSE client of an instance's own mount namespace, found by its log file (we started it). */
function stopClient(clientLog) {
  if (!clientLog) return;
  const out = spawnSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' }).stdout ?? '';
  for (const line of out.split('\n')) {
    if (!line.includes('glusterfs') || !line.includes(`--log-file=${clientLog}`)) continue;
    const pid = Number(line.trim().split(/\s+/)[0]);
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // gone
    }
  }
}

/** POST /{fn} as `user` (api-key mode); resolves with {status, envelope, ms}, or {error} when the connection failed. */
export async function callFunction(url, fn, body, user, extra = {}) {
  const t0 = performance.now();
  try {
    const res = await fetch(`${url}/${fn}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${KEY}`, 'X-OpenWebUI-User-Id': user, ...(extra.headers ?? {}) },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(extra.timeoutMs ?? 60_000),
    });
    const text = await res.text();
    let envelope;
    try {
      envelope = JSON.parse(text);
    } catch {
      envelope = { success: false, error: { code: `HTTP_${res.status}`, message: text.slice(0, 200) } };
    }
    return { status: res.status, envelope, ms: performance.now() - t0 };
  } catch (err) {
    return { error: String(err?.cause?.code ?? err?.name ?? err), ms: performance.now() - t0 };
  }
}

/**
 * A balancer in front of `instances`, from the repository's example configuration with the ports
 * replaced. `kind`: 'haproxy' | 'nginx'; `policy`: 'sticky' (as shipped) | 'roundrobin'.
 * `check`: HAProxy checks /readyz on the health ports (needs instances with --health-port).
 */
export async function startBalancer({ kind, instances, policy = 'sticky', dir, check = true }) {
  fs.mkdirSync(dir, { recursive: true });
  const port = await freePort();
  let proc;
  if (kind === 'haproxy') {
    let cfg = fs.readFileSync(path.join(REPO, 'deploy', 'haproxy', 'haproxy.cfg'), 'utf8');
    cfg = cfg.replace('bind 127.0.0.1:8780', `bind 127.0.0.1:${port}`);
    if (policy === 'roundrobin') cfg = cfg.replace(/^\s*balance hdr\(X-OpenWebUI-User-Id\)\n\s*hash-type consistent\n/m, '    balance roundrobin\n');
    const servers = instances.map((inst, i) => `    server fileshed${i + 1} 127.0.0.1:${inst.port}${check && inst.healthPort ? ` check port ${inst.healthPort}` : ''}`).join('\n');
    cfg = cfg.replace(/(^\s*server fileshed\d .*\n?)+/m, `${servers}\n`);
    if (!check) cfg = cfg.replace(/^\s*option httpchk.*\n\s*http-check expect.*\n/m, '');
    const file = path.join(dir, 'haproxy.cfg');
    fs.writeFileSync(file, cfg);
    proc = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'ignore', 'pipe'] });
  } else {
    let conf = fs.readFileSync(path.join(REPO, 'deploy', 'nginx', 'fileshed.conf'), 'utf8');
    conf = conf.replace('listen 127.0.0.1:8780;', `listen 127.0.0.1:${port};`);
    if (policy === 'roundrobin') conf = conf.replace(/^\s*hash \$http_x_openwebui_user_id consistent;\n/m, '');
    const servers = instances.map((inst) => `    server 127.0.0.1:${inst.port} max_fails=1 fail_timeout=5s;`).join('\n');
    conf = conf.replace(/(^\s*server 127\.0\.0\.1:\d+ .*\n?)+/m, `${servers}\n`);
    for (const sub of ['client', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) fs.mkdirSync(path.join(dir, sub), { recursive: true });
    const main = `pid ${dir}/nginx.pid;\nerror_log ${dir}/error.log warn;\nworker_processes 1;\nevents { worker_connections 1024; }\nhttp {\n  access_log off;\n  client_body_temp_path ${dir}/client;\n  proxy_temp_path ${dir}/proxy;\n  fastcgi_temp_path ${dir}/fastcgi;\n  uwsgi_temp_path ${dir}/uwsgi;\n  scgi_temp_path ${dir}/scgi;\n  include ${dir}/fileshed.conf;\n}\n`;
    fs.writeFileSync(path.join(dir, 'fileshed.conf'), conf);
    fs.writeFileSync(path.join(dir, 'nginx.conf'), main);
    proc = spawn('nginx', ['-c', path.join(dir, 'nginx.conf'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  }
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    const r = await fetch(`${url}/healthz`).then((x) => x.status, () => 0);
    if (r === 200) break;
    if (proc.exitCode !== null) throw new Error(`${kind} exited: ${stderr}`);
    await sleep(100);
  }
  // HAProxy marks servers up after their first check.
  if (kind === 'haproxy' && check) await sleep(1500);
  return { url, kind, policy, stop: () => stopPid(proc), stderr: () => stderr };
}

/** Every file below `dir` whose name ends with `suffix` (relative paths). */
export function filesBelow(dir, test) {
  return (fs.readdirSync(dir, { recursive: true }) ?? []).filter((n) => test(String(n))).map(String);
}

export const tmpRoot = () => fs.mkdtempSync(path.join(os.tmpdir(), 'fileshed-scale-'));
