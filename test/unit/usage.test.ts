/**
 * Exactness of the incremental usage counter (src/core/services/quota/usage.ts): after every kind of change,
 * made by us, by fs behind its back, or by another process, `treeUsage(root)` must equal an
 * independent fresh walk. No sleeps: the counter promises exactness right after the change.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chargedBytes, invalidateTree, treeUsage, type Usage } from '../../src/core/services/quota/usage.js';

/** Independent reference: a synchronous lstat walk; folders (except the root) count themselves, everything else is counted (chargedBytes: the disk each takes). */
function walk(root: string): Usage {
  const out = { bytes: 0, files: 0 };
  let top: fs.Stats;
  try {
    top = fs.lstatSync(root);
  } catch {
    return out;
  }
  if (!top.isDirectory()) return out;
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    for (const name of fs.readdirSync(dir)) {
      const p = path.join(dir, name);
      const st = fs.lstatSync(p);
      if (st.isDirectory()) {
        out.bytes += chargedBytes(st, true);
        stack.push(p);
      } else {
        out.bytes += chargedBytes(st);
        out.files += 1;
      }
    }
  }
  return out;
}

let tmp: string;
let root: string;

async function expectExact(where = root): Promise<Usage> {
  const reference = walk(where);
  expect(await treeUsage(where)).toEqual(reference);
  return reference;
}

/** The own sizes of these folders (below the root), as usage counts them. */
function dirBytes(...rels: string[]): number {
  return rels.reduce((n, rel) => n + chargedBytes(fs.lstatSync(path.join(root, rel)), true), 0);
}

function sh(script: string): void {
  execFileSync('sh', ['-c', script], { cwd: root, stdio: 'ignore' });
}

function write(rel: string, content: string | Buffer): void {
  const p = path.join(root, rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
}

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-usage-'));
  root = path.join(tmp, 'data');
  fs.mkdirSync(root);
  write('a.txt', 'hello\n');
  write('docs/b.md', 'x'.repeat(1000));
  write('docs/deep/er/c.bin', Buffer.alloc(4096, 7));
  write('empty.txt', '');
  fs.mkdirSync(path.join(root, 'empty-folder'));
});

afterEach(() => {
  invalidateTree(root);
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, bytes) on `file` by another process: blocks reserved behind its end. */
function reserve(file: string, bytes: number): void {
  execFileSync('python3', ['-c', `import ctypes, os, sys\nlibc = ctypes.CDLL(None, use_errno=True)\nfd = os.open(sys.argv[1], os.O_RDWR)\nassert libc.fallocate(fd, 1, ctypes.c_long(0), ctypes.c_long(${bytes})) == 0, os.strerror(ctypes.get_errno())`, file]);
}

describe('treeUsage: the disk each entry really takes (issue 31, class 8)', () => {
  it('space reserved behind a 1-byte file (fallocate KEEP_SIZE) counts whole, at once and after the change; cut back, it is gone', async () => {
    write('r.bin', 'x');
    await expectExact();
    const before = (await treeUsage(root)).bytes;
    reserve(path.join(root, 'r.bin'), 64 << 20);
    expect(fs.statSync(path.join(root, 'r.bin')).size).toBe(1);
    const after = await expectExact();
    expect(after.bytes - before).toBeGreaterThanOrEqual((64 << 20) - 4096);
    fs.truncateSync(path.join(root, 'r.bin'), 1); // ext4 frees the blocks past the end
    expect((await expectExact()).bytes).toBe(before);
  });

  it('a sparse file counts its apparent size (what RLIMIT_FSIZE bounds), not its few blocks', async () => {
    fs.writeFileSync(path.join(root, 's.bin'), '');
    fs.truncateSync(path.join(root, 's.bin'), 512 << 20);
    const u = await expectExact();
    expect(u.bytes).toBeGreaterThanOrEqual(512 << 20);
  });

  it('empty folders count a block each, whatever the file system reports', async () => {
    const before = (await treeUsage(root)).bytes;
    for (let i = 0; i < 100; i++) fs.mkdirSync(path.join(root, `f${i}`));
    const u = await expectExact();
    expect(u.bytes - before).toBeGreaterThanOrEqual(100 * 4096);
  });

  it('chargedBytes: an ordinary file counts its size; blocks reserved past it add; a folder at least a block', () => {
    expect(chargedBytes({ size: 5000, blocks: 16, blksize: 4096 })).toBe(5000);
    expect(chargedBytes({ size: 6, blocks: 8, blksize: 4096 })).toBe(6);
    expect(chargedBytes({ size: 1, blocks: 8 + 2048, blksize: 4096 })).toBe(1 + 1024 * 1024);
    expect(chargedBytes({ size: 1 << 30, blocks: 0, blksize: 4096 })).toBe(1 << 30);
    expect(chargedBytes({ size: 0, blocks: 0, blksize: 4096 })).toBe(0);
    expect(chargedBytes({ size: 6, blocks: 0, blksize: 4096 }, true)).toBe(4096);
    expect(chargedBytes({ size: 4096, blocks: 8, blksize: 4096 }, true)).toBe(4096);
  });
});

describe('treeUsage: initial scan', () => {
  it('equals a fresh walk, counting empty files and the folders themselves (not the root)', async () => {
    const u = await expectExact();
    const folders = dirBytes('docs', 'docs/deep', 'docs/deep/er', 'empty-folder');
    expect(folders).toBeGreaterThan(0);
    expect(u).toEqual({ bytes: 6 + 1000 + 4096 + folders, files: 4 });
  });

  it('a missing root is 0 bytes, 0 files', async () => {
    expect(await treeUsage(path.join(tmp, 'nope'))).toEqual({ bytes: 0, files: 0 });
  });

  it('symbolic links count as themselves (their own size), not as their target', async () => {
    fs.symlinkSync('docs/deep/er/c.bin', path.join(root, 'link-to-file'));
    fs.symlinkSync('docs', path.join(root, 'link-to-folder'));
    fs.symlinkSync('/does/not/exist', path.join(root, 'dangling'));
    const u = await expectExact();
    expect(u.files).toBe(7);
  });

  it('asking twice without changes gives the same exact answer', async () => {
    const first = await expectExact();
    expect(await treeUsage(root)).toEqual(first);
  });
});

describe('treeUsage: files changed directly with fs, behind its back', () => {
  beforeEach(async () => {
    await expectExact(); // the tree is known (and watched) before the changes below
  });

  it('file added at the root and in a deep folder', async () => {
    write('new.txt', 'abc');
    await expectExact();
    write('docs/deep/er/new2.txt', 'x'.repeat(777));
    await expectExact();
  });

  it('file removed', async () => {
    fs.rmSync(path.join(root, 'docs/b.md'));
    await expectExact();
    fs.rmSync(path.join(root, 'docs/deep/er/c.bin'));
    expect(await expectExact()).toEqual({ bytes: 6 + dirBytes('docs', 'docs/deep', 'docs/deep/er', 'empty-folder'), files: 2 });
  });

  it('file appended', async () => {
    fs.appendFileSync(path.join(root, 'a.txt'), 'more\n');
    await expectExact();
    fs.appendFileSync(path.join(root, 'docs/deep/er/c.bin'), Buffer.alloc(10_000));
    await expectExact();
  });

  it('file truncated (truncate and open with O_TRUNC)', async () => {
    fs.truncateSync(path.join(root, 'docs/b.md'), 10);
    await expectExact();
    fs.writeFileSync(path.join(root, 'docs/deep/er/c.bin'), 'z');
    await expectExact();
    fs.truncateSync(path.join(root, 'a.txt'), 0);
    await expectExact();
  });

  it('file grown by a write through an open descriptor', async () => {
    const fd = fs.openSync(path.join(root, 'docs/b.md'), 'r+');
    try {
      fs.writeSync(fd, Buffer.alloc(50_000, 1), 0, 50_000, 2000);
    } finally {
      fs.closeSync(fd);
    }
    await expectExact();
  });

  it('file replaced by rename (atomic-write style), moved between folders, moved in and out of the tree', async () => {
    write('docs/.tmp-x', 'y'.repeat(300));
    fs.renameSync(path.join(root, 'docs/.tmp-x'), path.join(root, 'a.txt'));
    await expectExact();
    fs.renameSync(path.join(root, 'a.txt'), path.join(root, 'docs/deep/a.txt'));
    await expectExact();
    fs.writeFileSync(path.join(tmp, 'outside.txt'), 'o'.repeat(1234));
    fs.renameSync(path.join(tmp, 'outside.txt'), path.join(root, 'docs/inside.txt'));
    await expectExact();
    fs.renameSync(path.join(root, 'docs/b.md'), path.join(tmp, 'out.md'));
    await expectExact();
  });

  it('a file replaced by a folder of the same name, and back', async () => {
    fs.rmSync(path.join(root, 'a.txt'));
    write('a.txt/inner.txt', 'inner');
    await expectExact();
    fs.rmSync(path.join(root, 'a.txt'), { recursive: true });
    write('a.txt', 'file again, longer');
    await expectExact();
  });

  it('many changes between two questions', async () => {
    for (let i = 0; i < 50; i++) write(`batch/f${i}.txt`, 'q'.repeat(i));
    fs.rmSync(path.join(root, 'docs/b.md'));
    fs.appendFileSync(path.join(root, 'a.txt'), '!!!');
    await expectExact();
  });

  it('2000 files created at once, then removed at once', async () => {
    for (let d = 0; d < 20; d++) {
      const dir = path.join(root, 'many', `d${d}`);
      fs.mkdirSync(dir, { recursive: true });
      for (let f = 0; f < 100; f++) fs.writeFileSync(path.join(dir, `f${f}`), 'n'.repeat((d * 100 + f) % 97));
    }
    const u = await expectExact();
    expect(u.files).toBe(4 + 2000);
    fs.rmSync(path.join(root, 'many'), { recursive: true });
    expect(await expectExact()).toEqual({ bytes: 6 + 1000 + 4096 + dirBytes('docs', 'docs/deep', 'docs/deep/er', 'empty-folder'), files: 4 });
  });

  it('2000 files created at once in one folder', async () => {
    const dir = path.join(root, 'flat');
    fs.mkdirSync(dir);
    for (let f = 0; f < 2000; f++) fs.writeFileSync(path.join(dir, `f${f}`), 'abc');
    expect((await expectExact()).files).toBe(2004);
  });

  it('the same file reached by two hard links in two folders, grown through one of them', async () => {
    fs.linkSync(path.join(root, 'docs/b.md'), path.join(root, 'docs/deep/b-hardlink.md'));
    await expectExact();
    fs.appendFileSync(path.join(root, 'docs/deep/b-hardlink.md'), 'y'.repeat(5000));
    await expectExact();
  });

  it('a file with a hard link outside the tree made before the first scan, grown through the outside link', async () => {
    invalidateTree(root);
    fs.linkSync(path.join(root, 'docs/b.md'), path.join(tmp, 'outside-link.md'));
    await expectExact();
    fs.appendFileSync(path.join(tmp, 'outside-link.md'), 'z'.repeat(3000));
    await expectExact();
    fs.truncateSync(path.join(tmp, 'outside-link.md'), 1);
    await expectExact();
  });

  // KNOWN LIMITATION (documented here, reported): a hard link made from OUTSIDE the tree after the
  // scan only raises IN_ATTRIB on the inode, which inotify does not report to the folder's watch, so
  // writes through that outside link are never seen. Users cannot make such links through the
  // functions; another process on the host can. `it.fails` turns red the day this gets fixed.
  it.fails('a file with a hard link outside the tree made after the scan, grown through the outside link', async () => {
    fs.linkSync(path.join(root, 'docs/b.md'), path.join(tmp, 'outside-link.md'));
    await expectExact();
    fs.appendFileSync(path.join(tmp, 'outside-link.md'), 'z'.repeat(3000));
    await expectExact();
    fs.truncateSync(path.join(tmp, 'outside-link.md'), 1);
    await expectExact();
  });

  it('a hard link made and then removed again (back to a single link)', async () => {
    fs.linkSync(path.join(root, 'a.txt'), path.join(root, 'docs/a-link.txt'));
    await expectExact();
    fs.rmSync(path.join(root, 'docs/a-link.txt'));
    await expectExact();
    fs.appendFileSync(path.join(root, 'a.txt'), 'after');
    await expectExact();
  });
});

describe('treeUsage: changes made by another process', () => {
  beforeEach(async () => {
    await expectExact();
  });

  it('echo x >> f appends to an existing file', async () => {
    sh('echo x >> a.txt');
    await expectExact();
    sh('echo x >> docs/deep/er/c.bin');
    await expectExact();
  });

  it('creates, truncates and removes files', async () => {
    sh('echo new > docs/new.txt && head -c 12345 /dev/zero > docs/deep/zeros');
    await expectExact();
    sh(': > docs/b.md');
    await expectExact();
    sh('rm docs/deep/er/c.bin a.txt');
    await expectExact();
  });

  it('creates, renames and removes folders', async () => {
    sh('mkdir -p p/q/r && echo 1 > p/one && echo 22 > p/q/two && echo 333 > p/q/r/three');
    await expectExact();
    sh('mv p/q moved-q');
    await expectExact();
    sh('echo grow >> moved-q/r/three');
    await expectExact();
    sh('rm -rf p moved-q');
    await expectExact();
  });

  it('2000 files created by a shell loop', async () => {
    sh('mkdir loop && cd loop && i=0; while [ $i -lt 2000 ]; do echo $i > f$i; i=$((i+1)); done');
    expect((await expectExact()).files).toBe(2004);
  });
});

describe('treeUsage: folders', () => {
  beforeEach(async () => {
    await expectExact();
  });

  it('folder created with files', async () => {
    write('newdir/x.txt', 'xx');
    write('newdir/sub/y.txt', 'yyy');
    await expectExact();
    write('newdir/sub/z.txt', 'zzzz'); // a change inside the new folder after it was first seen
    await expectExact();
  });

  it('folder renamed, then changed under its new name', async () => {
    fs.renameSync(path.join(root, 'docs'), path.join(root, 'papers'));
    await expectExact();
    fs.appendFileSync(path.join(root, 'papers/deep/er/c.bin'), 'more');
    write('papers/deep/new.txt', 'n');
    await expectExact();
    // The old name reused by a new folder must not inherit the old records.
    write('docs/fresh.txt', 'f');
    await expectExact();
  });

  it('two folders swap names, then both change', async () => {
    write('other/o.txt', 'o'.repeat(40));
    await expectExact();
    fs.renameSync(path.join(root, 'docs'), path.join(root, 'swap'));
    fs.renameSync(path.join(root, 'other'), path.join(root, 'docs'));
    fs.renameSync(path.join(root, 'swap'), path.join(root, 'other'));
    await expectExact();
    fs.appendFileSync(path.join(root, 'docs/o.txt'), 'more');
    fs.appendFileSync(path.join(root, 'other/deep/er/c.bin'), 'more');
    write('other/deep/er/n.txt', 'new');
    await expectExact();
  });

  it('a deep folder moved to another branch, then changed', async () => {
    fs.mkdirSync(path.join(root, 'branch'));
    fs.renameSync(path.join(root, 'docs/deep'), path.join(root, 'branch/deep'));
    await expectExact();
    fs.appendFileSync(path.join(root, 'branch/deep/er/c.bin'), 'x'.repeat(100));
    await expectExact();
  });

  it('folder moved out of the tree, then changed there (no longer counted)', async () => {
    fs.renameSync(path.join(root, 'docs'), path.join(tmp, 'docs-out'));
    await expectExact();
    fs.appendFileSync(path.join(tmp, 'docs-out/b.md'), 'z'.repeat(100));
    await expectExact();
  });

  it('folder moved into the tree from outside, then changed', async () => {
    fs.mkdirSync(path.join(tmp, 'incoming/sub'), { recursive: true });
    fs.writeFileSync(path.join(tmp, 'incoming/sub/i.txt'), 'i'.repeat(500));
    fs.renameSync(path.join(tmp, 'incoming'), path.join(root, 'incoming'));
    await expectExact();
    fs.appendFileSync(path.join(root, 'incoming/sub/i.txt'), 'more');
    await expectExact();
  });

  it('folder removed recursively', async () => {
    fs.rmSync(path.join(root, 'docs'), { recursive: true });
    expect(await expectExact()).toEqual({ bytes: 6 + dirBytes('empty-folder'), files: 2 });
  });

  it('folder removed and recreated under the same name, then changed', async () => {
    fs.rmSync(path.join(root, 'docs'), { recursive: true });
    write('docs/again.txt', 'again');
    await expectExact();
    fs.appendFileSync(path.join(root, 'docs/again.txt'), 'and again');
    write('docs/deep/x', 'x');
    await expectExact();
  });

  it('root removed: 0, then recreated with files, then changed', async () => {
    fs.rmSync(root, { recursive: true });
    expect(await treeUsage(root)).toEqual({ bytes: 0, files: 0 });
    fs.mkdirSync(root);
    write('r.txt', 'recreated');
    await expectExact();
    write('later/l.txt', 'later');
    fs.appendFileSync(path.join(root, 'r.txt'), '+++');
    await expectExact();
  });

  it('root removed and recreated between two questions, then changed', async () => {
    fs.rmSync(root, { recursive: true });
    fs.mkdirSync(root);
    write('r.txt', 'recreated');
    await expectExact();
    write('later/l.txt', 'later');
    await expectExact();
    fs.appendFileSync(path.join(root, 'r.txt'), '+++');
    await expectExact();
  });
});

describe('treeUsage: root that appears later', () => {
  it('a root that did not exist when first asked is counted once it exists', async () => {
    const later = path.join(tmp, 'later-root');
    expect(await treeUsage(later)).toEqual({ bytes: 0, files: 0 });
    fs.mkdirSync(later);
    fs.writeFileSync(path.join(later, 'f.txt'), 'f'.repeat(321));
    expect(await treeUsage(later)).toEqual(walk(later));
    fs.appendFileSync(path.join(later, 'f.txt'), 'more');
    expect(await treeUsage(later)).toEqual(walk(later));
    invalidateTree(later);
  });
});

describe('invalidateTree and several trees', () => {
  it('after invalidateTree the next answer is a fresh exact walk', async () => {
    await expectExact();
    write('x.txt', 'x');
    invalidateTree(root);
    await expectExact();
    sh('echo y >> x.txt');
    await expectExact();
  });

  it('invalidating an unknown root is harmless', () => {
    expect(() => invalidateTree(path.join(tmp, 'unknown'))).not.toThrow();
  });

  it('concurrent questions agree with the walk', async () => {
    await expectExact();
    write('c.txt', 'c'.repeat(99));
    const reference = walk(root);
    const answers = await Promise.all([treeUsage(root), treeUsage(root), treeUsage(root)]);
    for (const a of answers) expect(a).toEqual(reference);
  });

  it('a root given with a trailing slash or a ./ segment is the same tree', async () => {
    await expectExact();
    write('s.txt', 'slash');
    expect(await treeUsage(root + '/')).toEqual(walk(root));
    expect(await treeUsage(path.join(root, '.'))).toEqual(walk(root));
  });

  it('stays exact when more trees are used than it keeps (eviction and re-scan)', async () => {
    const roots: string[] = [];
    for (let i = 0; i < 70; i++) {
      const r = path.join(tmp, `many-${i}`);
      fs.mkdirSync(r);
      fs.writeFileSync(path.join(r, 'f'), 'm'.repeat(i));
      roots.push(r);
      expect(await treeUsage(r)).toEqual(walk(r));
    }
    // The first ones were evicted; changes made since must still be seen.
    for (const r of roots.slice(0, 5)) fs.appendFileSync(path.join(r, 'f'), 'extra');
    for (const r of roots) expect(await treeUsage(r)).toEqual(walk(r));
    for (const r of roots) invalidateTree(r);
  });

  it('nested trees are counted independently', async () => {
    const inner = path.join(root, 'docs');
    expect(await treeUsage(inner)).toEqual(walk(inner));
    await expectExact();
    fs.appendFileSync(path.join(inner, 'deep/er/c.bin'), 'zz');
    expect(await treeUsage(inner)).toEqual(walk(inner));
    await expectExact();
    invalidateTree(inner);
  });
});

describe('treeUsage: large trees (file sizes measured on a worker thread too)', () => {
  it('25,000 files in 50 folders: exact at the first question and after changes in both halves', async () => {
    const big = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-usage-big-'));
    try {
      for (let d = 0; d < 50; d++) {
        const dir = path.join(big, `d${d}`);
        fs.mkdirSync(dir);
        for (let f = 0; f < 500; f++) fs.writeFileSync(path.join(dir, `f${f}`), 'x'.repeat((d * 7 + f) % 97));
      }
      expect(await treeUsage(big)).toEqual(walk(big));
      fs.appendFileSync(path.join(big, 'd0', 'f1'), 'grown');
      fs.rmSync(path.join(big, 'd49', 'f3'));
      fs.writeFileSync(path.join(big, 'd25', 'new'), 'n'.repeat(1234));
      expect(await treeUsage(big)).toEqual(walk(big));
    } finally {
      invalidateTree(big);
      fs.rmSync(big, { recursive: true, force: true });
    }
  });
});
