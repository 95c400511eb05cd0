// The mixed multi-user workload of the scale test and bench, and what is checked afterwards.
//
// Every write carries a unique tag (its line, file content, row value and commit message), so the
// check can tell, for each acknowledged write, that it is on disk exactly once and in exactly one
// commit; a tag found twice is a doubled write. A write whose answer never came (the instance
// was killed, the connection dropped) is not acknowledged: it may or may not be there, once.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { callFunction } from './cluster.mjs';

export const RECOVERY_MESSAGE = 'Recovered changes after an interrupted call';

/** Real git on a zone's work tree `data`, its repository beside it (`git/`, SPEC section 4). */
const git = (data, ...args) => execFileSync('git', [`--git-dir=${path.join(data, '..', 'git')}`, `--work-tree=${data}`, ...args], { cwd: data, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
const sqlite = (file, sql) => execFileSync('sqlite3', [file, sql], { encoding: 'utf8' }).trim();

/** The operations a worker cycles through; each returns what to remember when acknowledged. */
const OPS = [
  (tag) => ['shed_patch_text', { zone: 'documents', path: 'shared.md', content: tag, position: 'end', message: tag }, { kind: 'doc-line', file: 'shared.md' }],
  (tag) => ['shed_patch_text', { zone: 'storage', path: 'log.txt', content: tag, position: 'end' }, { kind: 'storage-line', file: 'log.txt' }],
  (tag) => ['shed_create_file', { zone: 'documents', path: `notes/${tag}.txt`, content: tag, message: tag }, { kind: 'doc-file', file: `notes/${tag}.txt` }],
  (tag) => ['shed_patch_text', { zone: 'group', group: 'team', path: 'shared.md', content: tag, position: 'end', message: tag }, { kind: 'group-line', file: 'shared.md' }],
  (tag) => ['shed_sqlite', { zone: 'storage', path: 'data.db', query: 'INSERT INTO t(v) VALUES (?)', params: [tag] }, { kind: 'row' }],
];

/** Creates the users' starting files (database table, group membership is set by the caller). */
export async function prepare(url, users) {
  for (const u of users) {
    const r = await callFunction(url, 'shed_sqlite', { zone: 'storage', path: 'data.db', query: 'CREATE TABLE IF NOT EXISTS t(v TEXT)' }, u);
    if (!r.envelope?.success) throw new Error(`prepare ${u}: ${JSON.stringify(r)}`);
  }
}

/**
 * `users` × `perUser` conversations, each doing `ops` writes one after another through `url`.
 * `onProgress(acked)` is called after every acknowledged write (the caller kills an instance at
 * some point). Returns every attempt: {user, tag, kind, file, ok, error}.
 */
export async function runWorkload({ url, users, perUser = 2, ops = 10, tagPrefix = 'w', onProgress = () => {}, latencies }) {
  const attempts = [];
  let acked = 0;
  await Promise.all(
    users.flatMap((user, ui) =>
      Array.from({ length: perUser }, async (_, c) => {
        for (let i = 0; i < ops; i++) {
          const tag = `${tagPrefix}-${user}-c${c}-${i}`;
          const [fn, args, what] = OPS[(i + c + ui) % OPS.length](tag);
          const r = await callFunction(url, fn, args, user, { headers: { 'X-OpenWebUI-Chat-Id': `c${c}` } });
          const ok = r.envelope?.success === true;
          latencies?.push(r.ms);
          // A write that succeeded but was not committed says why in its message ("Warning: ...").
          const warning = ok ? /Warning: (.*)$/.exec(r.envelope?.message ?? '')?.[1] : undefined;
          attempts.push({ user, tag, ...what, ok, error: ok ? undefined : (r.error ?? r.envelope?.error?.code), ...(warning ? { warning } : {}) });
          if (ok) onProgress(++acked);
        }
      }),
    ),
  );
  return attempts;
}

/**
 * Checks the storage after a run: every acknowledged write exactly once on disk and in exactly one
 * commit, nothing doubled, repositories valid and clean (of `alsoUsers` too), databases intact.
 */
export function verify(base, users, attempts, alsoUsers = []) {
  const acked = attempts.filter((a) => a.ok);
  const lost = [];
  const doubled = new Set();
  const home = (u) => path.join(base, 'users', u);
  const count = (text, tag) => text.split('\n').filter((l) => l === tag).length;
  const readOr = (f) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '');
  const groupData = path.join(base, 'groups', 'team', 'data');
  // Lines: acknowledged ones exactly once; any tag twice is doubled.
  const texts = new Map();
  const textOf = (f) => (texts.has(f) ? texts.get(f) : texts.set(f, readOr(f)).get(f));
  for (const a of attempts) {
    let file;
    if (a.kind === 'doc-line') file = path.join(home(a.user), 'Documents', 'data', a.file);
    else if (a.kind === 'storage-line') file = path.join(home(a.user), 'Storage', 'data', a.file);
    else if (a.kind === 'group-line') file = path.join(groupData, a.file);
    else if (a.kind === 'doc-file') {
      const f = path.join(home(a.user), 'Documents', 'data', a.file);
      if (a.ok && (!fs.existsSync(f) || fs.readFileSync(f, 'utf8') !== a.tag)) lost.push(a.tag);
      continue;
    } else continue;
    const n = count(textOf(file), a.tag);
    if (n > 1) doubled.add(a.tag);
    if (a.ok && n === 0) lost.push(a.tag);
  }
  // Rows.
  const integrity = [];
  // WAL's shared-memory index is not shared between hosts: on this storage databases must keep a rollback journal.
  const walDatabases = [];
  for (const u of users) {
    const db = path.join(home(u), 'Storage', 'data', 'data.db');
    if (!fs.existsSync(db)) continue;
    integrity.push(sqlite(db, 'PRAGMA integrity_check'));
    if (sqlite(db, 'PRAGMA journal_mode') === 'wal') walDatabases.push(db);
    const values = sqlite(db, 'SELECT v FROM t').split('\n');
    for (const a of attempts.filter((x) => x.kind === 'row' && x.user === u)) {
      const n = values.filter((v) => v === a.tag).length;
      if (n > 1) doubled.add(a.tag);
      if (a.ok && n === 0) lost.push(a.tag);
    }
  }
  const access = path.join(base, 'access_auth.sqlite');
  if (fs.existsSync(access)) integrity.push(sqlite(access, 'PRAGMA integrity_check'));
  // Commits: one per acknowledged Documents or group write, none twice.
  // alsoUsers: users of the takeover steps, whose histories must be valid and clean too.
  const repos = [...[...users, ...alsoUsers].map((u) => path.join(home(u), 'Documents', 'data')), groupData].filter((r) => fs.existsSync(path.join(r, '..', 'git')));
  const commitsOf = new Map();
  let recoveryCommits = 0;
  const fsck = [];
  const dirty = [];
  for (const repo of repos) {
    for (const subject of git(repo, 'log', '--format=%s').split('\n')) {
      if (subject === RECOVERY_MESSAGE) recoveryCommits++;
      commitsOf.set(subject, (commitsOf.get(subject) ?? 0) + 1);
    }
    try {
      git(repo, 'fsck', '--strict');
    } catch (err) {
      fsck.push(`${repo}: ${String(err.stderr ?? err).slice(0, 300)}`);
    }
    if (git(repo, 'status', '--porcelain') !== '') dirty.push(repo);
  }
  const versioned = acked.filter((a) => a.kind === 'doc-line' || a.kind === 'doc-file' || a.kind === 'group-line');
  const missingCommit = versioned.filter((a) => (commitsOf.get(a.tag) ?? 0) === 0).map((a) => a.tag);
  const missingCommitWhy = versioned.filter((a) => (commitsOf.get(a.tag) ?? 0) === 0).map((a) => `${a.tag}: ${a.warning ?? 'no warning'}`);
  const doubleCommit = versioned.filter((a) => (commitsOf.get(a.tag) ?? 0) > 1).map((a) => a.tag);
  return {
    attempts: attempts.length,
    acked: acked.length,
    lost,
    doubled: [...doubled],
    versioned: versioned.length,
    commitsOk: versioned.length - missingCommit.length - doubleCommit.length,
    missingCommit,
    missingCommitWhy,
    doubleCommit,
    recoveryCommits,
    fsck,
    dirty,
    integrity: integrity.every((x) => x === 'ok') ? 'ok' : integrity.join(','),
    walDatabases,
  };
}

/**
 * Quota across instances: `n` parallel writes of `size` bytes for one user under a 1 MiB quota,
 * spread over `urls`; exactly floor(1 MiB / size) fit. Returns {accepted, refused, others, diskBytes, expected}.
 */
export async function quotaRace(urls, base, user, n = 20, size = 100_000) {
  const results = await Promise.all(
    Array.from({ length: n }, (_, i) => callFunction(urls[i % urls.length], 'shed_create_file', { zone: 'storage', path: `q/f${i}.bin`, content: 'q'.repeat(size) }, user)),
  );
  const accepted = results.filter((r) => r.envelope?.success).length;
  const refused = results.filter((r) => r.envelope?.error?.code === 'QUOTA_EXCEEDED').length;
  // Any other answer, named, so a failure says what it was.
  const others = results
    .filter((r) => !r.envelope?.success && r.envelope?.error?.code !== 'QUOTA_EXCEEDED')
    .map((r) => `${r.envelope?.error?.code ?? r.error}: ${String(r.envelope?.error?.message ?? '').slice(0, 300)} (${Math.round(r.ms)} ms)`);
  const dir = path.join(base, 'users', user, 'Storage', 'data', 'q');
  const diskBytes = fs.existsSync(dir) ? fs.readdirSync(dir).reduce((s, f) => s + fs.statSync(path.join(dir, f)).size, 0) : 0;
  return { accepted, refused, others, diskBytes, expected: Math.floor((1024 * 1024) / size) };
}
