/**
 * The audit log: one JSON line per call with user, conversation, function, zone, path parameters,
 * result code and time; refused attacks flagged; never contents, command arguments or secrets;
 * rotated by size, rotated files pruned after the retention; read back newest first with filters.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, mod, type Shed } from '../helpers/shed.js';
import { appendAudit, auditDir, auditEntry, pruneAudit } from '../../src/core/services/audit/audit.js';

let s: Shed;
beforeEach(() => {
  s = makeShed({ sandbox: 'validated', audit_log: true });
});
afterEach(() => s.cleanup());

const lines = () =>
  fs
    .readFileSync(path.join(auditDir(s.base), 'audit.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('audit log', () => {
  it('is off by default: no audit folder appears', async () => {
    s.tools.valves = { ...s.tools.valves, audit_log: false };
    await s.call('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'x' });
    expect(fs.existsSync(auditDir(s.base))).toBe(false);
  });

  it('records each call without contents, arguments or secrets', async () => {
    const secret = 'TOP-SECRET-CONTENT-42';
    await s.call('shed_create_file', { zone: 'storage', path: 'notes/a.txt', content: secret });
    await s.call('shed_exec', { zone: 'storage', cmd: 'grep', args: [secret, 'notes/a.txt'] }, { user: 'bob', chat: 'chat-9' });
    await s.call('shed_read', { zone: 'storage', path: 'missing.txt' });
    const [create, exec, read] = lines();
    expect(create).toMatchObject({ user: 'alice', conversation: 'c1', function: 'shed_create_file', zone: 'storage', paths: ['notes/a.txt'], code: 'OK' });
    expect(typeof create!.ms).toBe('number');
    expect(Date.parse(String(create!.time))).toBeGreaterThan(Date.now() - 60_000);
    expect(exec).toMatchObject({ user: 'bob', conversation: 'chat-9', function: 'shed_exec', command: 'grep', code: 'OK' });
    expect(read).toMatchObject({ function: 'shed_read', code: 'FILE_NOT_FOUND' });
    expect(read!.flagged).toBeUndefined();
    const raw = fs.readFileSync(path.join(auditDir(s.base), 'audit.jsonl'), 'utf8');
    expect(raw).not.toContain(secret);
    expect(raw).not.toContain(s.base);
    expect((fs.statSync(path.join(auditDir(s.base), 'audit.jsonl')).mode & 0o777).toString(8)).toBe('600');
  });

  it('flags refused attacks', async () => {
    await s.call('shed_read', { zone: 'storage', path: '../../bob/Storage/data/x' });
    await s.call('shed_exec', { zone: 'storage', cmd: 'bash', args: ['-c', 'id'] });
    const [escape, shell] = lines();
    expect(escape).toMatchObject({ code: 'PATH_ESCAPE', flagged: true });
    expect(shell).toMatchObject({ code: 'COMMAND_FORBIDDEN', flagged: true });
    const flagged = mod.admin.readAudit(s.base, { flaggedOnly: true });
    expect(flagged.map((e) => e.code)).toEqual(['COMMAND_FORBIDDEN', 'PATH_ESCAPE']);
  });

  it('reads back newest first with user, function and error filters', async () => {
    await s.call('shed_create_file', { zone: 'storage', path: 'a.txt', content: '1' });
    await s.call('shed_create_file', { zone: 'storage', path: 'b.txt', content: '2' }, { user: 'bob' });
    await s.call('shed_read', { zone: 'storage', path: 'nope.txt' }, { user: 'bob' });
    expect(mod.admin.readAudit(s.base).map((e) => e.function)).toEqual(['shed_read', 'shed_create_file', 'shed_create_file']);
    expect(mod.admin.readAudit(s.base, { user: 'bob' })).toHaveLength(2);
    expect(mod.admin.readAudit(s.base, { function: 'shed_create_file', user: 'alice' })[0]!.paths).toEqual(['a.txt']);
    expect(mod.admin.readAudit(s.base, { errorsOnly: true }).map((e) => e.code)).toEqual(['FILE_NOT_FOUND']);
    expect(mod.admin.readAudit(s.base, { limit: 1 })).toHaveLength(1);
  });

  it('rotates by size, prunes rotated files after the retention, and skips a torn line', () => {
    const settings = { storageBase: s.base, maxBytes: 2000, retentionDays: 5 };
    for (let i = 0; i < 60; i++) appendAudit(settings, auditEntry('shed_read', { zone: 'storage', path: `f${i}.txt` }, 'alice', 'c1', 'OK', 1));
    const dir = auditDir(s.base);
    const rotated = fs.readdirSync(dir).filter((n) => n.startsWith('audit-'));
    expect(rotated.length).toBeGreaterThan(0);
    expect(fs.statSync(path.join(dir, 'audit.jsonl')).size).toBeLessThan(2300);
    // Every entry is still readable, newest first, across files.
    const all = mod.admin.readAudit(s.base, { limit: 1000 });
    expect(all).toHaveLength(60);
    expect(all[0]!.paths).toEqual(['f59.txt']);
    fs.appendFileSync(path.join(dir, 'audit.jsonl'), '{"time":"2026-01-01T00:00:00Z","user":"ali');
    expect(mod.admin.readAudit(s.base, { limit: 1000 })).toHaveLength(60);
    // Rotated files past the retention go; the current file stays.
    const old = new Date(Date.now() - 6 * 86_400_000);
    for (const name of rotated) fs.utimesSync(path.join(dir, name), old, old);
    expect(pruneAudit(dir, 5)).toBe(rotated.length);
    expect(pruneAudit(dir, 0)).toBe(0);
    expect(fs.readdirSync(dir)).toEqual(['audit.jsonl']);
  });
});
