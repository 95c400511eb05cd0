import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatSize } from '../../src/core/base/text/size.js';
import { makeShed, type Shed } from '../helpers/shed.js';

let s: Shed;
beforeEach(() => {
  s = makeShed();
});
afterEach(() => s.cleanup());

function put(file: string, content: string | Buffer = 'x'): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

/** A small zone with every kind of entry the tree distinguishes. */
function arrange(): void {
  put(s.zonePath('storage', 'b.txt'), 'hello');
  put(s.zonePath('storage', 'Zed.txt'), '');
  put(s.zonePath('storage', 'apple.txt'), 'x'.repeat(1023));
  put(s.zonePath('storage', '.hidden'), 'abc');
  put(s.zonePath('storage', 'big.bin'), Buffer.alloc(2411725)); // 2.3 MiB
  put(s.zonePath('storage', 'A/inner.md'), Buffer.alloc(1536));
  put(s.zonePath('storage', 'A/deep/deeper/bottom.txt'), 'b');
  fs.mkdirSync(s.zonePath('storage', 'c'));
  put(s.zonePath('storage', '.b.txt.0a1b2c3d4e5f.shedtmp'), 'leftover of a crash');
  fs.symlinkSync('b.txt', s.zonePath('storage', 'link'));
  fs.symlinkSync('A', s.zonePath('storage', 'alias')); // a link to a folder is not followed
}

describe('shed_tree', () => {
  it('draws the exact tree: folders first, case-insensitive order, sizes, links, dotfiles, no temp files', async () => {
    arrange();
    const r = await s.call('shed_tree', { zone: 'storage' });
    expect(r.success).toBe(true);
    expect(r.data!.tree).toBe(
      [
        'Storage/',
        '├── A/',
        '│   ├── deep/',
        '│   │   └── deeper/',
        '│   └── inner.md (1.5 KiB)',
        '├── c/',
        '├── .hidden (3 B)',
        '├── alias -> A',
        '├── apple.txt (1023 B)',
        '├── b.txt (5 B)',
        '├── big.bin (2.3 MiB)',
        '├── link -> b.txt',
        '└── Zed.txt (0 B)',
      ].join('\n'),
    );
    expect(r.data).toMatchObject({ zone: 'Storage', path: '.', depth: 3, folders: 4, files: 8, truncated: false });
    expect(r.message).toBe('Tree of Storage/ (depth=3): 4 folders, 8 files.');
  });

  it('shows one level with depth=1 and a sub-folder by its own name', async () => {
    arrange();
    const top = await s.call('shed_tree', { zone: 'storage', depth: 1 });
    expect(top.data!.tree.split('\n').slice(0, 3)).toEqual(['Storage/', '├── A/', '├── c/']);
    expect(top.data!.tree).not.toContain('inner.md');
    const sub = await s.call('shed_tree', { zone: 'storage', path: 'A', depth: 10 });
    expect(sub.data!.tree).toBe(['A/', '├── deep/', '│   └── deeper/', '│       └── bottom.txt (1 B)', '└── inner.md (1.5 KiB)'].join('\n'));
    expect(sub.data!.path).toBe('A');
  });

  it('clamps depth to 1..10 and refuses a negative depth naming the parameter', async () => {
    put(s.zonePath('storage', 'a/b/c/d/e/f/g/h/i/j/k/l/file.txt'));
    const zero = await s.call('shed_tree', { zone: 'storage', depth: 0 });
    expect(zero.data!.depth).toBe(1);
    expect(zero.data!.tree).toBe('Storage/\n└── a/');
    const huge = await s.call('shed_tree', { zone: 'storage', depth: '50' });
    expect(huge.data!.depth).toBe(10);
    expect(huge.data!.tree).toContain('j/');
    expect(huge.data!.tree).not.toContain('k/');
    const neg = await s.call('shed_tree', { zone: 'storage', depth: -1 });
    expect(neg.error!.code).toBe('INVALID_PARAMETER');
    expect(neg.error!.message).toContain("'depth'");
    expect(neg.error!.message).toContain('-1');
    expect(neg.error!.hint).toContain('depth=2');
  });

  it('shows a .git folder of Documents: it is the user\'s data (the history lives outside the zone)', async () => {
    put(s.zonePath('documents', 'notes.md'), '# n');
    expect((await s.call('shed_create_file', { zone: 'documents', path: 'other.md', content: '#' })).success).toBe(true);
    put(s.zonePath('documents', '.git/HEAD'), 'ref');
    put(s.zonePath('documents', 'repo/.git/HEAD'), 'ref');
    const r = await s.call('shed_tree', { zone: 'documents' });
    expect(r.data!.tree).toBe(['Documents/', '├── .git/', '│   └── HEAD (3 B)', '├── repo/', '│   └── .git/', '│       └── HEAD (3 B)', '├── notes.md (3 B)', '└── other.md (1 B)'].join('\n'));
  });

  it('shows .git in Storage, where it is an ordinary folder', async () => {
    put(s.zonePath('storage', '.git/HEAD'), 'ref');
    const r = await s.call('shed_tree', { zone: 'storage' });
    expect(r.data!.tree).toBe('Storage/\n└── .git/\n    └── HEAD (3 B)');
  });

  it('shows an empty zone, Uploads included', async () => {
    const r = await s.call('shed_tree', { zone: 'storage' });
    expect(r.data!.tree).toBe('Storage/\n(empty)');
    const u = await s.call('shed_tree', { zone: 'uploads', path: '' });
    expect(u.success).toBe(true);
    expect(u.data!.tree).toBe('Uploads/\n(empty)');
  });

  it('stops at 100 entries per folder', async () => {
    for (let i = 0; i < 105; i++) put(s.zonePath('storage', `many/f${String(i).padStart(3, '0')}.txt`));
    const r = await s.call('shed_tree', { zone: 'storage', path: 'many' });
    const lines = r.data!.tree.split('\n');
    expect(lines).toHaveLength(1 + 100 + 1);
    expect(lines[100]).toBe('├── f099.txt (1 B)');
    expect(lines[101]).toBe('└── ... and 5 more');
    expect(r.data!.files).toBe(100);
  });

  it('caps the whole output at the output limit with a notice', async () => {
    const s2 = makeShed({ max_output_default: 300 });
    try {
      for (let i = 0; i < 50; i++) put(s2.zonePath('storage', `dir${i}/file.txt`));
      const r = await s2.call('shed_tree', { zone: 'storage' });
      expect(r.success).toBe(true);
      expect(r.data!.truncated).toBe(true);
      expect(r.data!.tree.length).toBeLessThanOrEqual(300);
      expect(r.data!.tree).toMatch(/TRUNCATED at 300 characters/);
      expect(r.message).toContain('TRUNCATED');
    } finally {
      s2.cleanup();
    }
  });

  it('shows where a link leads only when it stays inside the zone', async () => {
    put(s.zonePath('storage', 'b.txt'), 'b');
    put(s.zonePath('storage', 'theirs.txt', 'bob'), 'bob');
    const link = (target: string, name: string) => fs.symlinkSync(target, s.zonePath('storage', name));
    link(s.zonePath('storage', 'b.txt'), 'abs-in');
    link(s.zonePath('storage', 'theirs.txt', 'bob'), 'abs-out');
    link('../../../bob/Storage/data/theirs.txt', 'rel-out');
    link('/etc/hostname', 'system');
    link('../data/b.txt', 'round-trip'); // leaves the zone folder and comes back
    link('gone.txt', 'dangling-in');
    link('../gone.txt', 'dangling-out');
    const r = await s.call('shed_tree', { zone: 'storage' });
    expect(r.data!.tree).toBe(
      [
        'Storage/',
        '├── abs-in -> Storage/b.txt',
        '├── abs-out -> (outside the zone)',
        '├── b.txt (1 B)',
        '├── dangling-in -> gone.txt',
        '├── dangling-out -> (outside the zone)',
        '├── rel-out -> (outside the zone)',
        '├── round-trip -> Storage/b.txt',
        '└── system -> (outside the zone)',
      ].join('\n'),
    );
    const text = JSON.stringify(r);
    expect(text).not.toContain(s.base);
    expect(text).not.toContain('theirs');
    expect(text).not.toContain('data/');
  });

  it('refuses a file with NOT_A_DIRECTORY and a missing folder with FILE_NOT_FOUND', async () => {
    put(s.zonePath('storage', 'f.txt'));
    const file = await s.call('shed_tree', { zone: 'storage', path: 'f.txt' });
    expect(file.error!.code).toBe('NOT_A_DIRECTORY');
    expect(file.error!.message).toContain('Storage/f.txt');
    const missing = await s.call('shed_tree', { zone: 'storage', path: 'nope' });
    expect(missing.error!.code).toBe('FILE_NOT_FOUND');
  });

  it('refuses a path starting with the zone name, with the fix in the hint', async () => {
    put(s.zonePath('storage', 'docs/a.txt'));
    const r = await s.call('shed_tree', { zone: 'storage', path: 'Storage/docs' });
    expect(r.error!.code).toBe('PATH_STARTS_WITH_ZONE');
    expect(r.error!.hint).toContain('path="docs"');
  });

  it('writes sizes the one way people read them everywhere: binary units, one decimal', () => {
    expect(formatSize(0)).toBe('0 B');
    expect(formatSize(1023)).toBe('1023 B');
    expect(formatSize(1024)).toBe('1.0 KiB');
    expect(formatSize(1536)).toBe('1.5 KiB');
    expect(formatSize(8192)).toBe('8.0 KiB');
    expect(formatSize(2411725)).toBe('2.3 MiB');
    expect(formatSize(1024 * 1024 - 1)).toBe('1.0 MiB');
    expect(formatSize(3 * 1024 ** 3)).toBe('3.0 GiB');
  });
});
