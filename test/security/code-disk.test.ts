/**
 * Issue 31, class 8, as scripts in both kernel modes: the quota counts the disk a user really takes.
 * Space reserved behind a small file (fallocate FALLOC_FL_KEEP_SIZE, which RLIMIT_FSIZE does not
 * see) is refused by the seccomp filter, so nothing stays reserved after the call; a fallocate that
 * grows the file meets the file-size limit; and many empty files (no bytes, an inode each) are
 * bounded by their number, one per 256 bytes of quota: the command is stopped and what it made is
 * removed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { filesAllowed } from '../../src/core/services/exec/guards/callwatch.js';
import { makeShed, type Shed } from '../helpers/shed.js';

const KERNEL_MODES = ['bwrap', 'landlock'] as const;
const MIB = 1024 * 1024;

/** Blocks (bytes) every file below `root` takes on disk. */
function allocated(root: string): number {
  let total = 0;
  const visit = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) visit(p);
      else total += fs.lstatSync(p).blocks * 512;
    }
  };
  if (fs.existsSync(root)) visit(root);
  return total;
}
const count = (root: string) => (fs.existsSync(root) ? fs.readdirSync(root).length : 0);

describe.each(KERNEL_MODES)('%s mode', (mode) => {
  let s: Shed;
  afterEach(() => s?.cleanup());

  it('fallocate(KEEP_SIZE) of 1 GiB behind a 1-byte file in a 100 MiB quota: refused, nothing reserved after the call', async () => {
    s = makeShed({ sandbox: mode, allow_python: true, quota_per_user_mb: 100 });
    const code = [
      'import ctypes, os',
      'libc = ctypes.CDLL(None, use_errno=True)',
      'libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]',
      'fd = os.open("r.bin", os.O_CREAT | os.O_RDWR, 0o600)',
      'os.write(fd, b"x")',
      'for flags in (1, 3, 0x11):',
      '    r = libc.fallocate(fd, flags, 0, 1 << 30)',
      '    print("fallocate", flags, r, os.strerror(ctypes.get_errno()) if r else "", os.fstat(fd).st_blocks * 512)',
      'try:',
      '    os.posix_fallocate(fd, 0, 200 << 20)',
      '    print("ESCAPED posix_fallocate", os.fstat(fd).st_size)',
      'except OSError as e:',
      '    print("refused posix_fallocate", e.strerror)',
    ].join('\n');
    const r = await s.call('shed_run_python', { zone: 'storage', code, timeout: 60 });
    const out = `${String(r.data?.stdout ?? '')}${JSON.stringify(r.error ?? '')}`;
    expect(out).not.toContain('ESCAPED');
    expect(out.match(/^fallocate \d+ -1 Operation not supported/gm)?.length, out).toBe(3);
    // After the call: no space reserved anywhere in the zone, and the usage says so.
    expect(allocated(s.zonePath('storage'))).toBeLessThan(MIB);
    const stats = await s.call('shed_stats', {});
    expect(Number((stats.data as { total: { size_bytes: number } }).total.size_bytes)).toBeLessThan(MIB);
  });

  it('many empty files: a Python script past one file per 256 bytes of quota is stopped, and what it made is removed', async () => {
    s = makeShed({ sandbox: mode, allow_python: true, quota_per_user_mb: 1 });
    await s.call('shed_create_file', { zone: 'storage', path: 'keep.txt', content: 'kept\n' });
    const limit = filesAllowed(MIB);
    const code = `import os\nos.mkdir("many")\nfor i in range(${limit + 500}):\n    open(f"many/e{i}", "w").close()\nprint("made them all")`;
    const r = await s.call('shed_run_python', { zone: 'storage', code, timeout: 120 });
    expect(r.error?.code, JSON.stringify(r.data ?? r.error)).toBe('QUOTA_EXCEEDED');
    expect(r.error!.message).toContain('files the quota');
    expect(r.error!.details!.files_allowed).toBe(limit);
    expect(count(s.zonePath('storage', 'many'))).toBe(0);
    expect(fs.readFileSync(s.zonePath('storage', 'keep.txt'), 'utf8')).toBe('kept\n');
  }, 180_000);

  it('many empty files from a shell loop: stopped and removed; a few hundred are fine', async () => {
    s = makeShed({ sandbox: mode, allow_shell: true, quota_per_user_mb: 1 });
    const limit = filesAllowed(MIB);
    const few = await s.call('shed_run_shell', { zone: 'storage', script: 'i=0\nwhile [ $i -lt 300 ]; do : > "f$i"; i=$((i+1)); done\necho done', timeout: 60 });
    expect(few.success, JSON.stringify(few.error)).toBe(true);
    expect(count(s.zonePath('storage'))).toBe(300);
    const r = await s.call('shed_run_shell', { zone: 'storage', script: `mkdir many\ni=0\nwhile [ $i -lt ${limit + 500} ]; do : > "many/e$i"; i=$((i+1)); done\necho done`, timeout: 120 });
    expect(r.error?.code, JSON.stringify(r.data ?? r.error)).toBe('QUOTA_EXCEEDED');
    expect(count(s.zonePath('storage', 'many'))).toBe(0);
    expect(count(s.zonePath('storage'))).toBe(300);
  }, 180_000);
});
