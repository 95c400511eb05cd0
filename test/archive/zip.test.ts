/**
 * shed_zip and shed_zipinfo with real files: archive layout, dotfiles, empty folders, links, the
 * zone root (the original wrote outside the zone), limits, and archives readable by other tools.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { unzipSync } from 'fflate';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { put } from '../sqlite/helpers.js';
import { buildZip, S_IFLNK } from './zipbuilder.js';

let s: Shed;
afterEach(() => s?.cleanup());

const zip = (args: Record<string, unknown>) => s.call('shed_zip', { zone: 'storage', ...args });
/** Entry name → content, read back with an independent unzip. */
const entries = (rel: string, zone: 'storage' | 'documents' = 'storage') =>
  Object.fromEntries(Object.entries(unzipSync(fs.readFileSync(s.zonePath(zone, rel)))).map(([k, v]) => [k, Buffer.from(v).toString('utf8')]));

describe('shed_zip', () => {
  it('a folder keeps its name as the top level; dotfiles are included; default dest beside it', async () => {
    s = makeShed();
    put(s, 'reports/a.txt', 'A');
    put(s, 'reports/.hidden', 'H');
    put(s, 'reports/sub/b.csv', 'x,y\n1,2\n');
    const r = await zip({ src: 'reports' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data).toMatchObject({ source: 'reports', zip_path: 'reports.zip', files_count: 3, total_uncompressed: 10 });
    expect(entries('reports.zip')).toEqual({ 'reports/.hidden': 'H', 'reports/a.txt': 'A', 'reports/sub/b.csv': 'x,y\n1,2\n' });
    expect(r.message).toContain('Storage/reports.zip');
  });

  it('a single file is stored under its own name; ".zip" is added to dest', async () => {
    s = makeShed();
    put(s, 'docs/note.md', '# note');
    const r = await zip({ src: 'docs/note.md', dest: 'out/note' });
    expect(r.data!.zip_path).toBe('out/note.zip');
    expect(entries('out/note.zip')).toEqual({ 'note.md': '# note' });
  });

  it('src="." zips the zone root into a file INSIDE the zone, never including itself', async () => {
    s = makeShed();
    put(s, 'a.txt', 'a');
    put(s, 'd/b.txt', 'b');
    const r = await zip({ src: '.' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data!.zip_path).toBe('storage.zip');
    expect(fs.existsSync(s.zonePath('storage', 'storage.zip'))).toBe(true);
    // nothing beside the zone's data folder
    expect(fs.readdirSync(path.join(s.base, 'users', 'alice', 'Storage')).filter((n) => n.endsWith('.zip'))).toEqual([]);
    expect(entries('storage.zip')).toEqual({ 'a.txt': 'a', 'd/b.txt': 'b' });
    // again, into a dest inside the zipped tree: the archive is not part of itself
    const again = await zip({ src: '.', dest: 'd/all.zip' });
    expect(Object.keys(entries('d/all.zip')).sort()).toEqual(['a.txt', 'd/b.txt', 'storage.zip']);
    expect(again.data!.files_count).toBe(3);
  });

  it('Documents root: the .git history is not archived; the archive is committed', async () => {
    s = makeShed();
    const c = await s.call('shed_create_file', { zone: 'documents', path: 'doc.md', content: '# d' });
    expect(c.success).toBe(true);
    const r = await s.call('shed_zip', { zone: 'documents', src: '.', dest: 'all.zip' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(Object.keys(entries('all.zip', 'documents'))).toEqual(['doc.md']);
    expect(r.data!.commit).toMatch(/^[0-9a-f]{7}$/);
  });

  it('include_empty_dirs stores folders with no files below them', async () => {
    s = makeShed();
    put(s, 'p/f.txt', 'f');
    fs.mkdirSync(s.zonePath('storage', 'p/empty/deeper'), { recursive: true });
    fs.mkdirSync(s.zonePath('storage', 'p/withfile'), { recursive: true });
    put(s, 'p/withfile/x', 'x');
    const without = await zip({ src: 'p' });
    expect(Object.keys(entries('p.zip')).sort()).toEqual(['p/f.txt', 'p/withfile/x']);
    expect(without.data!.empty_dirs_count).toBeUndefined();
    const withDirs = await zip({ src: 'p', dest: 'p2.zip', include_empty_dirs: true });
    expect(withDirs.data!.empty_dirs_count).toBe(2);
    expect(Object.keys(entries('p2.zip')).sort()).toEqual(['p/empty/', 'p/empty/deeper/', 'p/f.txt', 'p/withfile/x']);
  });

  it('links: to a file inside the zone stored as that file; to outside or to a folder skipped and reported', async () => {
    s = makeShed();
    put(s, 'l/real.txt', 'real');
    fs.symlinkSync('real.txt', s.zonePath('storage', 'l/inside.txt'));
    fs.symlinkSync('/etc/hostname', s.zonePath('storage', 'l/outside'));
    fs.symlinkSync('..', s.zonePath('storage', 'l/loop'));
    const r = await zip({ src: 'l' });
    expect(entries('l.zip')).toEqual({ 'l/inside.txt': 'real', 'l/real.txt': 'real' });
    expect(r.data!.skipped.sort()).toEqual(['l/loop', 'l/outside']);
    expect(r.message).toContain('Skipped 2');
  });

  it('an existing dest is FILE_EXISTS unless overwrite=true', async () => {
    s = makeShed();
    put(s, 'a.txt', 'a');
    put(s, 'a.zip', 'old');
    const r = await zip({ src: 'a.txt', dest: 'a.zip' });
    expect(r.error?.code).toBe('FILE_EXISTS');
    expect(r.error?.hint).toContain('overwrite');
    expect(fs.readFileSync(s.zonePath('storage', 'a.zip'), 'utf8')).toBe('old');
    const o = await zip({ src: 'a.txt', dest: 'a.zip', overwrite: true });
    expect(o.data!.replaced).toBe(true);
    expect(entries('a.zip')).toEqual({ 'a.txt': 'a' });
  });

  it('paths: missing src, escapes, Uploads and group zones refused', async () => {
    s = makeShed();
    expect((await zip({ src: 'nope' })).error?.code).toBe('FILE_NOT_FOUND');
    expect((await zip({ src: '../..' })).error?.code).toBe('PATH_ESCAPE');
    put(s, 'a.txt', 'a');
    expect((await zip({ src: 'a.txt', dest: '../../x.zip' })).error?.code).toBe('PATH_ESCAPE');
    expect((await s.call('shed_zip', { zone: 'uploads', src: 'a' })).error?.code).toBe('ZONE_READONLY');
    expect((await s.call('shed_zip', { zone: 'group', src: 'a' })).error?.code).toBe('ZONE_FORBIDDEN');
    expect(fs.readdirSync(s.base)).toEqual(['users']);
  });

  it('an archive larger than max_file_size_mb is refused and leaves no file', async () => {
    s = makeShed({ max_file_size_mb: 1 });
    put(s, 'r/rand.bin', crypto.randomBytes(1_200_000));
    const r = await zip({ src: 'r' });
    expect(r.error?.code).toBe('FILE_TOO_LARGE');
    expect(fs.readdirSync(s.zonePath('storage')).sort()).toEqual(['r']);
  });

  it('already-compressed files are stored, text is deflated; `unzip -t` accepts the archive', async () => {
    s = makeShed();
    put(s, 'm/photo.jpg', Buffer.alloc(5000, 9));
    put(s, 'm/text.txt', 'abc'.repeat(5000));
    const r = await zip({ src: 'm' });
    expect(r.success).toBe(true);
    const info = await s.call('shed_zipinfo', { zone: 'storage', path: 'm.zip' });
    const byName = Object.fromEntries((info.data!.entries as { name: string; compressed: number; size: number }[]).map((e) => [e.name, e]));
    expect(byName['m/photo.jpg']!.compressed).toBe(5000);
    expect(byName['m/text.txt']!.compressed).toBeLessThan(1000);
    const t = spawnSync('unzip', ['-t', s.zonePath('storage', 'm.zip')], { encoding: 'utf8' });
    if (t.error === undefined) expect(t.stdout).toContain('No errors detected');
  });

  it('round trip: shed_zip then shed_unzip gives the same tree', async () => {
    s = makeShed();
    put(s, 'src/a/1.txt', '1');
    put(s, 'src/a/b/2.txt', '2');
    put(s, 'src/é.txt', 'unicode name');
    await zip({ src: 'src', dest: 'rt.zip' });
    const u = await s.call('shed_unzip', { zone: 'storage', src: 'rt.zip', dest: 'copy' });
    expect(u.success, JSON.stringify(u.error)).toBe(true);
    const list = (d: string) => (fs.readdirSync(d, { recursive: true }) as string[]).sort();
    expect(list(s.zonePath('storage', 'copy/src'))).toEqual(list(s.zonePath('storage', 'src')));
    expect(fs.readFileSync(s.zonePath('storage', 'copy/src/é.txt'), 'utf8')).toBe('unicode name');
  });
});

describe('shed_zipinfo', () => {
  it('lists entries, totals, and says the archive is fine', async () => {
    s = makeShed();
    put(s, 'a.zip', buildZip([{ name: 'd/' }, { name: 'd/x.txt', data: 'x'.repeat(1000) }, { name: 'e.txt', data: '' }]), 'uploads');
    const r = await s.call('shed_zipinfo', { zone: 'uploads', path: 'a.zip' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data).toMatchObject({ files_count: 2, dirs_count: 1, total_size: 1000, unzip_check: 'ok', truncated: false });
    expect(r.data!.entries[1]).toMatchObject({ name: 'd/x.txt', size: 1000, is_dir: false, date: '2024-01-01 00:00' });
    expect(r.data!.entries[1].ratio).toMatch(/^\d+\.\d%$/);
    expect(r.data!.entries[2]).toMatchObject({ name: 'e.txt', ratio: '0%' });
  });

  it('flags unsafe archives without extracting them', async () => {
    s = makeShed();
    put(s, 'bad.zip', buildZip([{ name: '../evil.txt', data: 'x' }, { name: 'ln', data: '/etc', method: 0, mode: S_IFLNK }]));
    const r = await s.call('shed_zipinfo', { zone: 'storage', path: 'bad.zip' });
    expect(r.success).toBe(true);
    expect(r.data!.unzip_check).toContain('PATH_ESCAPE');
    expect(r.data!.entries[1].type).toBe('symlink');
    expect(r.message).toContain('would refuse');
    expect(fs.readdirSync(s.zonePath('storage'))).toEqual(['bad.zip']);
  });

  it('at most 100 entries are listed; corrupt and non-ZIP files are INVALID_FORMAT', async () => {
    s = makeShed();
    put(s, 'many.zip', buildZip(Array.from({ length: 150 }, (_, i) => ({ name: `f${i}`, data: '' }))));
    const r = await s.call('shed_zipinfo', { zone: 'storage', path: 'many.zip' });
    expect(r.data!.entries).toHaveLength(100);
    expect(r.data!.truncated).toBe(true);
    expect(r.data!.files_count).toBe(150);
    put(s, 'text.zip', 'hello');
    expect((await s.call('shed_zipinfo', { zone: 'storage', path: 'text.zip' })).error?.code).toBe('INVALID_FORMAT');
    put(s, 'cut.zip', buildZip([{ name: 'a', data: 'a' }]).subarray(0, 40));
    expect((await s.call('shed_zipinfo', { zone: 'storage', path: 'cut.zip' })).error?.code).toBe('INVALID_FORMAT');
  });

  it('a .docx (a ZIP by content) is listed whatever its extension', async () => {
    s = makeShed();
    put(s, 'report.docx', buildZip([{ name: '[Content_Types].xml', data: '<Types/>' }, { name: 'word/document.xml', data: '<w:document/>' }]));
    const r = await s.call('shed_zipinfo', { zone: 'storage', path: 'report.docx' });
    expect(r.data!.files_count).toBe(2);
  });
});
