/**
 * A group's ownership records are read before and after every command in it (the guard, the identity
 * sync, the folders taken over). The answer is kept while the access database holds exactly the bytes
 * it was read from: any write, by this process, another one or another instance, is seen at the next
 * question, even one that keeps the file's size, inode and times (a digest of the bytes decides,
 * never a time nor an inode number that a later write may repeat).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { allRecords, deniedRecords, setRecord } from '../../src/core/services/groups/access.js';
import { accessDbPath } from '../../src/core/services/groups/accessdb.js';
import { groupShed } from './setup.js';

const g = { zone: 'group', group: 'team' };
let s: Awaited<ReturnType<typeof groupShed>>;

beforeEach(async () => {
  s = await groupShed();
  for (let i = 0; i < 5; i++) expect((await s.call('shed_create_file', { ...g, path: `f${i}.txt`, content: `${i}\n`, mode: 'owner' })).success).toBe(true);
});
afterEach(() => s.cleanup());

const sql = (statement: string) => {
  const r = spawnSync('sqlite3', [accessDbPath(s.base), statement], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
};

describe('the records kept between questions', () => {
  it('a write by this process is seen at the next question', async () => {
    expect((await allRecords(s.base, 'team')).map((r) => r.path)).toEqual(['f0.txt', 'f1.txt', 'f2.txt', 'f3.txt', 'f4.txt']);
    await setRecord(s.base, 'team', 'f5.txt', 'bob', 'owner_ro');
    expect((await allRecords(s.base, 'team')).map((r) => r.path)).toContain('f5.txt');
    expect((await deniedRecords(s.base, 'team', 'alice')).map((r) => r.path)).toEqual(['f5.txt']);
  });

  it('another process\'s change in place, same size and times restored, is seen', async () => {
    expect((await deniedRecords(s.base, 'team', 'bob')).map((r) => r.path)).toHaveLength(5);
    const file = accessDbPath(s.base);
    const before = fs.statSync(file, { bigint: true });
    // Same length value: the page changes in place, the file keeps its size; its mtime is set back to the nanosecond.
    sql("UPDATE file_ownership SET owner_id = 'bob' WHERE file_path = 'f2.txt'");
    const ns = before.mtimeNs;
    expect(spawnSync('touch', ['-m', '-d', `@${ns / 1_000_000_000n}.${String(ns % 1_000_000_000n).padStart(9, '0')}`, file]).status).toBe(0);
    const after = fs.statSync(file, { bigint: true });
    expect([after.size, after.ino, after.mtimeNs]).toEqual([before.size, before.ino, before.mtimeNs]);
    expect((await deniedRecords(s.base, 'team', 'bob')).map((r) => r.path)).toEqual(['f0.txt', 'f1.txt', 'f3.txt', 'f4.txt']);
    expect((await allRecords(s.base, 'team')).find((r) => r.path === 'f2.txt')?.owner).toBe('bob');
  });

  it('a database removed, then made again by another process, is read again', async () => {
    expect(await allRecords(s.base, 'team')).toHaveLength(5);
    const file = accessDbPath(s.base);
    const copy = path.join(path.dirname(file), 'copy.sqlite');
    fs.copyFileSync(file, copy);
    fs.rmSync(file);
    expect(await allRecords(s.base, 'team')).toEqual([]);
    fs.copyFileSync(copy, file);
    sql("DELETE FROM file_ownership WHERE file_path = 'f4.txt'");
    expect(await allRecords(s.base, 'team')).toHaveLength(4);
  });

  it('each caller gets its own answer to change', async () => {
    const first = await allRecords(s.base, 'team');
    first[0]!.owner = 'mallory';
    first.pop();
    const again = await allRecords(s.base, 'team');
    expect(again).toHaveLength(5);
    expect(again[0]!.owner).toBe('alice');
  });
});
