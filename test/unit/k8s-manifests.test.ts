/**
 * The Kubernetes manifests (deploy/k8s/fileshed.yaml) validated offline against the Kubernetes
 * API schemas (kubernetes-models: each object's JSON Schema, the one the API server checks), then
 * against what Fileshed needs from them: several replicas on one ReadWriteMany volume, coordinated
 * through the Redis the file deploys, probes on the health thread's paths, secrets from the
 * Secret, and a security context the command sandbox works in (non-root, no capability, no
 * privilege escalation, RuntimeDefault seccomp).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';

const FILE = path.resolve('deploy/k8s/fileshed.yaml');
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'apps/v1/Deployment': Deployment,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'v1/Secret': Secret,
  'v1/Service': Service,
};

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string };
  spec?: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- manifests are free-form YAML
  stringData?: Record<string, string>;
}

const docs = parseAllDocuments(fs.readFileSync(FILE, 'utf8')).map((d) => {
  expect(d.errors).toEqual([]);
  return d.toJS() as Manifest;
});
const find = (kind: string, name: string) => docs.find((d) => d.kind === kind && d.metadata.name === name)!;

describe('Kubernetes manifests', () => {
  it('every object is valid against its Kubernetes schema', () => {
    const report: string[] = [];
    for (const doc of docs) {
      const Model = MODELS[`${doc.apiVersion}/${doc.kind}`];
      expect(Model, `${doc.apiVersion} ${doc.kind} has a schema`).toBeDefined();
      new Model!(doc as never).validate(); // throws with the schema path of the first error
      report.push(`valid  ${doc.apiVersion.padEnd(8)} ${doc.kind.padEnd(22)} ${doc.metadata.name}`);
    }
    console.log(`deploy/k8s/fileshed.yaml: ${docs.length} objects\n${report.join('\n')}`);
    expect(docs.map((d) => d.kind).sort()).toEqual(['Deployment', 'Deployment', 'PersistentVolumeClaim', 'Secret', 'Service', 'Service']);
  });

  it('a schema error is caught (the validation is not a no-op)', () => {
    const broken = structuredClone(find('Deployment', 'fileshed'));
    broken.spec!.template.spec.containers[0].ports[0].containerPort = 'eighty';
    expect(() => new Deployment(broken as never).validate()).toThrow(/containerPort/);
  });

  it('replicas share one ReadWriteMany volume and coordinate through the Redis deployed beside them', () => {
    const app = find('Deployment', 'fileshed').spec!;
    expect(app.replicas).toBeGreaterThanOrEqual(2);
    const pvc = find('PersistentVolumeClaim', app.template.spec.volumes.find((v: { name: string }) => v.name === 'data').persistentVolumeClaim.claimName);
    expect(pvc.spec!.accessModes).toEqual(['ReadWriteMany']);
    const args: string[] = app.template.spec.containers[0].args;
    const coordination = args.find((a) => a.startsWith('--coordination='))!;
    const redisHost = new URL(coordination.slice('--coordination='.length)).hostname;
    const redisService = find('Service', redisHost);
    expect(redisService.spec!.selector).toEqual(find('Deployment', 'fileshed-redis').spec!.template.metadata.labels);
    expect(args).toContain('--base=/data');
    expect(app.template.spec.containers[0].volumeMounts).toContainEqual({ name: 'data', mountPath: '/data' });
  });

  it('probes use the health thread: liveness /healthz, readiness /readyz', () => {
    const c = find('Deployment', 'fileshed').spec!.template.spec.containers[0];
    const healthPort = Number(c.args.find((a: string) => a.startsWith('--health-port=')).split('=')[1]);
    expect(c.ports).toContainEqual({ name: 'health', containerPort: healthPort });
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'health' });
  });

  it('secrets come from the Secret, and the security context suits the sandbox (no root, no capability)', () => {
    const pod = find('Deployment', 'fileshed').spec!.template.spec;
    const c = pod.containers[0];
    const secret = find('Secret', 'fileshed');
    for (const env of ['FILESHED_API_KEY', 'FILESHED_LINK_SECRET']) {
      const ref = c.env.find((e: { name: string }) => e.name === env).valueFrom.secretKeyRef;
      expect(ref.name).toBe('fileshed');
      expect(secret.stringData![ref.key]).toBeDefined();
    }
    // Root without root's powers: exactly the capabilities of identity separation (docs/deployment.md), which is required.
    expect(pod.securityContext).toMatchObject({ runAsUser: 0, seccompProfile: { type: 'RuntimeDefault' } });
    expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'], add: ['SETUID', 'SETGID', 'CHOWN', 'FOWNER', 'DAC_OVERRIDE', 'KILL', 'SYS_NICE'] } });
    expect(c.args).toContain('--valve=identity_separation=required');
  });
});
