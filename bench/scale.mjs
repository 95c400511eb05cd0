// Several instances on one storage base, measured in one run (README "Several instances"):
// 1. the correctness table per topology (three instances behind HAProxy round-robin, four users,
//    a kill -9 in the middle): acknowledged / lost / doubled / commits, fsck, quota, lock takeover;
//    with BENCH_BEFORE_CLI=/path/to/other/dist/cli.mjs the same topologies run on that build too;
// 2. append latency p50/p95, local disk vs GlusterFS, sticky (HAProxy on the user header) vs
//    rotating (round-robin);
// 3. /healthz p99 from the health thread while a GlusterFS brick is stopped (SIGSTOP);
// 4. the Kubernetes manifests' validation.
// Needs root, FUSE, GlusterFS, Redis, HAProxy, nginx (as CI installs them); without them only the
// local parts run. BENCH_SMOKE=1: the local latency on a few appends, the manifests.
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { median, SMOKE } from './lib.mjs';
import { cannotRun, COHERENT_MOUNT, glusterUp, startBalancer, startInstance, startRedis, tmpRoot } from '../test/scale/cluster.mjs';
import { measureStall, row, runScenario } from '../test/scale/scenario.mjs';

const before = process.env.BENCH_BEFORE_CLI;
const missing = cannotRun();
const root = tmpRoot();
const log = (line) => console.error(line);
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];

/** One user appending to a Documents file through a balancer: latency of each call (warm-up dropped). */
async function appendLatency({ label, base, client, mnt, mountOptions, logDir, policy, n }) {
  fs.mkdirSync(base, { recursive: true });
  const instances = await Promise.all([1, 2, 3].map((i) => startInstance({ name: `${label}-${i}`, base, client, mnt, mountOptions, logDir })));
  const lb = await startBalancer({ kind: 'haproxy', instances, policy, dir: path.join(root, `lb-${label}`) });
  try {
    const ms = [];
    for (let i = 0; i < n + 3; i++) {
      const t0 = performance.now();
      const res = await fetch(`${lb.url}/shed_patch_text`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: 'Bearer fs_scale_test_key', 'X-OpenWebUI-User-Id': 'alice' },
        body: JSON.stringify({ zone: 'documents', path: 'log.md', content: `line ${i}`, position: 'end' }),
      });
      const env = await res.json();
      if (!env.success) throw new Error(`${label}: ${JSON.stringify(env)}`);
      if (i >= 3) ms.push(performance.now() - t0);
    }
    return { label, p50: median(ms), p95: pct(ms, 0.95) };
  } finally {
    await lb.stop();
    await Promise.all(instances.map((i) => i.stop()));
  }
}

function manifests() {
  const file = path.resolve('deploy/k8s/fileshed.yaml');
  const out = [];
  return import('kubernetes-models/apps/v1/Deployment').then(async ({ Deployment }) => {
    const models = {
      'apps/v1/Deployment': Deployment,
      'v1/Service': (await import('kubernetes-models/v1/Service')).Service,
      'v1/Secret': (await import('kubernetes-models/v1/Secret')).Secret,
      'v1/PersistentVolumeClaim': (await import('kubernetes-models/v1/PersistentVolumeClaim')).PersistentVolumeClaim,
    };
    for (const d of parseAllDocuments(fs.readFileSync(file, 'utf8')).map((x) => x.toJS())) {
      new models[`${d.apiVersion}/${d.kind}`](d).validate();
      out.push(`valid  ${d.apiVersion.padEnd(8)} ${d.kind.padEnd(22)} ${d.metadata.name}`);
    }
    return out;
  });
}

const lines = [];
const say = (s) => {
  lines.push(s);
  console.log(s);
};

try {
  const n = SMOKE ? 3 : 30;
  const local = [];
  if (missing) {
    say(`## instances behind a balancer skipped: ${missing}`);
  } else {
    for (const policy of SMOKE ? ['sticky'] : ['sticky', 'roundrobin']) {
      local.push(await appendLatency({ label: `local-${policy}`, base: path.join(root, `local-${policy}`), client: 'local', policy, n }));
    }
  }
  if (missing || SMOKE) {
    for (const r of local) say(`append latency ${r.label.padEnd(20)} p50 ${r.p50.toFixed(1)} ms  p95 ${r.p95.toFixed(1)} ms`);
  } else {
    const gluster = glusterUp(path.join(root, 'dfs'), log);
    const logDir = path.join(root, 'dfs', 'gluster', 'log');
    const redis = await startRedis(path.join(root, 'redis'));
    try {
      // 1. Correctness per topology.
      const topologies = [
        { name: 'shared-mount', client: 'shared', coherent: true },
        { name: 'own-client-defaults', client: 'own', coherent: false },
        { name: 'own-client-coherent', client: 'own', coherent: true },
        { name: 'own-client-redis', client: 'own', coherent: true, redis: true },
      ];
      const results = [];
      for (const build of before ? [['before', before], ['after', undefined]] : [['after', undefined]]) {
        for (const t of topologies) {
          if (build[0] === 'before' && t.redis) continue; // that build has no coordination
          gluster.setCoherent(t.coherent);
          const r = await runScenario({
            name: `${build[0]}-${t.name}`,
            base: path.join(gluster.mnt, `${build[0]}-${t.name}`),
            client: t.client,
            mnt: gluster.mnt,
            mountOptions: t.coherent ? COHERENT_MOUNT : '',
            logDir,
            redisUrl: t.redis ? redis.url : undefined,
            ops: 6,
            cli: build[1],
            health: build[0] === 'after',
            log,
          });
          results.push(r);
          log(row(r));
        }
      }
      gluster.setCoherent(true);
      say('## correctness: 3 instances behind HAProxy round-robin, 4 users x 2 conversations x 6 writes, kill -9 of one instance in the middle');
      say('| build | topology | acknowledged | lost | doubled | commits (one per acknowledged write) | fsck | quota (10 of 20 fit) | lock takeover after kill -9 |');
      say('|---|---|---|---|---|---|---|---|---|');
      for (const r of results) {
        const [build, ...rest] = r.name.split('-');
        const v = r.verify;
        say(`| ${build} | ${rest.join('-')} | ${v.acked}/${v.attempts} | ${v.lost.length} | ${v.doubled.length} | ${v.commitsOk}/${v.versioned}${v.recoveryCommits ? ` (+${v.recoveryCommits} recovery)` : ''} | ${v.fsck.length === 0 && v.dirty.length === 0 ? 'clean' : 'FAILED'} | ${r.quota.accepted} (${r.quota.diskBytes} B) | ${(r.takeoverMs / 1000).toFixed(1)} s${r.takeoverOk ? '' : ' (failed)'} |`);
      }

      // 2. Latency: local vs GlusterFS, sticky vs rotating.
      const dfs = [];
      for (const policy of ['sticky', 'roundrobin']) {
        dfs.push(await appendLatency({ label: `glusterfs-${policy}`, base: path.join(gluster.mnt, `lat-${policy}`), client: 'own', mnt: gluster.mnt, mountOptions: COHERENT_MOUNT, logDir, policy, n }));
      }
      say('## append latency (ms), one user appending to a Documents file, 3 instances behind HAProxy');
      say('| storage | sticky p50 / p95 | rotating p50 / p95 | rotating / sticky (p50) |');
      say('|---|---|---|---|');
      for (const [name, [s, r]] of [['local disk', local], ['GlusterFS, own client each, coherent', dfs]]) {
        say(`| ${name} | ${s.p50.toFixed(1)} / ${s.p95.toFixed(1)} | ${r.p50.toFixed(1)} / ${r.p95.toFixed(1)} | ${(r.p50 / s.p50).toFixed(2)}x (target <= 1.5x) |`);
      }

      // 3. /healthz while the storage stalls.
      const stall = await measureStall({ gluster, base: path.join(gluster.mnt, 'stall'), logDir, mountOptions: COHERENT_MOUNT });
      say(`## /healthz (health thread) while a brick is stopped (SIGSTOP, 6 s, a call waiting for it): ${stall.samples} probes, p50 ${stall.p50.toFixed(1)} ms, p99 ${stall.p99.toFixed(1)} ms, max ${stall.max.toFixed(1)} ms, ${stall.failed} failed (target p99 <= 50 ms); /readyz 503 in ${stall.notReady} of ${stall.samples}`);
    } finally {
      await redis.stop();
      gluster.down();
    }
  }
  say('## Kubernetes manifests (deploy/k8s/fileshed.yaml) against the schemas');
  for (const l of await manifests()) say(l);
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}
