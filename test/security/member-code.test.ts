/**
 * No member's code runs in another member's call (issue 31, classes 10 and 11; SPEC 11).
 *
 * Class 10: bob plants Python that would run at the start of any Python in the group (a
 * `sitecustomize.py`, a `usercustomize.py`, a `.pth` file, a module shadowing `json`, a forged
 * `__pycache__/json.cpython-3X.pyc`), at the group root and beside alice's script. Alice's
 * shed_run_python (code= and path=) must not run it: the marker file the planted code would write
 * is absent, and alice's own file (mode owner) is unchanged.
 *
 * Class 11: bob makes a `.git` in the group with `diff.external`, `core.pager`, a filter named in
 * `.gitattributes`, hooks and an include; alice's shell script runs `git diff`, `git log`, `git
 * status` there. Nothing of it runs (marker absent). `git diff --no-index` still works.
 *
 * In her own Storage, alice's script still imports her own module beside it (what personal zones keep).
 * Both kernel modes.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Result } from '../helpers/shed.js';
import { groupShed, read } from '../groups/setup.js';

const ON = { allow_python: true, allow_shell: true };
const g = { zone: 'group', group: 'team' } as const;
const ORIGINAL = 'alice wrote this\n';
const MARK = 'PLANTED_RAN';

type Group = Awaited<ReturnType<typeof groupShed>>;
const ok = (r: Result) => expect(r.success, JSON.stringify(r.error ?? r.data)).toBe(true);
const PY_TAG = execFileSync('python3', ['-c', 'import sys; print(sys.implementation.cache_tag)'], { encoding: 'utf8' }).trim();

/** Python that, if it ever runs in alice's call, leaves a marker and rewrites alice's file. */
const PAYLOAD = `import os\ntry:\n    open(${JSON.stringify(MARK)}, 'w').write('ran')\nexcept Exception:\n    pass\ntry:\n    open('mine.txt', 'w').write('EVIL')\nexcept Exception:\n    pass\n`;

describe.each(['bwrap', 'landlock'] as const)('%s: class 10, no member\'s Python in another\'s call', (sandbox) => {
  let t: Group;
  beforeEach(async () => {
    t = await groupShed({ sandbox, ...ON });
    ok(await t.call('shed_create_file', { ...g, path: 'mine.txt', content: ORIGINAL, mode: 'owner' }));
    ok(await t.call('shed_create_file', { ...g, path: 'tools/run.py', content: 'import json\nprint(json.dumps({"ok": 1}))\n', mode: 'owner' }));
  });
  afterEach(() => t.cleanup());

  /** Bob plants `files` (by his own script, as he could), then alice runs Python both ways. */
  const plantedNeverRuns = async (files: Record<string, string>) => {
    const plant = `import os\nfor rel, text in ${JSON.stringify(files)}.items():\n    os.makedirs(os.path.dirname(rel) or '.', exist_ok=True)\n    open(rel, 'w').write(text)\n`;
    ok(await t.call('shed_run_python', { ...g, code: plant, timeout: 60 }, { user: 'bob' }));
    for (const rel of Object.keys(files)) expect(fs.existsSync(t.groupPath(rel)), `${rel} planted`).toBe(true);
    for (const call of [{ code: 'import json\nprint(json.dumps({"ok": 1}))\n' }, { path: 'tools/run.py' }]) {
      const r = await t.call('shed_run_python', { ...g, ...call, timeout: 60 });
      ok(r);
      expect(r.data!.returncode, String(r.data!.stderr)).toBe(0);
      expect(String(r.data!.stdout)).toContain('{"ok": 1}');
      expect(fs.existsSync(t.groupPath(MARK)), `planted code ran in alice's ${Object.keys(call)[0]}= call`).toBe(false);
      expect(read(t.groupPath('mine.txt'))).toBe(ORIGINAL);
    }
  };

  it('the disclosed instance: sitecustomize.py at the group root', async () => {
    await plantedNeverRuns({ 'sitecustomize.py': PAYLOAD });
  });

  it('usercustomize.py at the root and beside the script', async () => {
    await plantedNeverRuns({ 'usercustomize.py': PAYLOAD, 'tools/usercustomize.py': PAYLOAD, 'tools/sitecustomize.py': PAYLOAD });
  });

  it('a module shadowing json, at the root and beside the script', async () => {
    const shadow = `${PAYLOAD}def dumps(x):\n    return 'SHADOW'\n`;
    await plantedNeverRuns({ 'json.py': shadow, 'tools/json.py': shadow });
  });

  it('a .pth file at the root and beside the script', async () => {
    const pth = `import os; open(${JSON.stringify(MARK)}, 'w').write('ran')\n`;
    await plantedNeverRuns({ 'evil.pth': pth, 'tools/evil.pth': pth });
  });

  it('a forged __pycache__ for json, at the root and beside the script', async () => {
    // Compiled by the test from the payload, with a source json.py beside it so it looks valid.
    const src = path.join(t.base, 'forge');
    fs.mkdirSync(src);
    fs.writeFileSync(path.join(src, 'json.py'), `${PAYLOAD}def dumps(x):\n    return 'SHADOW'\n`);
    execFileSync('python3', ['-c', `import py_compile; py_compile.compile(${JSON.stringify(path.join(src, 'json.py'))})`]);
    const pyc = fs.readFileSync(path.join(src, '__pycache__', `json.${PY_TAG}.pyc`)).toString('latin1');
    const stub = fs.readFileSync(path.join(src, 'json.py'), 'utf8');
    // Written by bob's script (his files); the pyc's header names the source's mtime and size, kept below.
    const plant = `import os\nfor d in ['', 'tools/']:\n    os.makedirs(d + '__pycache__', exist_ok=True)\n    open(d + '__pycache__/json.${PY_TAG}.pyc', 'wb').write(${JSON.stringify(pyc)}.encode('latin1'))\n    open(d + 'json.py', 'w').write(${JSON.stringify(stub)})\n    os.utime(d + 'json.py', (${Math.floor(fs.statSync(path.join(src, 'json.py')).mtimeMs / 1000)}, ${Math.floor(fs.statSync(path.join(src, 'json.py')).mtimeMs / 1000)}))\n`;
    ok(await t.call('shed_run_python', { ...g, code: plant, timeout: 60 }, { user: 'bob' }));
    await plantedNeverRuns({});
  });
});

describe.each(['bwrap', 'landlock'] as const)('%s: class 11, no member\'s git configuration in another\'s call', (sandbox) => {
  let t: Group;
  beforeEach(async () => {
    t = await groupShed({ sandbox, ...ON });
    ok(await t.call('shed_create_file', { ...g, path: 'notes.txt', content: ORIGINAL, mode: 'owner' }));
  });
  afterEach(() => t.cleanup());

  /** Bob makes a repository in the group whose configuration runs `sh -c` (what his own git made, then hand-edited). */
  const plantRepo = async () => {
    const root = t.groupPath();
    execFileSync('git', ['init', '-q', root]);
    execFileSync('git', ['-C', root, 'add', 'notes.txt']);
    execFileSync('git', ['-C', root, '-c', 'user.name=bob', '-c', 'user.email=b@x', 'commit', '-qm', 'x']);
    fs.appendFileSync(t.groupPath('notes.txt'), 'changed\n');
    const run = `sh -c 'echo ran > ${MARK}'`;
    fs.appendFileSync(
      path.join(root, '.git', 'config'),
      `[diff]\n\texternal = "${run}"\n[core]\n\tpager = "${run}"\n\tfsmonitor = "${run}"\n[filter "x"]\n\tclean = "${run}"\n\tsmudge = "${run}"\n[diff "x"]\n\ttextconv = "${run}"\n[include]\n\tpath = ../evil.cfg\n[alias]\n\tst = "!${run}"\n`,
    );
    fs.writeFileSync(path.join(root, 'evil.cfg'), `[core]\n\tpager = "${run}"\n`);
    fs.writeFileSync(path.join(root, '.gitattributes'), '* filter=x diff=x\n');
    for (const hook of ['post-checkout', 'pre-commit', 'post-index-change', 'reference-transaction']) {
      fs.writeFileSync(path.join(root, '.git', 'hooks', hook), `#!/bin/sh\necho ran > ${MARK}\n`, { mode: 0o755 });
    }
    // Checked with the host's own git: this configuration does run sh (so the test's marker is meaningful).
    execFileSync('git', ['-C', root, 'diff'], { env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: t.base } });
    expect(fs.existsSync(t.groupPath(MARK)), 'the planted configuration runs under a plain git').toBe(true);
    fs.rmSync(t.groupPath(MARK));
  };

  it('the disclosed instance and its variants: git diff, log, status, show, an alias, in the root and a sub-folder', async () => {
    await plantRepo();
    fs.mkdirSync(t.groupPath('sub'));
    const script = 'git diff; git diff --stat; git log -p; git status; git show; git st; git add -A; (cd sub && git diff); echo done';
    const r = await t.call('shed_run_shell', { ...g, script, timeout: 60 });
    ok(r);
    expect(String(r.data!.stdout)).toContain('done');
    expect(fs.existsSync(t.groupPath(MARK)), "bob's git configuration ran in alice's call").toBe(false);
    expect(String(r.data!.stderr)).toMatch(/not a git repository/);
  });

  it('git diff --no-index needs no repository and works', async () => {
    await plantRepo();
    ok(await t.call('shed_create_file', { ...g, path: 'b.txt', content: 'other\n' }));
    const r = await t.call('shed_run_shell', { ...g, script: 'git diff --no-index notes.txt b.txt; echo rc=$?', timeout: 60 });
    ok(r);
    expect(String(r.data!.stdout)).toMatch(/^\+other/m);
    expect(String(r.data!.stdout)).toContain('rc=1');
    expect(fs.existsSync(t.groupPath(MARK))).toBe(false);
  });
});

describe.each(['bwrap', 'landlock'] as const)('%s: what personal zones keep', (sandbox) => {
  it("a user's own module beside her script still imports in her Storage", async () => {
    const t = await groupShed({ sandbox, ...ON });
    try {
      ok(await t.call('shed_create_file', { zone: 'storage', path: 'tools/helper.py', content: 'VALUE = 42\n' }));
      ok(await t.call('shed_create_file', { zone: 'storage', path: 'tools/run.py', content: 'import helper\nprint(helper.VALUE)\n' }));
      const r = await t.call('shed_run_python', { zone: 'storage', path: 'tools/run.py', timeout: 60 });
      ok(r);
      expect(r.data!.stdout).toBe('42\n');
    } finally {
      t.cleanup();
    }
  });
});
