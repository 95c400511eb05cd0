/**
 * git run as a real program (Storage, in a kernel sandbox) starts nothing its repository's
 * configuration names: a user may write `.git/config`, hooks and `.gitattributes` of their own
 * repository, and each of these would otherwise run a shell command of theirs (`core.fsmonitor` on
 * `git status`, hooks on `git commit`, an alias with `!`, a filter driver on `git add`,
 * `diff.external` on `git diff`). The environment overrides what it can; the kernel refuses every
 * other program (only git's own are executable), in bwrap as in landlock mode.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectRan, makeArena } from './exec-harness.js';

const CANARIES = ['FSMONITOR', 'HOOK', 'ALIAS', 'FILTER', 'EXTERNAL', 'PAGER', 'EDITOR', 'SSH', 'TEXTCONV'];

const CONFIG = `[core]
\trepositoryformatversion = 0
\tbare = false
\tfsmonitor = "touch FSMONITOR"
\tpager = touch PAGER
\teditor = touch EDITOR
\tsshCommand = touch SSH
[user]
\tname = A
\temail = a@example.org
[alias]
\tst = "!touch ALIAS"
[filter "evil"]
\tclean = touch FILTER
\tsmudge = touch FILTER
[diff "evil"]
\ttextconv = touch TEXTCONV
[diff]
\texternal = touch EXTERNAL
`;

describe.each(['bwrap', 'landlock'] as const)('%s: git in Storage runs nothing its configuration names', (mode) => {
  it('core.fsmonitor, hooks, an alias with !, filter and diff drivers, diff.external, pager, editor', async () => {
    const a = makeArena(mode);
    try {
      expectRan(await a.exec({ zone: 'storage', cmd: 'git', args: ['init', '-q'] }));
      a.put('.git/config', CONFIG);
      for (const hook of ['pre-commit', 'commit-msg', 'post-commit', 'post-index-change', 'reference-transaction']) a.put(`.git/hooks/${hook}`, '#!/bin/sh\ntouch HOOK\n', 0o755);
      a.put('.gitattributes', '*.txt filter=evil diff=evil\n');
      a.put('a.txt', 'hello\n');
      const runs = [['status'], ['add', 'a.txt', '.gitattributes'], ['commit', '-q', '-m', 'first'], ['st'], ['diff', 'HEAD'], ['log', '-p']];
      for (const args of runs) await a.exec({ zone: 'storage', cmd: 'git', args });
      a.put('a.txt', 'changed\n');
      await a.exec({ zone: 'storage', cmd: 'git', args: ['diff'] });
      await a.exec({ zone: 'storage', cmd: 'git', args: ['commit', '-q', '-am', 'second'] });
      for (const canary of CANARIES) expect(fs.existsSync(path.join(a.zone, canary)), `${canary} was created: a configured command ran`).toBe(false);
      // git itself still works: both commits are there.
      const log = expectRan(await a.exec({ zone: 'storage', cmd: 'git', args: ['log', '--format=%s'] }));
      expect(String(log.stdout).trim().split('\n')).toEqual(['second', 'first']);
    } finally {
      a.finish();
    }
  });
});
