/**
 * The append-only line log (the undo's turn records): readers take only what was added since they
 * looked, a torn last line (a writer killed mid-write) is never read and is cut off by the next
 * writer, a replaced file is read again whole, and a link at the log's name is never followed.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildSync } from 'esbuild';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { appendLines, readNewLines, rewriteLines } from '../../src/core/base/fs/line-log.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-linelog-'));
  file = path.join(dir, 'turns.log');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('line log', () => {
  it('reads what was added since the cursor, nothing twice', () => {
    const none = readNewLines(file);
    expect([none.cursor.ino, none.cursor.offset, none.fresh, none.lines]).toEqual([0, 0, true, []]);
    appendLines(file, ['{"a":1}', '{"a":2}']);
    const first = readNewLines(file);
    expect(first.fresh).toBe(true);
    expect(first.lines).toEqual(['{"a":1}', '{"a":2}']);
    expect(readNewLines(file, first.cursor)).toEqual({ cursor: first.cursor, fresh: false, lines: [] });
    appendLines(file, ['{"a":3}']);
    const second = readNewLines(file, first.cursor);
    expect([second.cursor.ino, second.cursor.offset, second.fresh, second.lines]).toEqual([first.cursor.ino, fs.statSync(file).size, false, ['{"a":3}']]);
  });

  it('a torn last line is not read; the next writer cuts it off, and its line is read whole', () => {
    appendLines(file, ['{"a":1}']);
    const before = readNewLines(file);
    fs.appendFileSync(file, '{"a":"torn by a kil'); // a writer killed mid-line
    expect(readNewLines(file, before.cursor).lines).toEqual([]);
    expect(readNewLines(file).lines).toEqual(['{"a":1}']);
    appendLines(file, ['{"a":2}']);
    expect(fs.readFileSync(file, 'utf8')).toBe('{"a":1}\n{"a":2}\n');
    expect(readNewLines(file, before.cursor).lines).toEqual(['{"a":2}']);
  });

  it('a file with no newline at all is cut to nothing before the first line', () => {
    fs.writeFileSync(file, 'x'.repeat(200_000)); // longer than one backward read
    appendLines(file, ['{"a":1}']);
    expect(fs.readFileSync(file, 'utf8')).toBe('{"a":1}\n');
  });

  it('another file at the same inode (a log replaced twice meanwhile) is read again from its start', () => {
    appendLines(file, ['{"turn":"a"}', '{"turn":"b"}']);
    const old = readNewLines(file);
    // Rewritten in place: the same inode, longer, other lines (what a reused inode number looks like).
    fs.writeFileSync(file, '{"turn":"x"}\n{"turn":"y"}\n{"turn":"z"}\n');
    expect(fs.statSync(file).ino).toBe(old.cursor.ino);
    const again = readNewLines(file, old.cursor);
    expect(again.fresh).toBe(true);
    expect(again.lines).toEqual(['{"turn":"x"}', '{"turn":"y"}', '{"turn":"z"}']);
  });

  it('a replaced file is read again from its start', () => {
    appendLines(file, ['{"a":1}', '{"a":2}', '{"a":3}']);
    const old = readNewLines(file);
    rewriteLines(file, ['{"a":3}']);
    const again = readNewLines(file, old.cursor);
    expect(again.fresh).toBe(true);
    expect(again.lines).toEqual(['{"a":3}']);
    expect(fs.readdirSync(dir)).toEqual(['turns.log']); // no temp left
  });

  it('a link at the log name is neither read nor written through', () => {
    const target = path.join(dir, 'elsewhere');
    fs.writeFileSync(target, '{"forged":1}\n');
    fs.symlinkSync(target, file);
    expect(readNewLines(file).lines).toEqual([]);
    expect(() => appendLines(file, ['{"a":1}'])).toThrow();
    expect(fs.readFileSync(target, 'utf8')).toBe('{"forged":1}\n');
  });

  it('writers killed at random moments leave only whole lines, and the next append is read whole', async () => {
    // A child appends up to 40 lines of 64 KiB, then waits; it is killed (SIGKILL) at a random moment, 10
    // times. Little disk traffic on purpose: other suites' timings run beside this one (the torn tail
    // itself is the test above).
    const mod = path.resolve('src/core/base/fs/line-log.ts');
    const script = path.join(dir, 'writer.mjs');
    buildSync({
      stdin: { contents: `import { appendLines } from ${JSON.stringify(mod)};\nconst big = 'y'.repeat(64 * 1024);\nsetInterval(() => {}, 1000);\nfor (let i = 0; i < 40; i++) appendLines(process.argv[2], [JSON.stringify({ i, big })]);\n`, resolveDir: dir, loader: 'ts' },
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: script,
      logLevel: 'silent',
    });
    for (let round = 0; round < 10; round++) {
      const p = spawn(process.execPath, [script, file], { stdio: 'ignore' });
      const grown = fs.existsSync(file) ? fs.statSync(file).size : 0;
      // Killed once it wrote something (and at a random moment after).
      for (let i = 0; i < 3000 && (!fs.existsSync(file) || fs.statSync(file).size <= grown); i++) await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, Math.random() * 30));
      p.kill('SIGKILL');
      await new Promise((r) => p.once('exit', r));
      for (const line of readNewLines(file).lines) expect(() => JSON.parse(line)).not.toThrow();
      if (fs.statSync(file).size > 4 * 1024 * 1024) rewriteLines(file, []); // keep the file small
    }
    const { cursor } = readNewLines(file);
    appendLines(file, ['{"last":true}']);
    expect(readNewLines(file, cursor).lines).toEqual(['{"last":true}']);
  }, 300_000);
});
