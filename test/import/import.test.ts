/**
 * shed_import: attached files (inline content or local paths under the allowed folders) copied
 * into Uploads/{conv}, with hostile entries reported per file while the others are imported:
 * paths outside the allowed folders, ../ names, symbolic links, devices and pipes, huge files,
 * quota overruns. A status event is sent per file.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Result, type Shed } from '../helpers/shed.js';
import { exists, listAll, put, read } from '../lockedit/helpers.js';

let s: Shed;
let allowed: string;
let outside: string;
const SECRET = `SECRET-${crypto.randomBytes(6).toString('hex')}`;

beforeEach(() => {
  allowed = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-uploads-')));
  outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'shed-outside-')));
  fs.writeFileSync(path.join(outside, 'secret.txt'), SECRET);
  s = makeShed({ import_allowed_paths: allowed });
});
afterEach(() => {
  s.cleanup();
  fs.rmSync(allowed, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

/** An Open WebUI style __files__ entry. */
const owui = (name: string, file: Record<string, unknown>) => ({ type: 'file', name, id: `id-${name.length}`, file: { id: 'f1', filename: name, meta: { name }, ...file } });
const events: { description: string; done: boolean }[] = [];
async function imp(files: unknown[], args: Record<string, unknown> = { import_all: true }, chat = 'c1'): Promise<Result> {
  events.length = 0;
  const r = await s.call('shed_import', { ...args, __files__: files, __event_emitter__: async (e: { data: { description: string; done: boolean } }) => void events.push(e.data) }, { chat });
  expect(JSON.stringify(r)).not.toContain(SECRET);
  expect(JSON.stringify(r)).not.toContain(s.base);
  return r;
}
const up = (rel = '') => s.zonePath('uploads', rel);

describe('what gets imported', () => {
  it('inline content (Open WebUI file.data.content) lands in Uploads/{conv}, one status event per file', async () => {
    const r = await imp([owui('a.csv', { data: { content: 'x,y\n1,2\n' } }), owui('b.txt', { data: { content: 'héllo' } })]);
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data).toMatchObject({ zone: 'Uploads', count: 2 });
    expect(r.data!.imported).toEqual([
      { name: 'a.csv', path: 'a.csv', size: 8, source: 'inline', replaced: false },
      { name: 'b.txt', path: 'b.txt', size: 6, source: 'inline', replaced: false },
    ]);
    expect(read(up('a.csv'))).toBe('x,y\n1,2\n');
    expect(read(up('b.txt'))).toBe('héllo');
    expect(events.map((e) => e.description)).toEqual(['Importing a.csv (1/2)', 'Importing b.txt (2/2)', 'Imported 2 of 2 files']);
    expect(events.at(-1)!.done).toBe(true);
    expect(r.message).toContain('shed_move_uploads_to_storage(src="a.csv"');
    // Another conversation's Uploads is a different folder.
    expect(exists(s.zonePath('uploads', 'a.csv', 'alice', 'c2'))).toBe(false);
  });

  it('a local file under an allowed folder is copied byte for byte (binary too)', async () => {
    const bytes = crypto.randomBytes(300_000);
    fs.writeFileSync(path.join(allowed, 'f1_photo.jpg'), bytes);
    const r = await imp([owui('photo.jpg', { path: path.join(allowed, 'f1_photo.jpg') })]);
    expect(r.data!.imported).toEqual([{ name: 'photo.jpg', path: 'photo.jpg', size: 300_000, source: 'file', replaced: false }]);
    expect(fs.readFileSync(up('photo.jpg')).equals(bytes)).toBe(true);
  });

  it('takes __metadata__.files when __files__ is empty, and plain path strings', async () => {
    fs.writeFileSync(path.join(allowed, 'm.txt'), 'from metadata');
    const method = (s.tools as unknown as Record<string, (a: unknown) => Promise<string>>).shed_import!;
    const r = JSON.parse(
      await method.call(s.tools, { import_all: true, __files__: [], __user__: { id: 'alice' }, __metadata__: { chat_id: 'c1', files: [path.join(allowed, 'm.txt')] } }),
    ) as Result;
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(read(up('m.txt'))).toBe('from metadata');
  });

  it('filename imports only that file; dest_subdir puts files in a folder', async () => {
    const files = [owui('a.txt', { data: { content: 'A' } }), owui('b.txt', { data: { content: 'B' } })];
    const r = await imp(files, { filename: 'b.txt', dest_subdir: 'batch/1' });
    expect(r.data!.imported).toEqual([{ name: 'b.txt', path: 'batch/1/b.txt', size: 1, source: 'inline', replaced: false }]);
    expect(listAll(up())).toEqual(['batch', 'batch/1', 'batch/1/b.txt']);
  });

  it('importing again replaces the earlier copy; two attachments with one name both arrive', async () => {
    await imp([owui('r.txt', { data: { content: 'v1' } })]);
    const again = await imp([owui('r.txt', { data: { content: 'v2' } }), owui('r.txt', { data: { content: 'v3' } })]);
    expect(again.data!.imported).toMatchObject([{ path: 'r.txt', replaced: true }, { path: 'r-2.txt', renamed_from: 'r.txt' }]);
    expect(read(up('r.txt'))).toBe('v2');
    expect(read(up('r-2.txt'))).toBe('v3');
  });

  it('then the upload workflow continues: move to Storage', async () => {
    await imp([owui('data.csv', { data: { content: 'a\n' } })]);
    const m = await s.call('shed_move_uploads_to_storage', { src: 'data.csv', dest: 'data.csv' });
    expect(m.success).toBe(true);
    expect(read(s.zonePath('storage', 'data.csv'))).toBe('a\n');
  });
});

describe('call errors that teach', () => {
  it('no attachment: FILE_NOT_FOUND asking the user to attach', async () => {
    const r = await imp([]);
    expect(r.error!.code).toBe('FILE_NOT_FOUND');
    expect(r.error!.hint).toContain('attach');
  });

  it('neither filename nor import_all: MISSING_PARAMETER listing the attached names', async () => {
    const r = await imp([owui('a.txt', { data: { content: 'A' } })], {});
    expect(r.error!.code).toBe('MISSING_PARAMETER');
    expect(r.error!.message).toContain('a.txt');
    expect(r.error!.hint).toContain('shed_import(import_all=true)');
    expect(exists(up('a.txt'))).toBe(false);
  });

  it('an unknown filename: FILE_NOT_FOUND listing the attached names', async () => {
    const r = await imp([owui('a.txt', { data: { content: 'A' } })], { filename: 'b.txt' });
    expect(r.error!.code).toBe('FILE_NOT_FOUND');
    expect(r.error!.details).toMatchObject({ parameter: 'filename', attached: ['a.txt'] });
  });

  it('dest_subdir follows the path rules', async () => {
    const files = [owui('a.txt', { data: { content: 'A' } })];
    expect((await imp(files, { import_all: true, dest_subdir: '../../Storage/data' })).error!.code).toBe('PATH_ESCAPE');
    expect((await imp(files, { import_all: true, dest_subdir: 'Uploads/x' })).error!.code).toBe('PATH_STARTS_WITH_ZONE');
    put(up('afile'), 'x');
    expect((await imp(files, { import_all: true, dest_subdir: 'afile' })).error!.code).toBe('NOT_A_DIRECTORY');
  });

  it('a relative folder in import_allowed_paths is an admin error naming the valve', async () => {
    s.tools.valves = { ...s.tools.valves, import_allowed_paths: 'uploads' };
    const r = await imp([owui('a.txt', { path: '/x/a.txt' })]);
    expect(r.error!.code).toBe('INVALID_VALVES');
    expect(r.error!.message).toContain('import_allowed_paths');
  });
});

describe('hostile entries: refused per file, the rest imported', () => {
  const good = () => owui('good.txt', { data: { content: 'fine' } });

  it('paths outside the allowed folders (absolute, relative, URLs, other users) are refused', async () => {
    put(s.zonePath('storage', 'theirs.txt', 'bob'), SECRET);
    const r = await imp([
      owui('a', { path: path.join(outside, 'secret.txt') }),
      owui('b', { path: '/etc/passwd' }),
      owui('c', { path: `${allowed}/../${path.basename(outside)}/secret.txt` }),
      owui('d', { path: 'secret.txt' }),
      owui('e', { path: 's3://bucket/key' }),
      owui('f', { path: s.zonePath('storage', 'theirs.txt', 'bob') }),
      owui('g', { path: path.join(s.base, 'access_auth.sqlite') }),
      good(),
    ]);
    expect(r.success).toBe(true);
    expect(r.data!.imported).toMatchObject([{ name: 'good.txt' }]);
    const errors = r.data!.errors as { name: string; code: string; reason: string }[];
    expect(errors.map((e) => e.name)).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
    for (const e of errors) expect(['IMPORT_REFUSED', 'FILE_NOT_FOUND']).toContain(e.code);
    expect(errors.find((e) => e.name === 'a')!.reason).toContain('import_allowed_paths');
    expect(listAll(up())).toEqual(['good.txt']);
  });

  it('without the valve, only the storage base counts: the caller\'s own folder yes, another user\'s no', async () => {
    s.tools.valves = { ...s.tools.valves, import_allowed_paths: '' };
    put(path.join(s.base, 'incoming', 'x.txt'), 'host drop');
    put(s.zonePath('storage', 'mine.txt'), 'mine');
    put(s.zonePath('storage', 'theirs.txt', 'bob'), SECRET);
    fs.writeFileSync(path.join(allowed, 'a.txt'), 'was allowed');
    const r = await imp([
      owui('x.txt', { path: path.join(s.base, 'incoming', 'x.txt') }),
      owui('mine.txt', { path: s.zonePath('storage', 'mine.txt') }),
      owui('theirs.txt', { path: s.zonePath('storage', 'theirs.txt', 'bob') }),
      owui('a.txt', { path: path.join(allowed, 'a.txt') }),
    ]);
    expect((r.data!.imported as { name: string }[]).map((f) => f.name)).toEqual(['x.txt', 'mine.txt']);
    expect((r.data!.errors as { name: string }[]).map((f) => f.name)).toEqual(['theirs.txt', 'a.txt']);
  });

  it('a refused path falls back to the inline content when the host gave it, and says so', async () => {
    const r = await imp([owui('doc.txt', { path: path.join(outside, 'secret.txt'), data: { content: 'parsed text' } })]);
    expect(r.data!.imported).toMatchObject([{ name: 'doc.txt', source: 'inline', size: 11 }]);
    expect((r.data!.imported as { note: string }[])[0]!.note).toContain('text content');
    expect(read(up('doc.txt'))).toBe('parsed text');
  });

  it('../ and other unsafe names become safe base names inside Uploads', async () => {
    const r = await imp([
      owui('../../../../escape.txt', { data: { content: '1' } }),
      owui('..', { data: { content: '2' } }),
      owui('a\\..\\..\\win.txt', { data: { content: '3' } }),
      owui('-rf', { data: { content: '4' } }),
      owui('bad\u0000name\n.txt', { data: { content: '5' } }),
      owui('\u202eexe.txt', { data: { content: '6' } }),
      owui('', { data: { content: '7' } }),
      owui('Uploads', { data: { content: '8' } }),
      owui('x.shedtmp', { data: { content: '9' } }),
    ]);
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect((r.data!.imported as { path: string }[]).map((f) => f.path)).toEqual([
      'escape.txt', 'attachment-id-2', 'win.txt', '_-rf', 'bad_name_.txt', '_exe.txt', 'attachment-id-0', 'Uploads', 'x.shedtmp_',
    ]);
    expect(listAll(path.dirname(up()))).toEqual(['c1', ...['Uploads', '_-rf', '_exe.txt', 'attachment-id-0', 'attachment-id-2', 'bad_name_.txt', 'escape.txt', 'win.txt', 'x.shedtmp_'].map((n) => `c1/${n}`).sort()].sort());
    expect(exists(path.join(s.base, 'users', 'alice', 'escape.txt'))).toBe(false);
  });

  it('symbolic links are never followed: final link, link inside to outside, linked parent folder', async () => {
    fs.writeFileSync(path.join(allowed, 'real.txt'), 'real');
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(allowed, 'out-link.txt'));
    fs.symlinkSync('real.txt', path.join(allowed, 'in-link.txt'));
    fs.symlinkSync(outside, path.join(allowed, 'dirlink'));
    const r = await imp([
      owui('out-link.txt', { path: path.join(allowed, 'out-link.txt'), data: { content: 'no fallback for links' } }),
      owui('in-link.txt', { path: path.join(allowed, 'in-link.txt') }),
      owui('via-dir.txt', { path: path.join(allowed, 'dirlink', 'secret.txt') }),
      owui('real.txt', { path: path.join(allowed, 'real.txt') }),
    ]);
    expect((r.data!.imported as { name: string }[]).map((f) => f.name)).toEqual(['real.txt']);
    const errors = r.data!.errors as { name: string; code: string; reason: string }[];
    expect(errors.map((e) => [e.name, e.code])).toEqual([
      ['out-link.txt', 'IMPORT_REFUSED'],
      ['in-link.txt', 'IMPORT_REFUSED'],
      ['via-dir.txt', 'IMPORT_REFUSED'],
    ]);
    expect(errors[0]!.reason).toContain('symbolic link');
    expect(listAll(up())).toEqual(['real.txt']);
  });

  it('devices, pipes and folders are refused without blocking', async () => {
    s.tools.valves = { ...s.tools.valves, import_allowed_paths: `${allowed},/dev` };
    execFileSync('mkfifo', [path.join(allowed, 'pipe')]);
    fs.mkdirSync(path.join(allowed, 'folder'));
    let device = false;
    try {
      execFileSync('mknod', [path.join(allowed, 'zero'), 'c', '1', '5']);
      device = true;
    } catch {
      // not permitted here: /dev/zero below still covers a device
    }
    const r = await imp([
      owui('zero', { path: '/dev/zero' }),
      owui('urandom', { path: '/dev/urandom' }),
      owui('pipe', { path: path.join(allowed, 'pipe') }),
      owui('folder', { path: path.join(allowed, 'folder') }),
      ...(device ? [owui('mknod-zero', { path: path.join(allowed, 'zero') })] : []),
      good(),
    ]);
    expect(r.data!.imported).toMatchObject([{ name: 'good.txt' }]);
    for (const e of r.data!.errors as { code: string; reason: string }[]) {
      expect(e.code).toBe('NOT_A_FILE');
      expect(e.reason).toContain('not a regular file');
    }
    expect((r.data!.errors as unknown[]).length).toBe(device ? 5 : 4);
  });

  it('a file above max_file_size_mb is refused, the others imported', async () => {
    s.tools.valves = { ...s.tools.valves, max_file_size_mb: 1 };
    fs.writeFileSync(path.join(allowed, 'huge.bin'), Buffer.alloc(1024 * 1024 + 1));
    const r = await imp([owui('huge.bin', { path: path.join(allowed, 'huge.bin') }), owui('big-inline.txt', { data: { content: 'z'.repeat(1024 * 1024 + 1) } }), good()]);
    expect(r.data!.imported).toMatchObject([{ name: 'good.txt' }]);
    expect((r.data!.errors as { name: string; code: string }[]).map((e) => [e.name, e.code])).toEqual([
      ['huge.bin', 'FILE_TOO_LARGE'],
      ['big-inline.txt', 'FILE_TOO_LARGE'],
    ]);
    expect(listAll(up())).toEqual(['good.txt']);
  });

  it('the quota stops the file that would overrun it, not the others', async () => {
    s.tools.valves = { ...s.tools.valves, quota_per_user_mb: 1 };
    for (const n of ['a', 'b', 'c']) fs.writeFileSync(path.join(allowed, `${n}.bin`), Buffer.alloc(400 * 1024));
    const r = await imp(['a', 'b', 'c'].map((n) => owui(`${n}.bin`, { path: path.join(allowed, `${n}.bin`) })).concat([good()]));
    expect((r.data!.imported as { name: string }[]).map((f) => f.name)).toEqual(['a.bin', 'b.bin', 'good.txt']);
    expect(r.data!.errors).toMatchObject([{ name: 'c.bin', code: 'QUOTA_EXCEEDED' }]);
    expect(r.message).toContain('could not be imported');
    expect(exists(up('c.bin'))).toBe(false);
  });

  it('when nothing can be imported the call fails with the reasons', async () => {
    const r = await imp([owui('x', { path: '/etc/passwd' }), owui('y', { path: path.join(outside, 'secret.txt') })]);
    expect(r.success).toBe(false);
    expect(r.error!.code).toBe('IMPORT_REFUSED');
    expect(r.error!.message).toContain('Nothing was imported');
    expect(r.error!.hint).toContain('import_allowed_paths');
    expect(listAll(up())).toEqual([]);
  });

  it('garbage in __files__ is ignored or reported, never a crash', async () => {
    const r = await imp([null, 42, [], { name: 5 }, { file: 'x' }, { name: 'n.txt', file: { data: { content: 7 } } }, good()]);
    expect(r.success).toBe(true);
    expect(r.data!.imported).toMatchObject([{ name: 'good.txt' }]);
  });

  it('a folder already named like the file is reported, not replaced', async () => {
    fs.mkdirSync(up('taken.txt'), { recursive: true });
    put(up('taken.txt/inner'), 'keep');
    const r = await imp([owui('taken.txt', { data: { content: 'x' } }), good()]);
    expect(r.data!.errors).toMatchObject([{ name: 'taken.txt', code: 'FILE_EXISTS' }]);
    expect(read(up('taken.txt/inner'))).toBe('keep');
  });
});
