/**
 * Issue 31, "outside tests also found": files named behind an `@` (or `<`) that the argument policy
 * did not see. binutils' response files (`strings @resp.txt`, whose contents are more arguments:
 * names outside the zone), and every curl form that reads a file: `name@FILE` (--url-query,
 * --data-urlencode, --variable), `@FILE` (-d, --data-binary, --json, -H, -w), `name=@FILE`,
 * `name=<FILE`, a quoted `name=@"FILE"` and `headers=@FILE` (-F). In validated mode the argument
 * policy is the only wall: each must be refused there; in the kernel modes refused or confined. The
 * arena checks afterwards that nothing outside the zone was read.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { expectRan, expectRefused, makeArena, MODES, SECRET, type Arena } from './exec-harness.js';

/** A listener on loopback recording every request body: what curl would have sent out. */
let server: http.Server;
let url = '';
const received: string[] = [];
beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push(`${req.url ?? ''}\n${JSON.stringify(req.headers)}\n${body}`);
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(() => server.close());

type Case = [string, (O: string, a: Arena) => string[]];

const CURL: Case[] = [
  ['--url-query x@/abs', (O) => ['--url-query', `x@${O}/secret.txt`]],
  ['--url-query @/abs', (O) => ['--url-query', `@${O}/secret.txt`]],
  ['--url-query +x@/abs', (O) => ['--url-query', `+x@${O}/secret.txt`]],
  ['--data-urlencode x@/abs', (O) => ['--data-urlencode', `x@${O}/secret.txt`]],
  ['--data-urlencode x@../.. (climbing)', (O, a) => ['--data-urlencode', `x@${a.rel(`${O}/secret.txt`)}`]],
  ['--data-urlencode=x@/abs (attached)', (O) => [`--data-urlencode=x@${O}/secret.txt`]],
  ['--data-urlencode x@link (a link in the zone leading out)', () => ['--data-urlencode', 'x@out-link/secret.txt']],
  ['-d @/abs', (O) => ['-d', `@${O}/secret.txt`]],
  ['-d@/abs (attached)', (O) => [`-d@${O}/secret.txt`]],
  ['--data-binary @/abs', (O) => ['--data-binary', `@${O}/secret.txt`]],
  ['--data-ascii @/abs', (O) => ['--data-ascii', `@${O}/secret.txt`]],
  ['--json @/abs', (O) => ['--json', `@${O}/secret.txt`]],
  ['-F f=@/abs', (O) => ['-F', `f=@${O}/secret.txt`]],
  ['-F f=</abs', (O) => ['-F', `f=<${O}/secret.txt`]],
  ['-F f=@"/abs" (quoted)', (O) => ['-F', `f=@"${O}/secret.txt"`]],
  ['-F f=@"/abs";type=text/plain', (O) => ['-F', `f=@"${O}/secret.txt";type=text/plain`]],
  ['-F f=x;headers=@/abs', (O) => ['-F', `f=x;headers=@${O}/secret.txt`]],
  ['-F f=@a.txt;headers=</abs', (O) => ['-F', `f=@a.txt;headers=<${O}/secret.txt`]],
  ['-H @/abs (headers from a file)', (O) => ['-H', `@${O}/secret.txt`]],
  ['-w @/abs (write-out format from a file)', (O) => ['-w', `@${O}/secret.txt`]],
  ['--variable x@/abs', (O) => ['--variable', `x@${O}/secret.txt`]],
  ['-T /abs', (O) => ['-T', `${O}/secret.txt`]],
  ['-K resp (a config file can name any file)', () => ['-K', 'curlrc.txt']],
  ['--config=resp', () => ['--config=curlrc.txt']],
];

describe.each(MODES)('%s mode', (mode) => {
  let a: Arena;
  afterEach(() => {
    a.finish();
    const sent = received.splice(0).join('\n');
    expect(sent, 'the secret reached the listener').not.toContain(SECRET);
  });

  const setup = () => {
    a = makeArena(mode, { network_mode: 'all' });
    a.put('a.txt', 'in the zone\n');
    a.put('resp.txt', `${a.outside}/secret.txt\n`);
    a.put('resp-n.txt', `-n 4 ${a.outside}/secret.txt\n`);
    a.put('curlrc.txt', `url = "file://${a.outside}/secret.txt"\n`);
    a.put('@listed', `${a.outside}/secret.txt\n`);
    fs.symlinkSync(a.outside, `${a.zone}/out-link`);
    return a;
  };

  it.each([
    ['strings @resp.txt', ['@resp.txt']],
    ['strings @./resp.txt', ['@./resp.txt']],
    ['strings -n 4 @resp-n.txt (options in the response file)', ['-n', '4', '@resp-n.txt']],
    ['strings -n @resp.txt (a response file as an option value)', ['-n', '@resp.txt', 'a.txt']],
  ])('%s: refused in validated mode, confined elsewhere', async (_what, args) => {
    setup();
    const r = await a.exec({ zone: 'storage', cmd: 'strings', args });
    if (mode === 'validated') expectRefused(r, 'ARGUMENT_FORBIDDEN');
    else if (r.success) expect(JSON.stringify(r.data)).not.toContain(SECRET);
  });

  it('a glob never turns a file named @listed into a response file; a plain file still works', async () => {
    setup();
    const r = await a.exec({ zone: 'storage', cmd: 'strings', args: ['@list*'] });
    const d = expectRan(r);
    expect(String(d.stdout)).toContain(a.outside); // the file's own text, not the file it names
    expect(String(d.stdout)).not.toContain(SECRET);
    expect(String(expectRan(await a.exec({ zone: 'storage', cmd: 'strings', args: ['a.txt'] })).stdout)).toContain('in the zone');
  });

  it.each(CURL)('curl %s: refused', async (_what, args) => {
    setup();
    expectRefused(await a.exec({ zone: 'storage', cmd: 'curl', args: [...args(a.outside, a), '-o', 'out.txt', url] }));
  });

  it('curl still sends a file of the zone (-d @a.txt, --data-urlencode x@a.txt, -F f=@a.txt) and an e-mail-like value', async () => {
    setup();
    for (const args of [['-d', '@a.txt'], ['--data-urlencode', 'x@a.txt'], ['-F', 'f=@a.txt;type=text/plain'], ['-u', 'me@example.com:pw']]) {
      expectRan(await a.exec({ zone: 'storage', cmd: 'curl', args: ['-s', ...args, '-o', 'out.txt', url] }));
    }
    // --data-urlencode sends it encoded.
    expect(received.filter((r) => r.replace(/%20|\+/g, ' ').includes('in the zone')).length, received.join('\n---\n')).toBe(3);
  });
});
