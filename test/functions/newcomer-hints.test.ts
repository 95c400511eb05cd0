/**
 * What a newcomer's model hit and could not fix from the answer alone (issue 32, the last list):
 * grep without a match and diff of different files read "FAILED ... see stderr" over an empty
 * stderr; a bash script in shed_run_shell got "[[: not found"; zone="docs" got no "did you mean";
 * PATH_STARTS_WITH_ZONE named allow_zone_in_path to shed_link_create, which refused it.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { bashisms } from '../../src/functions/shell-dialect.js';

let s: Shed;
afterEach(() => s?.cleanup());

describe('exit codes that are answers', () => {
  it('grep with no match, diff and cmp of different files, test: what the code means, not "FAILED ... see stderr"', async () => {
    s = makeShed();
    await s.call('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'x\n' });
    await s.call('shed_create_file', { zone: 'storage', path: 'b.txt', content: 'y\n' });
    const grep = await s.call('shed_exec', { zone: 'storage', cmd: 'grep', args: ['zzz', 'a.txt'] });
    expect(grep.data).toMatchObject({ returncode: 1, stderr: '' });
    expect(grep.message).toBe('grep ended with exit code 1: no line matched; for grep that is an answer, not an error.');
    const diff = await s.call('shed_exec', { zone: 'storage', cmd: 'diff', args: ['a.txt', 'b.txt'] });
    expect(diff.data).toMatchObject({ returncode: 1, stdout: '1c1\n< x\n---\n> y\n' });
    expect(diff.message).toContain('the files differ');
    expect(diff.message).not.toContain('FAILED');
    const cmp = await s.call('shed_exec', { zone: 'storage', cmd: 'cmp', args: ['a.txt', 'b.txt'] });
    expect(cmp.message).toContain('cmp ended with exit code 1: the files differ');
    const same = await s.call('shed_exec', { zone: 'storage', cmd: 'diff', args: ['a.txt', 'a.txt'] });
    expect(same.message).toBe('diff finished (exit code 0).');
  });

  it('a real error keeps FAILED: grep exit code 2 on a missing file', async () => {
    s = makeShed();
    const r = await s.call('shed_exec', { zone: 'storage', cmd: 'grep', args: ['x', 'missing.txt'] });
    expect(r.data!.returncode).toBe(2);
    expect(r.message).toMatch(/^grep FAILED with exit code 2; see stderr\./);
  });
});

describe('shed_run_shell: a last command whose code is an answer', () => {
  it('a script ending with a grep that matches nothing: what the code means, not FAILED', async () => {
    s = makeShed({ allow_shell: true });
    await s.call('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'x\n' });
    const r = await s.call('shed_run_shell', { zone: 'storage', script: 'sort a.txt > b.txt\ngrep -c zzz b.txt' });
    expect(r.data).toMatchObject({ returncode: 1, stderr: '' });
    expect(r.message).toMatch(/^The shell script ended with exit code 1\. Its last command, grep, ended with exit code 1: no line matched; for grep that is an answer, not an error\. Files changed: .*b\.txt/);
    const real = await s.call('shed_run_shell', { zone: 'storage', script: 'grep x missing.txt' });
    expect(real.message).toMatch(/^The shell script FAILED with exit code 2; see stderr\./);
  });
});

describe('shed_run_shell: bash syntax in POSIX sh', () => {
  it('[[ ]] gets "this is POSIX sh" with the POSIX spelling, not "Not installed here: [["', async () => {
    s = makeShed({ allow_shell: true });
    await s.call('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'x\n' });
    const r = await s.call('shed_run_shell', { zone: 'storage', script: 'if [[ -f a.txt ]]; then echo yes; fi' });
    expect(r.data!.stderr).toContain('[[: not found');
    expect(r.message).toContain('POSIX sh (dash), not bash');
    expect(r.message).toContain('[[ ]] → [ ] (test)');
    expect(r.message).not.toContain('Not installed here');
  });

  it('arrays and function f: a syntax error, explained', async () => {
    s = makeShed({ allow_shell: true });
    const r = await s.call('shed_run_shell', { zone: 'storage', script: 'function f { echo hi; }\nnames=(a b c)\necho ${names[1]}' });
    expect(r.data!.returncode).not.toBe(0);
    expect(r.message).toContain('POSIX sh');
    expect(r.message).toContain('function f → f() { ...; }');
  });

  it('brace expansion is taken literally by dash without an error: said even when the run ends well', async () => {
    s = makeShed({ allow_shell: true });
    const r = await s.call('shed_run_shell', { zone: 'storage', script: 'mkdir -p out/{a,b}' });
    expect(r.data!.returncode).toBe(0);
    expect(fs.existsSync(s.zonePath('storage', 'out/{a,b}'))).toBe(true);
    expect(r.message).toContain('brace expansion');
  });

  it('a POSIX script that ends well gets no note; quoted [[ and comments do not count', async () => {
    s = makeShed({ allow_shell: true });
    const r = await s.call('shed_run_shell', { zone: 'storage', script: '# [[ in a comment\necho "[[ x ]]" \'source y\'' });
    expect(r.message).toBe('The shell script finished (exit code 0).');
    expect(bashisms('[ "$a" = b ] && . ./env.sh; f() { echo "$((1 + 2))"; }; x=${y:-z}').found).toEqual([]);
    expect(bashisms('cat > a.json <<EOF\n{"a": [1,2], "b": {"c":3,"d":4}}\n[[ not code ]]\nEOF\nfind . -name "*.json" -exec cat {} \\;').found).toEqual([]);
    expect(bashisms('source env.sh; cat <<< "$x"; ls &> out; (( n++ ))').found.map((f) => f.split(' → ')[0])).toEqual(['source', 'here-string <<<', '&>', '(( ))']);
  });
});

describe('zone and path near misses', () => {
  it('INVALID_ZONE for "docs" and other near misses says "did you mean" with the corrected call', async () => {
    s = makeShed();
    const r = await s.call('shed_read', { zone: 'docs', path: 'a.txt' });
    expect(r.error!.code).toBe('INVALID_ZONE');
    expect(r.error!.details).toMatchObject({ suggested: 'documents' });
    expect(r.error!.hint).toBe('Did you mean zone="documents"? Corrected call: shed_read(zone="documents", path="a.txt")');
    for (const [wrong, right] of [['upload', 'uploads'], ['Storag', 'storage'], ['attachments', 'uploads'], ['groups', 'group'], ['my storage', 'storage']] as const) {
      const e = (await s.call('shed_tree', { zone: wrong })).error!;
      expect(e.code, wrong).toBe('INVALID_ZONE');
      expect(e.hint, wrong).toContain(`Did you mean zone="${right}"?`);
    }
    const far = (await s.call('shed_tree', { zone: 'xyzzy' })).error!;
    expect(far.hint).not.toContain('Did you mean');
    expect(far.hint).toContain('shed_tree(');
  });

  it('PATH_STARTS_WITH_ZONE names only a parameter the function takes: shed_link_create takes allow_zone_in_path', async () => {
    s = makeShed();
    await s.call('shed_create_file', { zone: 'storage', path: 'storage/a.txt', content: 'x\n', allow_zone_in_path: true });
    const refused = await s.call('shed_link_create', { zone: 'storage', path: 'storage/a.txt' });
    expect(refused.error!.code).toBe('PATH_STARTS_WITH_ZONE');
    expect(refused.error!.hint).toContain('add allow_zone_in_path=true (accepted by this function');
    const linked = await s.call('shed_link_create', { zone: 'storage', path: 'storage/a.txt', allow_zone_in_path: true });
    expect(linked.success).toBe(true);
  });
});
