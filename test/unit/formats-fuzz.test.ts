/**
 * Property-based fuzzing of the pure formats (issue 34), bounded (a few seconds each) and
 * deterministic (fixed seeds):
 * - the git index writer: random sequences of file writes and deletes committed into a repository;
 *   after every commit our reader gives back exactly the files and blob ids, and real git agrees
 *   (`ls-files -s`, a clean `status`, `fsck --strict`);
 * - the ZIP central-directory reader: valid archives with random bytes changed, cut or appended,
 *   and random tails behind an end record, never give anything but a clean ShedError, quickly; the
 *   pure format, read from memory, gives the same listing or refuses the same bytes;
 * - the XML/HTML tokenizer: any text (İ, entities, stray markup) never throws, and what follows a
 *   <script> after any prefix survives;
 * - the CSV delimiter sniffer: any sample gives a candidate; a consistent table gives its delimiter.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { readDirectory } from '../../src/core/services/archive/central.js';
import { DELIMITER_CANDIDATES, sniffDelimiter } from '../../src/core/formats/csv/sniff.js';
import { htmlToText } from '../../src/core/services/documents/html.js';
import { decodeEntities, tokenize } from '../../src/core/formats/xml/tokenize.js';
import { readIndexEntries } from '../../src/core/services/vcs/gitindex.js';
import { commitZone } from '../../src/core/services/vcs/index.js';
import { parseDirectory, ZipFormatError } from '../../src/core/formats/zip/directory.js';
import { buildZip } from '../archive/zipbuilder.js';
import { ALICE, fsckClean, git, gitRun, repoOf, tempZone } from '../vcs/helpers.js';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'formats-fuzz-'));
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** git's blob id of `content`. */
const blobId = (content: string) => crypto.createHash('sha1').update(`blob ${Buffer.byteLength(content)}\0`).update(content).digest('hex');

/** Removes a file or folder; a path under a file (ENOTDIR) is already absent. */
function remove(abs: string): void {
  try {
    fs.rmSync(abs, { recursive: true, force: true });
  } catch (err) {
    if ((err as { code?: string }).code !== 'ENOTDIR') throw err;
  }
}

describe('git index writer', () => {
  // Names that sort differently as bytes, as paths and as trees ('a-b' < 'a.b' < 'a/b' < 'a0'), non-ASCII included.
  const segment = fc.constantFrom('a', 'b', 'f', 'a-b', 'a.b', 'a0', 'A', 'é', 'ü.txt', '中文', 'x y', 'z_1');
  const relPath = fc.array(segment, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('/'));
  const op = fc.oneof(
    fc.record({ kind: fc.constant('write' as const), path: relPath, content: fc.string({ maxLength: 40 }) }),
    fc.record({ kind: fc.constant('delete' as const), path: relPath }),
  );

  it('after every commit the index holds exactly the files, as our reader and real git see them', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(op, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 5 }), async (commits) => {
        const zone = tempZone();
        try {
          const files = new Map<string, string>();
          for (const [n, ops] of commits.entries()) {
            const changed = new Set<string>();
            for (const o of ops) {
              const abs = path.join(zone.root, o.path);
              // Whatever stands in the way (a file where a folder must go, a folder where the file goes) goes first.
              for (const known of [...files.keys()]) {
                if (known === o.path || known.startsWith(`${o.path}/`) || (o.kind === 'write' && o.path.startsWith(`${known}/`))) {
                  remove(path.join(zone.root, known));
                  files.delete(known);
                  changed.add(known);
                }
              }
              if (o.kind === 'write') {
                remove(abs);
                fs.mkdirSync(path.dirname(abs), { recursive: true });
                fs.writeFileSync(abs, o.content);
                files.set(o.path, o.content);
              } else remove(abs);
              changed.add(o.path);
            }
            await commitZone(zone, [...changed], ALICE, `fuzz ${n}`);
            const index = await readIndexEntries(repoOf(zone.root));
            const want = [...files].map(([p, c]) => [Buffer.from(p).toString('latin1'), blobId(c)]).sort();
            expect([...(index ?? new Map()).entries()].map(([p, e]) => [p, e.oid]).sort()).toEqual(want);
          }
          const listed = git(zone.root, 'ls-files', '-s', '-z').split('\0').filter(Boolean).map((l) => {
            const [meta, name] = l.split('\t');
            return [name, meta!.split(' ')[1]];
          });
          expect(listed.sort()).toEqual([...files].map(([p, c]) => [p, blobId(c)]).sort());
          expect(git(zone.root, 'status', '--porcelain', '--untracked-files=all')).toBe('');
          // A run whose commits changed nothing has no commit at all (an unborn branch): nothing to check.
          if (gitRun(zone.root, 'rev-parse', '-q', '--verify', 'HEAD').status === 0) {
            const fsck = fsckClean(zone.root);
            expect(fsck.ok, fsck.output).toBe(true);
          }
        } finally {
          zone.cleanup();
        }
      }),
      {
        seed: 3434,
        numRuns: 25,
        // Found by this test: a changed path under what is still a file ('f/a' with 'f' a file) took
        // 'f' out of the index while the commit's tree kept it (git status: "D  f" and "?? f").
        examples: [[[[{ kind: 'write', path: 'f', content: '' }], [{ kind: 'delete', path: 'f/a' }, { kind: 'write', path: 'a', content: '' }]]]],
      },
    );
  }, 120_000);
});

describe('ZIP central directory reader', () => {
  const base = buildZip([
    { name: 'a.txt', data: 'hello hello hello hello' },
    { name: 'dir/' },
    { name: 'dir/b.bin', data: Buffer.from([0, 1, 2, 3, 255]) },
    { name: 'é.txt', data: 'x'.repeat(300) },
  ]);
  const file = path.join(work, 'fuzz.zip');

  /** The pure format's reading of `bytes`, from memory: no file. */
  const fromMemory = (bytes: Uint8Array) => {
    const buf = Buffer.from(bytes);
    return parseDirectory({ size: buf.length, read: (offset, length) => buf.subarray(offset, offset + length) });
  };

  /**
   * Reads `bytes` as an archive: a listing, or a ShedError; anything else (a TypeError, a RangeError...)
   * fails. The format read from memory agrees: the same listing, or a ZipFormatError where the disk
   * reader answered INVALID_FORMAT.
   */
  const judge = async (bytes: Uint8Array) => {
    fs.writeFileSync(file, bytes);
    const t0 = performance.now();
    try {
      const dir = await readDirectory(file, 'fuzz.zip');
      expect(Array.isArray(dir.entries)).toBe(true);
      for (const e of dir.entries) expect(typeof e.name).toBe('string');
      expect(await fromMemory(bytes)).toEqual(dir);
    } catch (err) {
      expect((err as Error).name, String((err as Error).stack)).toBe('ShedError');
      expect(['INVALID_FORMAT', 'ZIP_BOMB', 'FILE_TOO_LARGE', 'DOCUMENT_LIMIT']).toContain((err as { code?: string }).code);
      if ((err as { code?: string }).code === 'INVALID_FORMAT') await expect(fromMemory(bytes)).rejects.toBeInstanceOf(ZipFormatError);
    }
    expect(performance.now() - t0).toBeLessThan(5000); // generous: a read of a few hundred bytes
  };

  it('a valid archive with bytes changed, cut or appended: a listing or a clean error', async () => {
    expect((await readDirectory((fs.writeFileSync(file, base), file), 'ok.zip')).entries.length).toBe(4);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ at: fc.nat({ max: base.length - 1 }), value: fc.integer({ min: 0, max: 255 }) }), { maxLength: 8 }),
        fc.nat({ max: base.length }),
        fc.uint8Array({ maxLength: 64 }),
        async (flips, cut, tail) => {
          const bytes = Buffer.from(base);
          for (const f of flips) bytes[f.at] = f.value;
          // The directory sits at the end: most flips land there when drawn from its last 120 bytes too.
          for (const f of flips) bytes[Math.max(0, bytes.length - 1 - (f.at % 120))] = f.value ^ 0x55;
          await judge(Buffer.concat([bytes.subarray(0, Math.max(cut, bytes.length - 150)), tail]));
          await judge(bytes);
        },
      ),
      { seed: 77, numRuns: 300 },
    );
  }, 120_000);

  it('one part of a split archive is refused by name, from disk and from memory', async () => {
    const part = Buffer.from(base);
    const eocd = part.lastIndexOf(Buffer.from('PK\x05\x06', 'latin1'));
    part.writeUInt16LE(1, eocd + 4); // this disk's number: a second part
    fs.writeFileSync(file, part);
    await expect(readDirectory(file, 'part.zip')).rejects.toMatchObject({ code: 'INVALID_FORMAT', message: expect.stringContaining('part.zip is one part of a multi-part (split) ZIP archive') });
    await expect(fromMemory(part)).rejects.toMatchObject({ multiPart: true });
    expect((await fromMemory(base)).entries.map((e) => e.name)).toEqual(['a.txt', 'dir/', 'dir/b.bin', 'é.txt']);
  });

  it('random bytes behind an end-of-directory signature: a clean error', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), fc.uint8Array({ minLength: 18, maxLength: 60 }), async (head, rest) => {
        await judge(Buffer.concat([head, Buffer.from('PK\x05\x06', 'latin1'), rest]));
      }),
      { seed: 78, numRuns: 300 },
    );
  }, 120_000);
});

describe('XML/HTML tokenizer', () => {
  const pieces = fc.constantFrom('<', '>', '&', ';', '"', "'", '/', '=', '!', '?', '-', '[', ']', 'İ', 'ß', 'a', 'P', 'script', 'SCRIPT', '&amp;', '&constructor;', '&#0;', '&#x110000;', '<!--', '-->', '<![CDATA[', ']]>', '<p a=1>', '</p>', '<br/>', ' ', '\n', '\u0000', '\ud800');
  const soup = fc.array(fc.oneof(pieces, fc.string({ maxLength: 5 }), fc.string({ unit: 'binary', maxLength: 3 })), { maxLength: 60 }).map((a) => a.join(''));

  it('never throws, in XML or HTML mode, and keeps work bounded', () => {
    fc.assert(
      fc.property(soup, (text) => {
        let events = 0;
        const count = { open: () => void events++, close: () => void events++, text: () => void events++ };
        tokenize(text, count);
        tokenize(text, count, { html: true });
        expect(events).toBeLessThanOrEqual(4 * text.length + 4);
        expect(decodeEntities(text, true)).not.toContain('native code');
        htmlToText(text);
      }),
      { seed: 1234, numRuns: 2000 },
    );
  });

  it('whatever text stands before a <script> (İ included), what follows its end survives', () => {
    const plain = fc.array(fc.oneof(fc.constantFrom('İ', 'ı', 'ẞ', 'K', 'Å', 'ﬃ', 'a', ' '), fc.string({ unit: 'binary', maxLength: 2 })), { maxLength: 40 }).map((a) => a.join('').replace(/[<&]/g, ''));
    fc.assert(
      fc.property(plain, fc.constantFrom('script', 'SCRIPT', 'Script', 'style'), (before, tag) => {
        const texts: string[] = [];
        tokenize(`${before}<${tag}>var s = "</p>";</${tag}>AFTER-THE-END`, { text: (t) => texts.push(t) }, { html: true });
        expect(texts[texts.length - 1]).toBe('AFTER-THE-END');
      }),
      { seed: 4321, numRuns: 1000 },
    );
  });
});

describe('CSV delimiter sniffer', () => {
  it('any sample gives one of the candidates', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (sample) => {
        expect([...DELIMITER_CANDIDATES]).toContain(sniffDelimiter(sample));
      }),
      { seed: 55, numRuns: 2000 },
    );
  });

  it('a consistent table (cells may quote the other delimiters) gives its own delimiter', () => {
    const bare = fc.stringMatching(/^[A-Za-z0-9 .éİ-]{1,8}$/);
    const quoted = fc.array(fc.constantFrom('a', ',', ';', '\t', '|', ' ', 'İ'), { minLength: 1, maxLength: 6 }).map((c) => `"${c.join('')}"`);
    fc.assert(
      fc.property(fc.constantFrom(...DELIMITER_CANDIDATES), fc.integer({ min: 2, max: 6 }), fc.integer({ min: 2, max: 12 }), fc.infiniteStream(fc.oneof(bare, quoted)), fc.boolean(), (delimiter, columns, rows, cells, crlf) => {
        const it = cells[Symbol.iterator]();
        const lines = Array.from({ length: rows }, () => Array.from({ length: columns }, () => it.next().value as string).join(delimiter));
        expect(sniffDelimiter(`${lines.join(crlf ? '\r\n' : '\n')}\n`)).toBe(delimiter);
      }),
      { seed: 66, numRuns: 1000 },
    );
  });
});

// The sample of real git's view above needs git itself.
execFileSync('git', ['--version']);
