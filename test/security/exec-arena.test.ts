/**
 * The attack corpus is only as good as its arena: these tests show that it notices a canary read,
 * a canary changed, a file created outside, and the secret in a response.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectOk, makeArena, MODES, SECRET } from './exec-harness.js';

describe.each(MODES)('%s mode', (mode) => {
  it('a harmless command passes', async () => {
    const a = makeArena(mode);
    a.put('f.txt', 'x\n');
    expectOk(await a.exec({ zone: 'storage', cmd: 'cat', args: ['f.txt'] }));
    a.finish();
  });

  it('notices a read of a canary outside the storage base (access time)', async () => {
    const a = makeArena(mode);
    expectOk(await a.exec({ zone: 'storage', cmd: 'true' }));
    fs.readFileSync(path.join(a.outside, 'secret.txt'));
    expect(() => a.finish()).toThrow(/read/);
  });

  it("notices a read of another user's file", async () => {
    const a = makeArena(mode);
    expectOk(await a.exec({ zone: 'storage', cmd: 'true' }));
    fs.readFileSync(path.join(a.s.base, 'users', 'bob', 'Storage', 'data', 'bob-secret.txt'));
    expect(() => a.finish()).toThrow(/read/);
  });

  it('notices a file created outside and a canary changed', async () => {
    const a = makeArena(mode);
    expectOk(await a.exec({ zone: 'storage', cmd: 'true' }));
    fs.writeFileSync(path.join(a.outside, 'pwn'), 'x');
    expect(() => a.finish()).toThrow(/added or removed/);
    const b = makeArena(mode);
    expectOk(await b.exec({ zone: 'storage', cmd: 'true' }));
    fs.appendFileSync(path.join(b.s.base, 'users', 'alice', 'Uploads', 'c2', 'other-chat.txt'), 'x');
    expect(() => b.finish()).toThrow();
  });

  it('notices the secret in a response', async () => {
    const a = makeArena(mode);
    a.put('leak.txt', `${SECRET}\n`);
    expectOk(await a.exec({ zone: 'storage', cmd: 'cat', args: ['leak.txt'] }));
    expect(() => a.finish()).toThrow(/leaked/);
  });
});
