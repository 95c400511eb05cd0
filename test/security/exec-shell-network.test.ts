/**
 * Shell metacharacters (there is no shell: refused where they can only be a mistake, harmless
 * where they are the command's own language) and network rules (URLs, curl/wget GET-only in
 * network_mode "safe", the -o requirement judged by options, not substrings), in both modes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectOk, expectRan, expectRefused, makeArena, MODES, type Arena } from './exec-harness.js';

const DEAD = 'http://127.0.0.1:9/x'; // connection refused at once: proves a call got past the policy without a network

describe.each(MODES)('%s mode', (mode) => {
  let a: Arena;
  const open = (valves: Record<string, unknown> = {}) => {
    a = makeArena(mode, valves);
    a.put('a.txt', 'alpha\nbeta\n');
    a.put('x/keep.txt', 'keep\n');
  };
  afterEach(() => a.finish());

  describe('shell metacharacters', () => {
    beforeEach(() => open());
    const zoneIntact = () => {
      expect(fs.readFileSync(path.join(a.zone, 'x/keep.txt'), 'utf8')).toBe('keep\n');
      expect(fs.readFileSync(path.join(a.zone, 'a.txt'), 'utf8')).toBe('alpha\nbeta\n');
      expect(fs.readdirSync(a.zone).sort()).toEqual(['a.txt', 'x']);
    };
    const refused: [string, string[]][] = [
      ['cat', ['a.txt; rm -rf x']],
      ['cat', ['a.txt', ';', 'rm', '-rf', 'x']],
      ['cat', ['$(id)']],
      ['cat', ['${HOME}']],
      ['cat', ['`id`']],
      ['cat', ['a.txt && rm -rf x']],
      ['cat', ['a.txt || rm -rf x']],
      ['cat', ['a.txt | sh']],
      ['cat', ['a.txt > x/keep.txt']],
      ['cat', ['a.txt >> x/keep.txt']],
      ['cat', ['< /etc/passwd']],
      ['cat', ['a.txt & sleep 5']],
      ['rm', ['-rf', 'x; true']],
      ['ls', ['-la', '$(touch pwn)']],
      ['wc', ['-l', 'a.txt\nrm -rf x']],
      ['head', ['a.txt\r']],
      ['mkdir', ['pwn`id`']],
      ['touch', ['a&b']],
      ['cp', ['a.txt', 'b.txt;id']],
    ];
    it.each(refused)('%s %j → refused', async (cmd, args) => {
      const r = await a.exec({ zone: 'storage', cmd, args });
      expectRefused(r, 'ARGUMENT_FORBIDDEN');
      expect(r.error?.hint).toMatch(/stdout_file|one command|one value/);
      zoneIntact();
    });

    const harmless: [string, string[], string][] = [
      ['echo', ['a.txt; rm -rf x'], 'a.txt; rm -rf x\n'],
      ['echo', ['$(touch pwn)', '`touch pwn2`', 'a&&b', 'rm', '-rf', 'x'], '$(touch pwn) `touch pwn2` a&&b rm -rf x\n'],
      ['printf', ['%s|%s\\n', '$(id)', '${HOME}'], '$(id)|${HOME}\n'],
      ['grep', ['-c', 'alpha|$(touch pwn)', 'a.txt'], '0\n'],
      ['grep', ['-E', '-c', 'alpha|beta', 'a.txt'], '2\n'],
      ['awk', ['$1 ~ /a|b/ && NR > 1 { print "ok" }', 'a.txt'], 'ok\n'],
      ['sed', ['-n', 's/alpha/`touch pwn`; $(id) \\&\\& x/p', 'a.txt'], '`touch pwn`; $(id) && x\n'],
      ['expr', ['3', '>', '2'], '1\n'],
      ['tr', ['a;|', 'b&>'], ''],
    ];
    it.each(harmless)('%s %j runs as plain text and changes nothing', async (cmd, args, out) => {
      const d = await a.exec({ zone: 'storage', cmd, args });
      // tr reads stdin, which is closed (empty output); grep -c with no match exits 1.
      if (cmd === 'tr' || cmd === 'grep') expect(expectOk(d).stdout).toBe(out);
      else expect(expectRan(d).stdout).toBe(out);
      zoneIntact();
    });
  });

  describe('network_mode "disabled" (default)', () => {
    beforeEach(() => open());
    it.each([['curl'], ['wget']])('%s is refused', async (cmd) => {
      const r = await a.exec({ zone: 'storage', cmd, args: ['-o', 'x', 'https://example.com'] });
      expectRefused(r, 'COMMAND_FORBIDDEN');
      expect(r.error?.message).toContain('network');
    });
    const urls: [string, string[]][] = [
      ['cat', ['https://example.com/x']],
      ['grep', ['x', 'http://example.com']],
      ['sort', ['ftp://example.com/x']],
      ['tar', ['-xf', 'http://example.com/a.tar']],
      ['cp', ['file:///etc/passwd', 'p.txt']],
      ['sqlite3', ['db.sqlite', 'x', 'https://example.com']],
      ['git', ['clone', 'https://example.com/r.git']],
      ['head', ['--lines=1', 'http://example.com']],
    ];
    it.each(urls)('%s %j: URL refused', async (cmd, args) => {
      expectRefused(await a.exec({ zone: 'storage', cmd, args }), ['ARGUMENT_FORBIDDEN', 'COMMAND_FORBIDDEN']);
    });
  });

  describe('network_mode "safe": GET only', () => {
    beforeEach(() => open({ network_mode: 'safe' }));
    const posts: [string, string[]][] = [
      ['curl', ['-X', 'POST', '-o', 'o', DEAD]],
      ['curl', ['-XPOST', '-o', 'o', DEAD]],
      ['curl', ['-sXPOST', '-o', 'o', DEAD]],
      ['curl', ['--request=POST', '-o', 'o', DEAD]],
      ['curl', ['--req', 'POST', '-o', 'o', DEAD]],
      ['curl', ['-d', 'a=1', '-o', 'o', DEAD]],
      ['curl', ['-sd', 'a=1', '-o', 'o', DEAD]],
      ['curl', ['--data=a', '-o', 'o', DEAD]],
      ['curl', ['--data-binary', '@a.txt', '-o', 'o', DEAD]],
      ['curl', ['--data-urlencode', 'a=b', '-o', 'o', DEAD]],
      ['curl', ['--json', '{}', '-o', 'o', DEAD]],
      ['curl', ['-F', 'f=@a.txt', '-o', 'o', DEAD]],
      ['curl', ['--form=f=@a.txt', '-o', 'o', DEAD]],
      ['curl', ['-T', 'a.txt', DEAD]],
      ['curl', ['--upload-file', 'a.txt', DEAD]],
      ['curl', ['-u', 'user:pw', '-o', 'o', DEAD]],
      ['wget', ['--post-data=a=1', '-O', 'o', DEAD]],
      ['wget', ['--post-file', 'a.txt', '-O', 'o', DEAD]],
      ['wget', ['--method=PUT', '-O', 'o', DEAD]],
      ['wget', ['--body-data', 'x', '-O', 'o', DEAD]],
    ];
    it.each(posts)('%s %j → refused', async (cmd, args) => {
      expectRefused(await a.exec({ zone: 'storage', cmd, args }), 'ARGUMENT_FORBIDDEN');
    });

    const schemes: [string, string[]][] = [
      ['curl', ['-o', 'p', 'file:///etc/passwd']],
      ['curl', ['-o', 'p', 'FILE:///etc/passwd']],
      ['curl', ['-o', 'p', 'file:/etc/passwd']],
      ['curl', ['-o', 'p', '--url=file:///etc/passwd']],
      ['curl', ['-o', 'p', '--url', 'file:///etc/passwd']],
      ['curl', ['-o', 'p', 'dict://127.0.0.1:11211/stat']],
      ['curl', ['-o', 'p', 'gopher://127.0.0.1/x']],
      ['curl', ['-o', 'p', 'scp://host/etc/passwd']],
      ['wget', ['-O', 'p', 'file:///etc/passwd']],
    ];
    it.each(schemes)('%s %j: only http(s)/ftp(s) URLs', async (cmd, args) => {
      expectRefused(await a.exec({ zone: 'storage', cmd, args }), 'ARGUMENT_FORBIDDEN');
      expect(fs.existsSync(path.join(a.zone, 'p'))).toBe(false);
    });

    const files: [string, (O: string) => string[]][] = [
      ['curl -o /abs', (O) => ['-o', `${O}/w`, DEAD]],
      ['curl -o../x', () => ['-o../w', DEAD]],
      ['curl --output=/abs', (O) => [`--output=${O}/w`, DEAD]],
      ['curl --output-dir /abs', (O) => ['--output-dir', O, '-O', DEAD]],
      ['curl -K config', () => ['-K', 'a.txt', '-o', 'o', DEAD]],
      ['curl --config', () => ['--config=a.txt', '-o', 'o', DEAD]],
      ['curl --cookie-jar /abs', (O) => ['-c', `${O}/jar`, '-o', 'o', DEAD]],
      ['curl --trace /abs', (O) => ['--trace', `${O}/t`, '-o', 'o', DEAD]],
      ['curl -H @/abs (headers from a file)', (O) => ['-H', `@${O}/secret.txt`, '-o', 'o', DEAD]],
      ['curl --unix-socket', () => ['--unix-socket', '/run/x.sock', '-o', 'o', DEAD]],
      ['wget -O /abs', (O) => ['-O', `${O}/w`, DEAD]],
      ['wget -P /abs', (O) => ['-P', O, DEAD]],
      ['wget --directory-prefix=..', () => ['--directory-prefix=..', DEAD]],
      ['wget -e (wgetrc command)', () => ['-e', 'use_proxy=on', '-O', 'o', DEAD]],
      ['wget -i list', () => ['-i', 'a.txt', '-O', 'o']],
      ['wget -o log /abs', (O) => ['-o', `${O}/log`, '-O', 'o', DEAD]],
    ];
    it.each(files)('%s → refused', async (name, make) => {
      const cmd = name.split(' ')[0]!;
      expectRefused(await a.exec({ zone: 'storage', cmd, args: make(a.outside) }));
    });

    it('curl without -o → ARGUMENT_REQUIRED; a URL containing "-o" does not count as -o', async () => {
      for (const args of [[DEAD], [`http://127.0.0.1:9/-o/x`], ['-s', 'http://127.0.0.1:9/x?a=-o'], ['-L', '--', DEAD]]) {
        const r = await a.exec({ zone: 'storage', cmd: 'curl', args });
        expectRefused(r, 'ARGUMENT_REQUIRED');
        expect(r.error?.hint).toContain('-o');
      }
      const w = await a.exec({ zone: 'storage', cmd: 'wget', args: [`http://127.0.0.1:9/-O`] });
      expectRefused(w, 'ARGUMENT_REQUIRED');
    });

    it('curl -o, -sLo (cluster), --output=, --out (abbreviated) and stdout_file all count as an output', async () => {
      for (const [args, extra] of [
        [['-o', 'o1', DEAD], {}],
        [['-sLo', 'o2', DEAD], {}],
        [['--output=o3', DEAD], {}],
        [['--out', 'o4', DEAD], {}],
        [['-O', DEAD], {}],
        [[DEAD], { stdout_file: 'o5' }],
      ] as [string[], Record<string, unknown>][]) {
        const d = expectOk(await a.exec({ zone: 'storage', cmd: 'curl', args, timeout: 20, ...extra }));
        expect(d.returncode).not.toBe(0); // connection refused: it ran, past the policy
      }
      const w = expectOk(await a.exec({ zone: 'storage', cmd: 'wget', args: ['-qO', 'w1', DEAD], timeout: 20 }));
      expect(w.returncode).not.toBe(0);
    });
  });

  describe('network_mode "all": still no files outside the zone', () => {
    beforeEach(() => open({ network_mode: 'all' }));
    const cases: [string, (O: string) => string[]][] = [
      ['-d @/abs', (O) => ['-d', `@${O}/secret.txt`, '-o', 'o', DEAD]],
      ['--data-binary=@/abs', (O) => [`--data-binary=@${O}/secret.txt`, '-o', 'o', DEAD]],
      ['-F f=@/abs', (O) => ['-F', `f=@${O}/secret.txt`, '-o', 'o', DEAD]],
      ['-F f=</abs', (O) => ['-F', `f=<${O}/secret.txt`, '-o', 'o', DEAD]],
      ['-T /abs', (O) => ['-T', `${O}/secret.txt`, DEAD]],
      ['-T ../', () => ['-T', '../above-secret.txt', DEAD]],
      ['file:// URL', () => ['-o', 'p', 'file:///etc/passwd']],
    ];
    it.each(cases)('curl %s → refused', async (_n, make) => {
      expectRefused(await a.exec({ zone: 'storage', cmd: 'curl', args: make(a.outside) }));
    });
  });
});
