/**
 * shed_unzip with real archives on disk: extraction, zones, refusals decided before anything is
 * written (slip, absolute names, backslashes, links, devices, bombs), corrupt data leaving nothing
 * behind, overwrite rules, and Documents commits.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { put } from '../sqlite/helpers.js';
import { buildZip, S_IFCHR, S_IFIFO, S_IFLNK, S_IFREG } from './zipbuilder.js';
import { git } from '../vcs/helpers.js';

let s: Shed;
afterEach(() => s?.cleanup());

const unzip = (args: Record<string, unknown>) => s.call('shed_unzip', { zone: 'storage', ...args });

/** Every file under a folder, relative, sorted (empty when the folder does not exist). */
function tree(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return (fs.readdirSync(dir, { recursive: true }) as string[]).map((p) => p.split(path.sep).join('/')).sort();
}

/** The internal folders beside the zone's data (temp extraction area) hold no leftovers. */
function internalTemp(): string[] {
  return tree(path.join(s.base, 'users', 'alice', 'Storage', 'tmp'));
}

describe('extraction', () => {
  it('extracts files and folders into dest, with content intact and a report', async () => {
    s = makeShed();
    put(s, 'in/a.zip', buildZip([{ name: 'top/' }, { name: 'top/x.txt', data: 'hello' }, { name: 'top/sub/y.bin', data: Buffer.from([0, 1, 2, 255]) }, { name: 'z.txt', data: 'z'.repeat(10000) }]));
    const r = await unzip({ src: 'in/a.zip', dest: 'out' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data).toMatchObject({ source: 'in/a.zip', destination: 'out', files_count: 3, total_size: 10009, source_zone: 'Storage', destination_zone: 'Storage' });
    expect(r.data!.files).toEqual(['out/top/x.txt', 'out/top/sub/y.bin', 'out/z.txt']);
    expect(fs.readFileSync(s.zonePath('storage', 'out/top/x.txt'), 'utf8')).toBe('hello');
    expect(fs.readFileSync(s.zonePath('storage', 'out/top/sub/y.bin'))).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(fs.readFileSync(s.zonePath('storage', 'out/z.txt'), 'utf8')).toBe('z'.repeat(10000));
    expect(internalTemp()).toEqual([]);
  });

  it('without dest, extracts beside the archive; from Uploads into Storage with src_zone', async () => {
    s = makeShed();
    put(s, 'up.zip', buildZip([{ name: 'u.txt', data: 'from uploads' }]), 'uploads');
    const r = await unzip({ src: 'up.zip', src_zone: 'uploads' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data).toMatchObject({ source_zone: 'Uploads', destination_zone: 'Storage', destination: '.' });
    expect(fs.readFileSync(s.zonePath('storage', 'u.txt'), 'utf8')).toBe('from uploads');
    expect(tree(s.zonePath('uploads'))).toEqual(['up.zip']);
    put(s, 'docs/d.zip', buildZip([{ name: 'd.txt', data: 'd' }]));
    expect((await unzip({ src: 'docs/d.zip' })).success).toBe(true);
    expect(fs.existsSync(s.zonePath('storage', 'docs/d.txt'))).toBe(true);
  });

  it('a ZIP made by the zip command (deflate, folders, unicode names) is extracted identically', async () => {
    s = makeShed();
    const work = s.zonePath('storage', 'src');
    fs.mkdirSync(path.join(work, 'dir/é'), { recursive: true });
    fs.writeFileSync(path.join(work, 'dir/é/ü.txt'), 'unicode');
    fs.writeFileSync(path.join(work, 'big.txt'), 'line\n'.repeat(200000));
    fs.writeFileSync(path.join(work, '.hidden'), 'dot');
    try {
      execFileSync('zip', ['-qr', '../made.zip', '.'], { cwd: work });
    } catch {
      return; // zip not installed: the other tests cover extraction
    }
    const r = await unzip({ src: 'made.zip', dest: 'copy' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(tree(s.zonePath('storage', 'copy'))).toEqual(tree(work));
    expect(fs.readFileSync(s.zonePath('storage', 'copy/big.txt')).equals(fs.readFileSync(path.join(work, 'big.txt')))).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'copy/dir/é/ü.txt'), 'utf8')).toBe('unicode');
  });

  it('nested archives are extracted as files, not opened', async () => {
    s = makeShed();
    const inner = buildZip([{ name: 'deep.txt', data: 'deep' }]);
    put(s, 'outer.zip', buildZip([{ name: 'inner.zip', data: inner }]));
    const r = await unzip({ src: 'outer.zip', dest: 'x' });
    expect(r.data!.files_count).toBe(1);
    expect(fs.readFileSync(s.zonePath('storage', 'x/inner.zip')).equals(inner)).toBe(true);
    expect(fs.existsSync(s.zonePath('storage', 'x/deep.txt'))).toBe(false);
  });

  it('existing files are not replaced unless overwrite=true; new files merge into an existing folder', async () => {
    s = makeShed();
    put(s, 'out/keep.txt', 'keep');
    put(s, 'out/a.txt', 'old');
    put(s, 'a.zip', buildZip([{ name: 'a.txt', data: 'new' }, { name: 'b.txt', data: 'b' }]));
    const r = await unzip({ src: 'a.zip', dest: 'out' });
    expect(r.error?.code).toBe('FILE_EXISTS');
    expect(r.error?.message).toContain('Storage/out/a.txt');
    expect(r.error?.hint).toContain('overwrite=true');
    expect(tree(s.zonePath('storage', 'out'))).toEqual(['a.txt', 'keep.txt']);
    expect(internalTemp()).toEqual([]);
    const o = await unzip({ src: 'a.zip', dest: 'out', overwrite: true });
    expect(o.data!.replaced_count).toBe(1);
    expect(tree(s.zonePath('storage', 'out'))).toEqual(['a.txt', 'b.txt', 'keep.txt']);
    expect(fs.readFileSync(s.zonePath('storage', 'out/a.txt'), 'utf8')).toBe('new');
  });

  it('Documents: one commit for the whole extraction', async () => {
    s = makeShed();
    put(s, 'a.zip', buildZip([{ name: 'p/1.txt', data: '1' }, { name: 'p/2.txt', data: '2' }]));
    const r = await s.call('shed_unzip', { zone: 'documents', src: 'a.zip', src_zone: 'storage', dest: 'imported' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data!.commit).toMatch(/^[0-9a-f]{7}$/);
    const files = git(s.zonePath('documents'), 'show', '--name-only', '--format=%s', 'HEAD');
    expect(files).toContain('imported/p/1.txt');
    expect(files).toContain('imported/p/2.txt');
    expect(git(s.zonePath('documents'), 'rev-list', '--count', 'HEAD').trim()).toBe('1');
  });
});

describe('refused before anything is written', () => {
  const refused = async (entries: Parameters<typeof buildZip>[0], code: string, text?: string) => {
    put(s, 'bad.zip', buildZip(entries));
    const r = await unzip({ src: 'bad.zip', dest: 'out' });
    expect(r.error?.code, JSON.stringify(r)).toBe(code);
    if (text) expect(r.error?.message).toContain(text);
    expect(r.error?.message).toContain('Nothing was extracted');
    expect(fs.existsSync(s.zonePath('storage', 'out'))).toBe(false);
    expect(tree(s.zonePath('storage'))).toEqual(['bad.zip']);
    expect(internalTemp()).toEqual([]);
    expect(fs.existsSync(path.join(s.base, 'evil.txt'))).toBe(false);
    return r;
  };

  it.each([
    ['../evil.txt', 'traversal'],
    ['ok/../../evil.txt', 'traversal'],
    ['a/../b.txt', 'traversal'],
    ['/etc/evil.txt', 'absolute'],
    ['..\\..\\evil.txt', 'traversal (backslashes)'],
    ['C:\\evil.txt', 'drive letter'],
    ['\\\\server\\share\\evil.txt', 'UNC'],
  ])('zip slip: %j (%s) → PATH_ESCAPE', async (name) => {
    s = makeShed();
    await refused([{ name: 'fine.txt', data: 'fine' }, { name, data: 'evil' }], 'PATH_ESCAPE');
  });

  it('a control character in a name → INVALID_PATH', async () => {
    s = makeShed();
    await refused([{ name: 'a\u0001b.txt', data: 'x' }], 'INVALID_PATH');
  });

  it('a symbolic link entry (Unix attributes S_IFLNK) → PATH_ESCAPE, even pointing inside', async () => {
    s = makeShed();
    await refused([{ name: 'ok.txt', data: 'ok' }, { name: 'link', data: '/etc/passwd', method: 0, mode: S_IFLNK }], 'PATH_ESCAPE', 'symbolic link');
    await refused([{ name: 'inside', data: 'ok.txt', method: 0, mode: S_IFLNK }], 'PATH_ESCAPE', 'symbolic link');
  });

  it('a link made by zip -y is refused', async () => {
    s = makeShed();
    const work = s.zonePath('storage', 'w');
    fs.mkdirSync(work, { recursive: true });
    fs.writeFileSync(path.join(work, 'f.txt'), 'f');
    fs.symlinkSync('/etc/passwd', path.join(work, 'pw'));
    try {
      execFileSync('zip', ['-qry', '../bad.zip', '.'], { cwd: work });
    } catch {
      return; // zip not installed: the built archives above cover links
    }
    fs.rmSync(work, { recursive: true });
    const r = await unzip({ src: 'bad.zip', dest: 'out' });
    expect(r.error?.code).toBe('PATH_ESCAPE');
    expect(r.error?.message).toContain("symbolic link entry ('pw')");
    expect(tree(s.zonePath('storage'))).toEqual(['bad.zip']);
  });

  it('device and pipe entries → INVALID_FORMAT', async () => {
    s = makeShed();
    await refused([{ name: 'dev', mode: S_IFCHR }], 'INVALID_FORMAT', 'device');
    await refused([{ name: 'fifo', mode: S_IFIFO }], 'INVALID_FORMAT', 'device');
  });

  it('encrypted entries and unsupported methods → INVALID_FORMAT', async () => {
    s = makeShed();
    await refused([{ name: 'secret.txt', data: 'x', flags: 1, mode: S_IFREG }], 'INVALID_FORMAT', 'password');
    await refused([{ name: 'b.txt', data: 'x', method: 12, raw: Buffer.from('BZh9') }], 'INVALID_FORMAT', 'bzip2');
  });

  it('duplicates and a name that is both file and folder → INVALID_FORMAT', async () => {
    s = makeShed();
    await refused([{ name: 'a.txt', data: '1' }, { name: 'a.txt', data: '2' }], 'INVALID_FORMAT', 'twice');
    await refused([{ name: 'a', data: '1' }, { name: 'a/b', data: '2' }], 'INVALID_FORMAT', 'both a file and a folder');
  });

  it('entry-count bomb: more entries than zip_max_entries → ZIP_BOMB', async () => {
    s = makeShed({ zip_max_entries: 100 });
    await refused(Array.from({ length: 101 }, (_, i) => ({ name: `f${i}.txt`, data: '' })), 'ZIP_BOMB', '101 entries');
    const ok = buildZip(Array.from({ length: 100 }, (_, i) => ({ name: `f${i}.txt`, data: 'x' })));
    put(s, 'ok.zip', ok);
    expect((await unzip({ src: 'ok.zip', dest: 'many' })).data!.files_count).toBe(100);
  });

  it('size bomb: declared total above zip_max_total_mb → ZIP_BOMB (declared sizes checked, no data needed)', async () => {
    s = makeShed({ zip_max_total_mb: 5 });
    await refused([{ name: 'huge.bin', data: 'x', method: 0, declaredSize: 6 * 1024 * 1024 }], 'ZIP_BOMB', 'uncompressed');
  });

  it('ratio bomb: 20 MB of zeros in a few KB → ZIP_BOMB; a small compressible file is fine', async () => {
    s = makeShed();
    const r = await refused([{ name: 'zeros.bin', data: Buffer.alloc(20 * 1024 * 1024) }], 'ZIP_BOMB', 'expands');
    expect(r.error?.details?.max_ratio).toBe(100);
    put(s, 'small.zip', buildZip([{ name: 'z.txt', data: Buffer.alloc(200 * 1024, 'a') }]));
    expect((await unzip({ src: 'small.zip', dest: 's' })).success).toBe(true);
    s.cleanup();
    s = makeShed({ zip_max_ratio: 0 });
    put(s, 'z.zip', buildZip([{ name: 'zeros.bin', data: Buffer.alloc(5 * 1024 * 1024) }]));
    expect((await unzip({ src: 'z.zip', dest: 'z' })).success).toBe(true);
  });

  it('a .git folder (any depth, any spelling) into Documents → PROTECTED_PATH: it could never be versioned; Storage takes it', async () => {
    s = makeShed();
    for (const name of ['.git/hooks/post-commit', 'proj/.git/config', 'proj/.GIT/HEAD', 'a/git~1/x']) {
      put(s, 'g.zip', buildZip([{ name: 'ok.txt', data: 'fine' }, { name, data: '#!/bin/sh\necho pwned' }]));
      const r = await s.call('shed_unzip', { zone: 'documents', src: 'g.zip', src_zone: 'storage' });
      expect(r.error?.code, name).toBe('PROTECTED_PATH');
      expect(r.error?.hint).toContain('zone="storage"');
      expect(fs.existsSync(s.zonePath('documents', 'ok.txt'))).toBe(false);
    }
    const r = await s.call('shed_unzip', { zone: 'storage', src: 'g.zip', dest: 'unpacked' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(fs.existsSync(s.zonePath('storage', 'unpacked/a/git~1/x'))).toBe(true);
  });

  it('quota is checked against the declared size', async () => {
    s = makeShed({ quota_per_user_mb: 1, zip_max_ratio: 0 });
    put(s, 'q.zip', buildZip([{ name: 'big.bin', data: Buffer.alloc(2 * 1024 * 1024) }]));
    const r = await unzip({ src: 'q.zip', dest: 'q' });
    expect(r.error?.code).toBe('QUOTA_EXCEEDED');
    expect(fs.existsSync(s.zonePath('storage', 'q'))).toBe(false);
  });

  it('a link inside the destination folder is not followed', async () => {
    s = makeShed();
    const outside = fs.mkdtempSync(path.join(s.base, 'outside-'));
    fs.mkdirSync(s.zonePath('storage', 'out'), { recursive: true });
    fs.symlinkSync(outside, s.zonePath('storage', 'out/sub'));
    put(s, 'a.zip', buildZip([{ name: 'sub/evil.txt', data: 'evil' }]));
    const r = await unzip({ src: 'a.zip', dest: 'out' });
    expect(r.error?.code).toBe('PATH_ESCAPE');
    expect(fs.readdirSync(outside)).toEqual([]);
  });
});

describe('corrupt archives leave nothing behind', () => {
  it('an entry inflating past its declared size → ZIP_BOMB; a bad CRC or damaged data → INVALID_FORMAT', async () => {
    s = makeShed({ zip_max_ratio: 0 });
    const lying = buildZip([{ name: 'ok.txt', data: 'ok' }, { name: 'liar.bin', data: Buffer.alloc(100000, 1), declaredSize: 1000 }]);
    put(s, 'liar.zip', lying);
    const r = await unzip({ src: 'liar.zip', dest: 'out' });
    expect(r.error?.code).toBe('ZIP_BOMB');
    expect(r.error?.message).toContain('inflates past');
    expect(fs.existsSync(s.zonePath('storage', 'out'))).toBe(false);
    put(s, 'crc.zip', buildZip([{ name: 'a.txt', data: 'content', crc: 12345 }]));
    const c = await unzip({ src: 'crc.zip', dest: 'out' });
    expect(c.error?.code).toBe('INVALID_FORMAT');
    expect(c.error?.message).toContain('checksum');
    put(s, 'dmg.zip', buildZip([{ name: 'a.txt', data: 'x'.repeat(50), raw: Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff]) }]));
    expect((await unzip({ src: 'dmg.zip', dest: 'out' })).error?.code).toBe('INVALID_FORMAT');
    expect(fs.existsSync(s.zonePath('storage', 'out'))).toBe(false);
    expect(internalTemp()).toEqual([]);
  });

  it('a truncated archive, a non-ZIP file and a PK header with garbage → INVALID_FORMAT', async () => {
    s = makeShed();
    const good = buildZip([{ name: 'a.txt', data: 'a'.repeat(1000) }]);
    put(s, 'cut.zip', good.subarray(0, good.length - 30));
    put(s, 'text.zip', 'just text, not an archive');
    put(s, 'pk.zip', Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(100, 7)]));
    for (const f of ['cut.zip', 'text.zip', 'pk.zip']) {
      const r = await unzip({ src: f, dest: 'out' });
      expect(r.error?.code, f).toBe('INVALID_FORMAT');
      expect(r.error?.message).toContain('Storage/');
    }
    expect(fs.existsSync(s.zonePath('storage', 'out'))).toBe(false);
  });

  it('a large archive is streamed (entries inflated in slices) and verified', async () => {
    s = makeShed({ zip_max_ratio: 0 });
    // 40 MB file of pseudo-random text: bigger than the whole-read threshold and the inflate slice
    const chunk = Buffer.from(Array.from({ length: 1 << 16 }, (_, i) => String.fromCharCode(97 + ((i * 7919) % 26))).join(''));
    const data = Buffer.concat(Array.from({ length: 640 }, () => chunk));
    put(s, 'big.zip', buildZip([{ name: 'big.txt', data }]));
    const r = await unzip({ src: 'big.zip', dest: 'b' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(zlib.crc32(fs.readFileSync(s.zonePath('storage', 'b/big.txt')))).toBe(zlib.crc32(data));
  });
});

describe('parameters and zones', () => {
  it('Uploads as destination is refused; a group src_zone is refused; dest must be a folder', async () => {
    s = makeShed();
    put(s, 'a.zip', buildZip([{ name: 'a.txt', data: 'a' }]));
    expect((await s.call('shed_unzip', { zone: 'uploads', src: 'a.zip' })).error?.code).toBe('ZONE_READONLY');
    const g = await unzip({ src: 'a.zip', src_zone: 'group' });
    expect(g.error?.code).toBe('ZONE_FORBIDDEN');
    expect(g.error?.message).toContain("'src_zone'");
    put(s, 'file.txt', 'x');
    const d = await unzip({ src: 'a.zip', dest: 'file.txt' });
    expect(d.error?.code).toBe('NOT_A_DIRECTORY');
    const missing = await unzip({ src: 'none.zip' });
    expect(missing.error?.code).toBe('FILE_NOT_FOUND');
    expect(missing.error?.details?.parameter).toBe('src');
  });
});
