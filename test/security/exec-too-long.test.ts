/**
 * A command can nest folders past the path limit (4,096 bytes): GNU `mkdir -p` descends one level
 * at a time, a script through folder descriptors. No call by path reaches what lies there, so the
 * quota could not count it: a script wrote 10 MB a call 3,000 levels deep, uncounted, call after
 * call, in a 10 MB quota. Such entries stop the command as soon as the watch sees them and are
 * removed when it ends (exec/guards/too-long.ts); the zone then holds only what the quota counts.
 */
import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { MODES } from './exec-harness.js';

const MIB = 1024 * 1024;

/** Bytes below `root` as du counts them (it walks by descriptor, at any depth), and the longest path's length. */
function onDisk(root: string): { bytes: number; longest: number } {
  const bytes = Number(execFileSync('du', ['-sb', '--', root], { encoding: 'utf8' }).split('\t')[0]);
  const depth = Math.max(...execFileSync('find', [root, '-mindepth', '1', '-printf', '%d\n'], { encoding: 'utf8', maxBuffer: 64 * MIB }).trim().split('\n').map(Number));
  return { bytes, longest: root.length + 2 * depth };
}

const deepMkdir = (levels: number) => ['-p', Array.from({ length: levels }, () => 'd').join('/')];

const DEEP_WRITE = `
import os
fd = os.open('.', os.O_RDONLY)
for i in range(3000):
    try: os.mkdir('d', dir_fd=fd)
    except FileExistsError: pass
    nfd = os.open('d', os.O_RDONLY, dir_fd=fd); os.close(fd); fd = nfd
for k in range(40):
    w = os.open('big%d' % k, os.O_WRONLY | os.O_CREAT, dir_fd=fd)
    for _ in range(8): os.write(w, b'x' * 1048576)
    os.close(w)
print('all written')
`;

describe.each(MODES)('%s mode', (mode) => {
  let s: Shed | undefined;
  afterEach(() => {
    // Whatever a failed test left that deep, rm removes by descriptor.
    if (s) execFileSync('rm', ['-rf', '--', s.base]);
    s = undefined;
  });

  for (const zone of ['storage', 'documents'] as const) {
    it(`mkdir -p of 2,100 levels in ${zone}: what passes the path limit is removed, the zone stays usable and counted`, async () => {
      s = makeShed({ sandbox: mode, quota_per_user_mb: 100 });
      await s.call('shed_create_file', { zone, path: 'keep.txt', content: 'kept\n' });
      // 2,100 nested folders, each watched by the call: seconds on an idle machine, past the default
      // 30 s when the host's other work takes the processors (the command runs at nice 10 after 50 ms).
      const r = await s.call('shed_exec', { zone, cmd: 'mkdir', args: deepMkdir(2100), timeout: 150 });
      expect(r.success, JSON.stringify(r)).toBe(true);
      expect(r.data!.stderr).toMatch(/removed an entry this command made at a path of 4,096 bytes or more/);
      const root = s.zonePath(zone);
      const disk = onDisk(root);
      expect(disk.longest).toBeLessThan(4096);
      // The zone works after it: a command, a write, its history.
      const ls = await s.call('shed_exec', { zone, cmd: 'ls', args: ['-a'] });
      expect(ls.data!.stdout).toContain('keep.txt');
      expect((await s.call('shed_patch_text', { zone, path: 'keep.txt', content: 'more', position: 'end' })).success).toBe(true);
      const stats = await s.call('shed_stats', {});
      const counted = stats.data!.zones[zone === 'storage' ? 'Storage' : 'Documents'].size_bytes as number;
      // What is left is counted (folders at 4 KiB each, as du's apparent size counts them).
      expect(Math.abs(counted - disk.bytes)).toBeLessThan(64 * 1024);
      if (zone === 'documents') {
        const log = await s.call('shed_exec', { zone, cmd: 'git', args: ['log', '--oneline'] });
        expect(log.success, JSON.stringify(log)).toBe(true);
        expect((log.data!.stdout as string).trim().split('\n').length).toBeGreaterThanOrEqual(2);
      }
    }, 240_000);
  }

  it.skipIf(mode === 'validated')('a script writing 320 MB 3,000 levels deep in a 10 MB quota is stopped, and the disk holds what the quota counts, call after call', async () => {
    s = makeShed({ sandbox: mode, quota_per_user_mb: 10, allow_python: true });
    const root = s.zonePath('storage');
    for (let call = 0; call < 3; call++) {
      const r = await s.call('shed_run_python', { zone: 'storage', code: DEEP_WRITE });
      expect(JSON.stringify(r)).not.toContain('all written');
      const disk = onDisk(root);
      expect(disk.longest).toBeLessThan(4096);
      expect(disk.bytes, `after call ${call + 1}`).toBeLessThanOrEqual(10 * MIB + MIB);
    }
    const stats = await s.call('shed_stats', {});
    expect(Math.abs((stats.data!.zones.Storage.size_bytes as number) - onDisk(root).bytes)).toBeLessThan(64 * 1024);
  }, 300_000);
});
