/**
 * Path-attack corpus (SPEC section 5) on the real filesystem, through the public functions.
 *
 * Every test runs with canaries outside the attacked zone: a separate temp folder, the folder above
 * the zone root, a sibling folder whose name starts with the root's name (data2), another user's
 * zone, another conversation's uploads. After each test: every canary is byte-identical (nothing
 * added, changed or removed there), and no response contained the secret, in clear, hex or base64.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeShed, type Result, type Shed } from '../helpers/shed.js';

const SECRET = `KANARIE-${crypto.randomBytes(8).toString('hex')}-TOPSECRET`;
const SECRET_HEAD = SECRET.slice(0, 12); // fits in the first 16-byte line of a hexdump
const PAYLOAD = `PWNED-${crypto.randomBytes(4).toString('hex')}`;

let s: Shed;
let outside: string; // a folder outside the storage base entirely
let zone: string; // real path of alice's Storage root
let before: Map<string, string>;
let responses: string[];

// ---------------------------------------------------------------------------------------------
// Arrangement

function put(p: string, content: string): void {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
}

function link(target: string, at: string): void {
  fs.mkdirSync(path.dirname(at), { recursive: true });
  fs.symlinkSync(target, at);
}

const home = () => path.join(s.base, 'users', 'alice');

/** Canary locations: whatever is there must never change. */
function canaryRoots(): string[] {
  return [outside, path.join(s.base, 'users')];
}

/** Folders that the calls may legitimately change: the zones under attack and their work folders. */
function excluded(): Set<string> {
  const h = home();
  return new Set([
    path.join(h, 'Storage', 'data'),
    path.join(h, 'Storage', 'editzone'),
    path.join(h, 'Storage', 'locks'),
    path.join(h, 'Storage', 'undo'), // the undo capture store: server state written after each modifying call
    path.join(h, 'Documents', 'data'),
    path.join(h, 'Documents', 'git'), // the history of Documents: server state, written by the commits
    path.join(h, 'Documents', 'editzone'),
    path.join(h, 'Documents', 'locks'),
    path.join(h, 'Uploads', 'c1'),
  ]);
}

function snapshot(): Map<string, string> {
  const out = new Map<string, string>();
  const skip = excluded();
  const uploads = path.join(home(), 'Uploads');
  const visit = (p: string) => {
    if (skip.has(p)) return;
    // Upload folders of the conversations used by the calls are created on first use; c2 is the canary.
    if (path.dirname(p) === uploads && path.basename(p) !== 'c2') return;
    const st = fs.lstatSync(p, { throwIfNoEntry: false });
    if (st === undefined) return;
    if (st.isSymbolicLink()) out.set(p, `link:${fs.readlinkSync(p)}`);
    else if (st.isDirectory()) {
      out.set(p, 'dir');
      for (const name of fs.readdirSync(p)) visit(path.join(p, name));
    } else out.set(p, `file:${st.mode.toString(8)}:${fs.readFileSync(p).toString('base64')}`);
  };
  for (const r of canaryRoots()) visit(r);
  return out;
}

beforeEach(() => {
  s = makeShed();
  responses = [];
  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-outside-'));
  put(path.join(outside, 'secret.txt'), `${SECRET}\n`);
  put(path.join(outside, 'dir', 'inner-secret.txt'), `${SECRET}\n`);
  const h = home();
  put(path.join(h, 'Storage', 'above-secret.txt'), `${SECRET}\n`); // beside the zone root
  put(path.join(h, 'Storage', 'data2', 'sibling-secret.txt'), `${SECRET}\n`); // prefix sibling
  put(path.join(h, 'Uploads', 'c2', 'other-chat-secret.txt'), `${SECRET}\n`);
  put(path.join(s.base, 'users', 'bob', 'Storage', 'data', 'bob-secret.txt'), `${SECRET}\n`);
  put(path.join(s.base, 'users', 'bob', 'Documents', 'data', 'bob-doc.txt'), `${SECRET}\n`);

  fs.mkdirSync(path.join(h, 'Documents', 'data'), { recursive: true }); // opening Documents creates it anyway
  const data = path.join(h, 'Storage', 'data');
  fs.mkdirSync(data, { recursive: true });
  zone = fs.realpathSync(data);
  const outsideReal = fs.realpathSync(outside);
  const rel = (to: string, fromDir = zone) => path.relative(fromDir, to);
  put(path.join(zone, 'victim.txt'), 'victim');
  put(path.join(zone, 'real-dir', 'inside.txt'), 'inside');
  fs.mkdirSync(path.join(zone, 'sub'));
  // Links leading outside the zone.
  link(path.join(outsideReal, 'secret.txt'), path.join(zone, 'ln-file-abs'));
  link(rel(path.join(outsideReal, 'secret.txt')), path.join(zone, 'ln-file-rel'));
  link(path.join(outsideReal, 'dir'), path.join(zone, 'ln-dir-abs'));
  link(rel(path.join(outsideReal, 'dir')), path.join(zone, 'ln-dir-rel'));
  link(path.join(outsideReal, 'not-yet.txt'), path.join(zone, 'ln-dangling-abs'));
  link(rel(path.join(outsideReal, 'not-yet.txt')), path.join(zone, 'ln-dangling-rel'));
  link(path.join(outsideReal, 'no-dir'), path.join(zone, 'ln-dangling-dir'));
  link('loop-b', path.join(zone, 'loop-a'));
  link('loop-a', path.join(zone, 'loop-b'));
  link('chain-2', path.join(zone, 'chain-1'));
  link('sub/chain-3', path.join(zone, 'chain-2'));
  link(path.join(outsideReal, 'secret.txt'), path.join(zone, 'sub', 'chain-3'));
  link('chain-dir-2', path.join(zone, 'chain-dir-1'));
  link(path.join(outsideReal, 'dir'), path.join(zone, 'chain-dir-2'));
  link(path.join(path.dirname(zone), 'data2'), path.join(zone, 'ln-sibling-dir')); // "/…/data2" starts with "/…/data"
  link('../data2', path.join(zone, 'ln-sibling-dir-rel'));
  link('../data2/sibling-secret.txt', path.join(zone, 'ln-sibling-file'));
  link('../../data2', path.join(zone, 'sub', 'ln-up-out'));
  link('..', path.join(zone, 'ln-parent'));
  link('../above-secret.txt', path.join(zone, 'ln-above'));
  link('/', path.join(zone, 'ln-root'));
  link(path.join(s.base, 'users', 'bob', 'Storage', 'data'), path.join(zone, 'ln-bob'));
  link('../../../bob/Storage/data/bob-secret.txt', path.join(zone, 'ln-bob-file'));
  link(path.join(h, 'Uploads', 'c2'), path.join(zone, 'ln-other-chat'));
  // Links that stay inside the zone.
  link('real-dir', path.join(zone, 'ln-in-dir'));
  link('real-dir/inside.txt', path.join(zone, 'ln-in-file'));
  link('real-dir/missing.txt', path.join(zone, 'ln-in-dangling'));
  link('ln-in-dir', path.join(zone, 'ln-in-chain'));

  before = snapshot();
});

afterEach(() => {
  try {
    const after = snapshot();
    expect([...after.keys()].sort(), 'entries outside the zone changed').toEqual([...before.keys()].sort());
    for (const [p, v] of before) expect(after.get(p), `canary ${p} changed`).toBe(v);
    const hexHead = Buffer.from(SECRET_HEAD).toString('hex');
    const b64Head = Buffer.from(SECRET_HEAD).toString('base64');
    for (const text of responses) {
      expect(text).not.toContain(SECRET_HEAD);
      expect(text.toLowerCase().replace(/[^0-9a-f]/g, '')).not.toContain(hexHead);
      expect(text).not.toContain(b64Head);
      expect(text).not.toContain('TOPSECRET');
    }
  } finally {
    s.cleanup();
    fs.rmSync(outside, { recursive: true, force: true });
  }
});

// ---------------------------------------------------------------------------------------------
// Calling

/** Calls and records the raw response text for the secret check. */
async function call(fn: string, args: Record<string, unknown>, as: { user?: string; chat?: string } = {}): Promise<Result> {
  const r = await s.call(fn, args, as);
  responses.push(JSON.stringify(r));
  return r;
}

type Op =
  | 'read'
  | 'read_bytes'
  | 'hexdump'
  | 'tree'
  | 'file_type'
  | 'create_file'
  | 'patch_text'
  | 'patch_overwrite'
  | 'patch_bytes'
  | 'convert_eol'
  | 'delete'
  | 'rename_from'
  | 'rename_to';

const READ_OPS: Op[] = ['read', 'read_bytes', 'hexdump', 'tree', 'file_type'];
/** Writes that create a missing file. */
const WRITE_OPS: Op[] = ['create_file', 'patch_text', 'patch_overwrite', 'patch_bytes'];
/** Every op that changes an existing file in place. */
const MODIFY_OPS: Op[] = [...WRITE_OPS, 'convert_eol'];
const ALL_OPS: Op[] = [...READ_OPS, ...MODIFY_OPS, 'delete', 'rename_from', 'rename_to'];

/** The function, its arguments with `p` as the attacked path parameter, and that parameter's name. */
function request(op: Op, p: string, zoneName = 'storage'): { fn: string; args: Record<string, unknown>; param: string } {
  const z = { zone: zoneName };
  switch (op) {
    case 'read':
      return { fn: 'shed_read', args: { ...z, path: p }, param: 'path' };
    case 'read_bytes':
      return { fn: 'shed_read_bytes', args: { ...z, path: p }, param: 'path' };
    case 'hexdump':
      return { fn: 'shed_hexdump', args: { ...z, path: p }, param: 'path' };
    case 'tree':
      return { fn: 'shed_tree', args: { ...z, path: p }, param: 'path' };
    case 'file_type':
      return { fn: 'shed_file_type', args: { ...z, path: p }, param: 'path' };
    case 'patch_bytes':
      return { fn: 'shed_patch_bytes', args: { ...z, path: p, content: Buffer.from(PAYLOAD).toString('hex'), position: 'end' }, param: 'path' };
    case 'convert_eol':
      return { fn: 'shed_convert_eol', args: { ...z, path: p, to: 'dos' }, param: 'path' };
    case 'create_file':
      return { fn: 'shed_create_file', args: { ...z, path: p, content: PAYLOAD }, param: 'path' };
    case 'patch_text':
      return { fn: 'shed_patch_text', args: { ...z, path: p, content: PAYLOAD, position: 'end' }, param: 'path' };
    case 'patch_overwrite':
      return { fn: 'shed_patch_text', args: { ...z, path: p, content: PAYLOAD, overwrite: true }, param: 'path' };
    case 'delete':
      return { fn: 'shed_delete', args: { ...z, path: p }, param: 'path' };
    case 'rename_from':
      return { fn: 'shed_rename', args: { ...z, old_path: p, new_path: 'moved-here' }, param: 'old_path' };
    case 'rename_to':
      return { fn: 'shed_rename', args: { ...z, old_path: 'victim.txt', new_path: p }, param: 'new_path' };
  }
}

async function attack(op: Op, p: string, zoneName = 'storage', as: { user?: string; chat?: string } = {}): Promise<{ r: Result; param: string }> {
  const { fn, args, param } = request(op, p, zoneName);
  return { r: await call(fn, args, as), param };
}

function expectCode(r: Result, code: string, param?: string): void {
  expect(r.success, JSON.stringify(r)).toBe(false);
  expect(r.error?.code, JSON.stringify(r.error)).toBe(code);
  if (param !== undefined) expect(r.error?.message).toContain(param);
}

function expectOk(r: Result): void {
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  expect(r.success).toBe(true);
}

/** A refused attack must leave the zone's own files as they were. */
function expectZoneIntact(): void {
  expect(fs.readFileSync(path.join(zone, 'victim.txt'), 'utf8')).toBe('victim');
  expect(fs.readFileSync(path.join(zone, 'real-dir', 'inside.txt'), 'utf8')).toBe('inside');
}

const cases = (paths: readonly string[], ops: readonly Op[]) => paths.flatMap((p) => ops.map((op) => [op, p] as [Op, string]));

// ---------------------------------------------------------------------------------------------

describe('.. escapes → PATH_ESCAPE', () => {
  const climbs = [
    '..',
    '../',
    '../above-secret.txt',
    '../data2/sibling-secret.txt',
    '../../../../../../../../../../etc/passwd',
    '../'.repeat(60) + 'tmp',
    'a/../../x',
    'sub/../../above-secret.txt',
    'real-dir/../../data2/sibling-secret.txt',
    'a/b/c/../../../..',
    'a/b/c/../../../../x',
    './../x',
    '/../above-secret.txt',
    '..//..//x',
    'sub/..',
  ];
  const escaping = climbs.filter((p) => p !== 'sub/..');

  it.each(cases(escaping, ALL_OPS))('%s %j', async (op, p) => {
    const { r, param } = await attack(op, p);
    expectCode(r, 'PATH_ESCAPE', param);
    expect(r.error?.hint).toBeTruthy();
    expectZoneIntact();
  });

  it.each(ALL_OPS)('%s: relative path from the zone root to the outside canary', async (op) => {
    const { r, param } = await attack(op, path.relative(zone, path.join(fs.realpathSync(outside), 'secret.txt')));
    expectCode(r, 'PATH_ESCAPE', param);
  });

  it("another user's zone via ../../ is refused", async () => {
    for (const p of ['../../../bob/Storage/data/bob-secret.txt', '../../../../users/bob/Documents/data/bob-doc.txt']) {
      for (const op of ['read', 'read_bytes', 'hexdump', 'create_file', 'delete', 'rename_from'] as Op[]) {
        const { r } = await attack(op, p);
        expectCode(r, 'PATH_ESCAPE');
      }
    }
    expectCode((await attack('tree', '../../../bob')).r, 'PATH_ESCAPE');
  });

  it('a .. that stays inside is fine: "sub/.." is the zone root and "sub/../victim.txt" is victim.txt', async () => {
    const r = await call('shed_read', { zone: 'storage', path: 'real-dir/../victim.txt' });
    expectOk(r);
    expect(r.data?.content).toBe('victim');
    const t = await call('shed_tree', { zone: 'storage', path: 'sub/..' });
    expectOk(t);
  });

  it.each(['.', '/', './', 'sub/..', '//'])('shed_delete %j (the zone root) is refused and deletes nothing', async (p) => {
    const { r } = await attack('delete', p);
    expectCode(r, 'INVALID_PATH');
    expectZoneIntact();
  });

  it.each(['.', '/', 'sub/..'])('shed_rename old_path=%j (the zone root) is refused', async (p) => {
    const { r } = await attack('rename_from', p);
    expectCode(r, 'INVALID_PATH');
    expectZoneIntact();
  });
});

describe('absolute paths: the leading / is stripped, the path stays inside the zone', () => {
  it('shed_read("/etc/passwd") does not read the real /etc/passwd', async () => {
    const r = await call('shed_read', { zone: 'storage', path: '/etc/passwd' });
    expectCode(r, 'FILE_NOT_FOUND');
    expect(JSON.stringify(r)).not.toMatch(/root:.*:0:0:/);
    for (const op of ['read_bytes', 'hexdump', 'tree'] as Op[]) {
      const { r: x } = await attack(op, '/etc/passwd');
      expectCode(x, 'FILE_NOT_FOUND');
      expect(JSON.stringify(x)).not.toMatch(/root:.*:0:0:|726f6f743a|cm9vd/);
    }
  });

  it('"/etc/passwd" refers to Storage/etc/passwd', async () => {
    put(path.join(zone, 'etc', 'passwd'), 'zone passwd\n');
    for (const p of ['/etc/passwd', '//etc//passwd', '/./etc/passwd']) {
      const r = await call('shed_read', { zone: 'storage', path: p });
      expectOk(r);
      expect(r.data?.content).toBe('zone passwd\n');
    }
  });

  const outsideSecret = () => path.join(outside, 'secret.txt');

  it.each(['read', 'read_bytes', 'hexdump', 'file_type', 'convert_eol', 'delete', 'rename_from'] as Op[])('%s on the absolute path of the outside canary → FILE_NOT_FOUND', async (op) => {
    const { r } = await attack(op, outsideSecret());
    expectCode(r, 'FILE_NOT_FOUND');
  });

  it('tree on the absolute path of the outside folder → FILE_NOT_FOUND', async () => {
    expectCode((await attack('tree', outside)).r, 'FILE_NOT_FOUND');
  });

  it.each(WRITE_OPS)('%s on the absolute path of the outside canary writes inside the zone', async (op) => {
    const { r } = await attack(op, outsideSecret());
    expectOk(r);
    const inZone = path.join(zone, outsideSecret().slice(1));
    expect(fs.readFileSync(inZone, 'utf8').startsWith(PAYLOAD)).toBe(true);
  });

  it('rename onto the absolute path of the outside canary moves the file inside the zone', async () => {
    const { r } = await attack('rename_to', outsideSecret());
    expectOk(r);
    expect(fs.readFileSync(path.join(zone, outsideSecret().slice(1)), 'utf8')).toBe('victim');
    expect(fs.existsSync(path.join(zone, 'victim.txt'))).toBe(false);
  });

  it("the absolute disk path of the zone's own file is not that file, and is not echoed as a disk path", async () => {
    const r = await call('shed_read', { zone: 'storage', path: path.join(zone, 'victim.txt') });
    expectCode(r, 'FILE_NOT_FOUND');
    expect(JSON.stringify(r)).not.toContain(zone);
  });
});

describe('NUL byte and control characters → INVALID_PATH', () => {
  const bad = ['a\u0000b', 'victim.txt\u0000.png', '\u0000', 'a\nb', '\n', 'a\tb', 'a\rb', 'a\u001b[2Jb', 'invoice\u202Etxt.exe', 'a\u007fb', '../\u0000', 'sub/\u0085x'];
  it.each(cases(bad, ALL_OPS))('%s %j', async (op, p) => {
    const { r, param } = await attack(op, p);
    expectCode(r, 'INVALID_PATH', param);
    expectZoneIntact();
  });

  it('nothing with a control character was created in the zone', async () => {
    for (const p of bad) await attack('create_file', p);
    const names = [...fs.readdirSync(zone), ...fs.readdirSync(path.join(zone, 'sub'))];
    for (const n of names) expect(n).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/u);
  });
});

describe('unicode forms', () => {
  const NFD = 'caf\u0065\u0301.txt';
  const NFC = 'caf\u00e9.txt';

  it('NFD and NFC of é refer to the same file (stored as NFC)', async () => {
    expectOk((await attack('create_file', NFD)).r);
    expect(fs.readdirSync(zone)).toContain(NFC);
    expect(fs.readdirSync(zone)).not.toContain(NFD);
    const r = await call('shed_read', { zone: 'storage', path: NFC });
    expectOk(r);
    expect(r.data?.content).toBe(PAYLOAD);
    expectOk(await call('shed_create_file', { zone: 'storage', path: NFC, content: 'second' }));
    const again = await call('shed_read', { zone: 'storage', path: NFD });
    expect(again.data?.content).toBe('second');
    expect(fs.readdirSync(zone).filter((n) => n.normalize('NFC') === NFC)).toHaveLength(1);
    expectOk(await call('shed_delete', { zone: 'storage', path: NFD }));
    expect(fs.existsSync(path.join(zone, NFC))).toBe(false);
  });

  it('NFD and NFC of a folder name are the same folder', async () => {
    expectOk(await call('shed_create_file', { zone: 'storage', path: 're\u0301sume\u0301/cv.txt', content: 'cv' }));
    const r = await call('shed_read', { zone: 'storage', path: 'r\u00e9sum\u00e9/cv.txt' });
    expectOk(r);
    expect(r.data?.content).toBe('cv');
  });

  it('full-width solidus U+FF0F is a character of one name, not a folder separator', async () => {
    expectOk((await attack('create_file', 'a\uFF0Fb.txt')).r);
    expect(fs.existsSync(path.join(zone, 'a'))).toBe(false);
    expect(fs.readFileSync(path.join(zone, 'a\uFF0Fb.txt'), 'utf8')).toBe(PAYLOAD);
  });

  it.each(['..\uFF0F..\uFF0Fabove-secret.txt', '\uFF0E\uFF0E/above-secret.txt', '\u2024\u2024/above-secret.txt', '..\u2215above-secret.txt', '..\\above-secret.txt', '%2e%2e/above-secret.txt'])(
    '%j is an ordinary name: not found when read, created inside the zone when written',
    async (p) => {
      expectCode((await attack('read', p)).r, 'FILE_NOT_FOUND');
      expectOk((await attack('create_file', p)).r);
      expect(fs.readFileSync(path.join(zone, p.normalize('NFC')), 'utf8')).toBe(PAYLOAD);
    },
  );
});

describe('symbolic links inside the zone pointing outside', () => {
  const finalOut = ['ln-file-abs', 'ln-file-rel', 'ln-dir-abs', 'ln-dir-rel', 'chain-1', 'chain-2', 'sub/chain-3', 'chain-dir-1', 'ln-sibling-dir', 'ln-sibling-dir-rel', 'ln-sibling-file', 'sub/ln-up-out', 'ln-parent', 'ln-above', 'ln-root', 'ln-bob', 'ln-bob-file', 'ln-other-chat'];
  const dangling = ['ln-dangling-abs', 'ln-dangling-rel', 'ln-dangling-dir'];
  const loops = ['loop-a', 'loop-b'];

  it.each(cases([...finalOut, ...dangling, ...loops], [...READ_OPS, ...MODIFY_OPS]))('%s %j → PATH_ESCAPE', async (op, p) => {
    const { r, param } = await attack(op, p);
    expectCode(r, 'PATH_ESCAPE', param);
    expect(fs.lstatSync(path.join(zone, p)).isSymbolicLink()).toBe(true); // the link is still there, untouched
  });

  it.each(dangling)('writing through the dangling link %j creates nothing outside', async (p) => {
    for (const op of MODIFY_OPS) expectCode((await attack(op, p)).r, 'PATH_ESCAPE');
    expect(fs.existsSync(path.join(outside, 'not-yet.txt'))).toBe(false);
    expect(fs.existsSync(path.join(outside, 'no-dir'))).toBe(false);
  });

  it.each([...finalOut, ...dangling, ...loops])('shed_delete %j removes the link only, never its target', async (p) => {
    expectOk((await attack('delete', p)).r);
    expect(fs.lstatSync(path.join(zone, p), { throwIfNoEntry: false })).toBeUndefined();
    // The afterEach canary check proves the target and everything below it are untouched.
  });

  it.each([...finalOut, ...dangling, ...loops])('shed_rename old_path=%j is refused, or moves the link itself (never its content)', async (p) => {
    const { r } = await attack('rename_from', p);
    if (r.success) {
      expect(fs.lstatSync(path.join(zone, 'moved-here')).isSymbolicLink()).toBe(true);
    } else {
      expectCode(r, 'PATH_ESCAPE', 'old_path');
    }
  });

  it.each([...finalOut, ...dangling, ...loops])('shed_rename new_path=%j (an existing link) does not write through it', async (p) => {
    const { r } = await attack('rename_to', p);
    expect(r.success).toBe(false);
    expect(['FILE_EXISTS', 'PATH_ESCAPE']).toContain(r.error?.code);
    expect(fs.lstatSync(path.join(zone, p)).isSymbolicLink()).toBe(true);
    expectZoneIntact();
  });

  const through = [
    'ln-dir-abs/inner-secret.txt',
    'ln-dir-rel/inner-secret.txt',
    'chain-dir-1/inner-secret.txt',
    'ln-sibling-dir/sibling-secret.txt',
    'ln-sibling-dir-rel/sibling-secret.txt',
    'sub/ln-up-out/sibling-secret.txt',
    'ln-parent/above-secret.txt',
    'ln-parent/data2/sibling-secret.txt',
    'ln-parent/data/victim.txt', // leads back into the zone, but through a folder outside it
    'ln-root/etc/passwd',
    'ln-root/tmp/x.txt',
    'ln-bob/bob-secret.txt',
    'ln-other-chat/other-chat-secret.txt',
    'ln-dir-abs/new-file.txt',
    'ln-dir-abs/new/deeper/file.txt',
    'ln-dangling-dir/new.txt',
    'loop-a/x',
    'ln-file-abs/x',
  ];

  it.each(cases(through, ALL_OPS))('link as an intermediate folder: %s %j → PATH_ESCAPE', async (op, p) => {
    const { r, param } = await attack(op, p);
    expectCode(r, 'PATH_ESCAPE', param);
    expectZoneIntact();
  });

  it('a tree of the zone lists the links but never what is behind them', async () => {
    const r = await call('shed_tree', { zone: 'storage', depth: 10 });
    expectOk(r);
    const text = JSON.stringify(r);
    expect(text).toContain('victim.txt');
    expect(text).not.toContain(fs.realpathSync(outside)); // no disk path outside the zone either
    expect(text).not.toContain(s.base);
    for (const hidden of ['inner-secret.txt', 'sibling-secret.txt', 'above-secret.txt', 'bob-secret.txt', 'other-chat-secret.txt', 'passwd']) {
      expect(text).not.toContain(hidden);
    }
  });
});

describe('symbolic links that stay inside the zone', () => {
  it('read through an in-zone link to a file and to a folder works', async () => {
    for (const p of ['ln-in-file', 'ln-in-dir/inside.txt', 'ln-in-chain/inside.txt']) {
      const r = await call('shed_read', { zone: 'storage', path: p });
      expectOk(r);
      expect(r.data?.content).toBe('inside');
    }
  });

  it('a write through an in-zone folder link lands in the real folder', async () => {
    expectOk((await attack('create_file', 'ln-in-dir/new.txt')).r);
    expect(fs.readFileSync(path.join(zone, 'real-dir', 'new.txt'), 'utf8')).toBe(PAYLOAD);
  });

  it.each(WRITE_OPS)('%s onto an in-zone link never writes through it (replaces the link, or refuses)', async (op) => {
    const { r, param } = await attack(op, 'ln-in-file');
    if (r.success) {
      expect(fs.lstatSync(path.join(zone, 'ln-in-file')).isFile()).toBe(true);
      expect(fs.readFileSync(path.join(zone, 'ln-in-file'), 'utf8')).toContain(PAYLOAD);
    } else {
      expectCode(r, 'INVALID_PATH', param);
      expect(fs.lstatSync(path.join(zone, 'ln-in-file')).isSymbolicLink()).toBe(true);
    }
    expect(fs.readFileSync(path.join(zone, 'real-dir', 'inside.txt'), 'utf8')).toBe('inside');
  });

  it('read of an in-zone dangling link is FILE_NOT_FOUND, not an escape', async () => {
    expectCode((await attack('read', 'ln-in-dangling')).r, 'FILE_NOT_FOUND');
  });
});

describe('zone name as first path component', () => {
  it.each(cases(['storage/x.txt', 'Storage/x.txt', 'STORAGE/victim.txt', '/storage/x.txt', './Storage/x.txt', 'storage'], ALL_OPS))(
    '%s %j in zone storage → PATH_STARTS_WITH_ZONE',
    async (op, p) => {
      const { r, param } = await attack(op, p);
      expectCode(r, 'PATH_STARTS_WITH_ZONE', param);
      expect(r.error?.hint).toContain('allow_zone_in_path=true');
      expect(fs.existsSync(path.join(zone, 'storage'))).toBe(false);
      expect(fs.existsSync(path.join(zone, 'Storage'))).toBe(false);
    },
  );

  it('the same in Documents', async () => {
    expectCode((await attack('create_file', 'Documents/x.txt', 'documents')).r, 'PATH_STARTS_WITH_ZONE', 'path');
    expectCode((await attack('read', 'documents/x.txt', 'documents')).r, 'PATH_STARTS_WITH_ZONE', 'path');
  });

  it('allow_zone_in_path=true works: the folder is created and read inside the zone', async () => {
    const w = await call('shed_create_file', { zone: 'storage', path: 'storage/x.txt', content: 'in a folder named storage', allow_zone_in_path: true });
    expectOk(w);
    expect(fs.readFileSync(path.join(zone, 'storage', 'x.txt'), 'utf8')).toBe('in a folder named storage');
    const r = await call('shed_read', { zone: 'storage', path: 'storage/x.txt', allow_zone_in_path: true });
    expectOk(r);
    expect(r.data?.content).toBe('in a folder named storage');
    expectOk(await call('shed_tree', { zone: 'storage', path: 'storage', allow_zone_in_path: true }));
    expectCode(await call('shed_read', { zone: 'storage', path: 'storage/x.txt' }), 'PATH_STARTS_WITH_ZONE');
  });

  it('a later component equal to the zone name is an ordinary folder', async () => {
    expectOk((await attack('create_file', 'a/storage/x.txt')).r);
    expect(fs.readFileSync(path.join(zone, 'a', 'storage', 'x.txt'), 'utf8')).toBe(PAYLOAD);
  });
});

describe('a .git folder in Documents is the user\'s data, never versioned: named writes into one are refused', () => {
  let docs: string;
  const gitConfig = () => path.join(docs, '.git', 'config');

  beforeEach(() => {
    docs = path.join(home(), 'Documents', 'data');
    put(path.join(docs, 'doc.txt'), 'doc');
    if (!fs.existsSync(gitConfig())) put(gitConfig(), '[core]\n\trepositoryformatversion = 0\n');
  });

  const untouched = () => {
    expect(fs.readFileSync(path.join(docs, 'doc.txt'), 'utf8')).toBe('doc');
    expect(fs.readFileSync(gitConfig(), 'utf8')).not.toContain(PAYLOAD);
    expect(fs.existsSync(path.join(docs, '.git', 'hooks', 'post-commit'))).toBe(false);
  };

  // Every spelling git refuses in a tree (fsck hasDotgit), at any depth, and the ways a path reaches one.
  const dotGitPaths = ['.git/config', '.git/hooks/post-commit', '.git', '.git/', './.git/config', '/.git/config', 'x/../.git/config', '.git/./config', '.git/objects/../config', 'sub/.git/config', 'sub/.GIT/HEAD', 'a/git~1/x', '.git. /x', '.g\u200cit/config'];

  it.each(cases(dotGitPaths, MODIFY_OPS))('%s %j → PROTECTED_PATH, with a hint to use Storage', async (op, p) => {
    const { r, param } = await attack(op, p, 'documents');
    expectCode(r, 'PROTECTED_PATH', param);
    expect(r.error!.hint).toContain('zone="storage"');
    untouched();
  });

  it.each(['.git/x', '.git/config', '.git/hooks/post-commit', '.git', 'deep/.Git/x'])('rename doc.txt onto %j → PROTECTED_PATH', async (p) => {
    const r = await call('shed_rename', { zone: 'documents', old_path: 'doc.txt', new_path: p });
    expectCode(r, 'PROTECTED_PATH', 'new_path');
    untouched();
  });

  it('reading, deleting and moving out of a .git folder work: it is the user\'s data', async () => {
    const read = await call('shed_read', { zone: 'documents', path: '.git/config' });
    expectOk(read);
    expectOk(await call('shed_rename', { zone: 'documents', old_path: '.git/config', new_path: 'old-config' }));
    expect(fs.readFileSync(path.join(docs, 'old-config'), 'utf8')).toContain('repositoryformatversion');
    expectOk(await call('shed_delete', { zone: 'documents', path: '.git' }));
    expect(fs.existsSync(path.join(docs, '.git'))).toBe(false);
  });

  it('.git is not protected in Storage (not versioned)', async () => {
    expectOk(await call('shed_create_file', { zone: 'storage', path: '.git/config', content: 'plain' }));
    expectOk(await call('shed_create_file', { zone: 'storage', path: 'sub/.git/HEAD', content: 'plain' }));
  });

  it.each(MODIFY_OPS)('%s through a folder link to .git (gitlink/config) is refused', async (op) => {
    link('.git', path.join(docs, 'gitlink'));
    const { r } = await attack(op, 'gitlink/config', 'documents');
    expectCode(r, 'PROTECTED_PATH');
    untouched();
  });

  it('rename doc.txt onto gitlink/x (a folder link to .git) is refused', async () => {
    link('.git', path.join(docs, 'gitlink'));
    const r = await call('shed_rename', { zone: 'documents', old_path: 'doc.txt', new_path: 'gitlink/x' });
    expectCode(r, 'PROTECTED_PATH', 'new_path');
    expect(fs.existsSync(path.join(docs, '.git', 'x'))).toBe(false);
  });
});


describe('other users and other conversations', () => {
  it.each(['..', '../bob', 'bob/../alice', '.', 'alice/..', '-alice', 'alice\u0000', ''])('user id %j is refused with INVALID_USER', async (user) => {
    const r = await call('shed_read', { zone: 'storage', path: 'bob-secret.txt' }, { user });
    expectCode(r, 'INVALID_USER');
  });

  it('Uploads of another conversation are out of reach by ..', async () => {
    put(path.join(home(), 'Uploads', 'c1', 'mine.txt'), 'mine');
    for (const op of ['read', 'read_bytes', 'hexdump', 'file_type', 'delete'] as Op[]) {
      const { r } = await attack(op, '../c2/other-chat-secret.txt', 'uploads');
      expectCode(r, 'PATH_ESCAPE');
    }
    expectCode((await attack('tree', '..', 'uploads')).r, 'PATH_ESCAPE');
    const tree = await call('shed_tree', { zone: 'uploads' });
    expectOk(tree);
    expect(JSON.stringify(tree)).toContain('mine.txt');
    expect(JSON.stringify(tree)).not.toContain('other-chat-secret.txt');
  });

  it('a link in Uploads to another conversation is refused', async () => {
    link('../c2', path.join(home(), 'Uploads', 'c1', 'ln-c2'));
    for (const op of ['read', 'read_bytes', 'hexdump', 'delete'] as Op[]) {
      const { r } = await attack(op, 'ln-c2/other-chat-secret.txt', 'uploads');
      expectCode(r, 'PATH_ESCAPE');
    }
  });

  it.each(['../c2', 'c2/..', '..', '/c2', 'c1/../c2'])('chat id %j cannot reach conversation c2', async (chat) => {
    for (const p of ['other-chat-secret.txt', 'c2/other-chat-secret.txt']) {
      const r = await call('shed_read', { zone: 'uploads', path: p }, { chat });
      expect(r.success).toBe(false);
    }
    const t = await call('shed_tree', { zone: 'uploads', depth: 5 }, { chat });
    expect(JSON.stringify(t)).not.toContain('other-chat-secret.txt');
  });

  it('writes in Uploads are refused; the only write is delete', async () => {
    for (const op of [...MODIFY_OPS, 'rename_from'] as Op[]) expectCode((await attack(op, 'x.txt', 'uploads')).r, 'ZONE_READONLY');
  });
});
