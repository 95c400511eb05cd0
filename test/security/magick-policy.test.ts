/**
 * ImageMagick under Fileshed's own policy (src/core/services/exec/launcher/magick.ts), attacked in each kernel sandbox
 * mode through the converter runner shed_read uses (the same launcher, environment and mounts as
 * shed_exec): SVG, MVG and MSL inputs, `text:` and `text:@file` (any file read as text),
 * `ephemeral:` (deletes its input) and `label:@file` are refused by the policy; a PNG and a JPEG
 * still convert. Then shed_read's image path, and shed_exec's convert where the real ImageMagick is
 * the one on the PATH. Without the policy (today's code) an MVG drawing pulls another file into its picture.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runConverter, type Converter } from '../../src/core/services/documents/confined.js';
import { magickPolicyDir, MAGICK_POLICY } from '../../src/core/services/exec/launcher/magick.js';
import { sandboxStatus } from '../../src/core/services/exec/launcher/sandbox.js';
import { findProgram } from '../../src/core/services/exec/launcher/system.js';
import { defaultValves } from '../../src/core/base/valves.js';
import { makeShed, type Shed } from '../helpers/shed.js';

const CONVERT = '/usr/bin/convert';
const haveConvert = fs.existsSync(CONVERT);
const IM: Converter = { program: 'convert', pkg: 'imagemagick', reads: 'images' };

/** A real PNG of w x h red pixels. */
function png(w: number, h: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(Buffer.concat([Buffer.from(type), data])) >>> 0);
    return Buffer.concat([len, Buffer.from(type), data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.concat(Array.from({ length: h }, () => Buffer.concat([Buffer.from([0]), Buffer.alloc(w * 3, Buffer.from([255, 0, 0]))])));
  return Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><image href="text:/etc/passwd" width="10" height="10"/></svg>';
const MVG = 'push graphic-context\nviewbox 0 0 10 10\nimage over 0,0 10,10 "text:/etc/passwd"\npop graphic-context\n';
const MSL = '<?xml version="1.0"?><image><read filename="input.png"/><write filename="planted.png"/></image>';

let work: string;
beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'magick-policy-'));
  fs.writeFileSync(path.join(work, 'in.png'), png(40, 30));
  fs.writeFileSync(path.join(work, 'in.txt'), 'secret words\n');
});
afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

describe('the policy file', () => {
  it('is written once, readable by any uid, writable by none but us', () => {
    const dir = magickPolicyDir();
    expect(magickPolicyDir()).toBe(dir);
    expect(fs.readFileSync(path.join(dir, 'policy.xml'), 'utf8')).toBe(MAGICK_POLICY);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o755);
    expect(fs.statSync(path.join(dir, 'policy.xml')).mode & 0o777).toBe(0o644);
  });

  it.skipIf(!haveConvert)('ImageMagick loads it first, with its limits', () => {
    const env = { ...process.env, MAGICK_CONFIGURE_PATH: magickPolicyDir() };
    const list = spawnSync(CONVERT, ['-list', 'policy'], { env, encoding: 'utf8' }).stdout;
    expect(list.indexOf(path.join(magickPolicyDir(), 'policy.xml'))).toBeGreaterThan(-1);
    const resources = spawnSync(CONVERT, ['-list', 'resource'], { env, encoding: 'utf8' }).stdout;
    expect(resources).toMatch(/Thread: 1/);
    expect(resources).toMatch(/Memory: 256MiB/);
  });
});

for (const mode of ['bwrap', 'landlock'] as const) {
  describe(`${mode}: convert through the confined runner`, async () => {
    const available = haveConvert && (await sandboxStatus(mode).then(() => true, () => false));
    const valves = { ...defaultValves(), sandbox: mode };
    const convert = async (file: string, content: string | Buffer, ext: string, args: (input: string) => string[]) => {
      const src = path.join(work, file);
      fs.writeFileSync(src, content);
      const r = await runConverter(valves, IM, src, ext, { args, captureBytes: 1 << 20, timeoutSec: 60 });
      return { code: r.returncode, out: r.stdout.bytes, err: r.stderr.bytes.toString() };
    };

    it.skipIf(!available)('a PNG and a JPEG still convert', async () => {
      const a = await convert('ok.png', png(40, 30), '.png', (i) => [`png:${i}[0]`, '-resize', '20x20', 'jpeg:-']);
      expect(a.code, a.err).toBe(0);
      expect(a.out.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))).toBe(true);
      const b = await convert('ok.jpg', a.out, '.jpg', (i) => [`jpeg:${i}`, 'png:-']);
      expect(b.code, b.err).toBe(0);
      expect(b.out.subarray(1, 4).toString()).toBe('PNG');
    });

    it.skipIf(!available)('the policy is the one loaded inside the sandbox', async () => {
      const r = await convert('any.txt', 'x', '.txt', () => ['-list', 'policy']);
      expect(r.out.toString()).toMatch(/fileshed-imagemagick\/policy\.xml|shed-call-\d+-magick-[^/]+\/policy\.xml/);
    });

    const refusals: Array<[string, string | Buffer, string, (i: string) => string[]]> = [
      ['SVG', SVG, '.svg', (i) => [`svg:${i}`, 'png:-']],
      ['SVG by sniffing', SVG, '.svg', (i) => [i, 'png:-']],
      ['MVG', MVG, '.mvg', (i) => [`mvg:${i}`, 'png:-']],
      ['MSL', MSL, '.msl', (i) => [`msl:${i}`, 'png:-']],
      ['text:', 'secret words\n', '.txt', (i) => [`text:${i}`, 'png:-']],
      ['text:@file', 'secret words\n', '.txt', (i) => [`text:@${i}`, 'png:-']],
      ['label:@file', 'secret words\n', '.txt', (i) => [`label:@${i}`, 'png:-']],
      ['ephemeral:', png(4, 4), '.png', (i) => [`ephemeral:${i}`, 'png:-']],
      ['PostScript', '%!PS\n/Helvetica findfont 12 scalefont setfont 10 10 moveto (x) show showpage\n', '.ps', (i) => [`ps:${i}`, 'png:-']],
    ];
    for (const [what, content, ext, args] of refusals) {
      it.skipIf(!available)(`${what} is refused`, async () => {
        const file = `attack${ext}`;
        const r = await convert(file, content, ext, args);
        expect(r.code, `${what}: ${r.err}`).not.toBe(0);
        expect(r.out.length).toBe(0);
        expect(r.err).toMatch(/not allowed by the security policy|no decode delegate|unable to open image|NoDecodeDelegateForThisImageFormat/);
        expect(fs.existsSync(path.join(work, file))).toBe(true); // ephemeral: deleted nothing
      });
    }
  });
}

describe.skipIf(!haveConvert)('today, without the policy', () => {
  it('an MVG drawing pulls another file into the picture (what the policy closes)', () => {
    fs.writeFileSync(path.join(work, 'draw.mvg'), 'push graphic-context\nviewbox 0 0 10 10\nimage over 0,0 10,10 "in.png"\npop graphic-context\n');
    const run = (policy: string) => spawnSync(CONVERT, ['mvg:draw.mvg', 'png:-'], { cwd: work, env: { ...process.env, MAGICK_CONFIGURE_PATH: policy } });
    const today = run('');
    expect(today.status, today.stderr.toString()).toBe(0);
    expect(today.stdout.subarray(1, 4).toString()).toBe('PNG');
    const ours = run(magickPolicyDir());
    expect(ours.status).not.toBe(0);
    expect(ours.stdout.length).toBe(0);
    expect(ours.stderr.toString()).toContain('not allowed by the security policy');
  });
});

describe('through the functions', () => {
  let s: Shed;
  beforeAll(() => {
    s = makeShed({ sandbox: 'bwrap' });
    fs.mkdirSync(s.zonePath('storage'), { recursive: true });
    fs.writeFileSync(s.zonePath('storage', 'pic.png'), png(40, 30));
    fs.writeFileSync(s.zonePath('storage', 'notes.txt'), 'secret words\n');
  });
  afterAll(() => s.cleanup());

  it.skipIf(!haveConvert)('shed_read still shows a PNG as an image', async () => {
    if (!(await sandboxStatus('bwrap').then(() => true, () => false))) return;
    const r = await s.call('shed_read', { zone: 'storage', path: 'pic.png' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(JSON.stringify(r.data)).toContain('data:image/png;base64,');
  });

  // The PATH's convert must be ImageMagick itself (some machines put a wrapper script first).
  const real = (() => {
    const found = findProgram('convert');
    if (found === undefined) return false;
    const head = Buffer.alloc(4);
    const fd = fs.openSync(found, 'r');
    fs.readSync(fd, head, 0, 4, 0);
    fs.closeSync(fd);
    return head.toString('latin1') === '\x7fELF';
  })();
  it.skipIf(!real)('shed_exec convert: text: refused, a PNG converts', async () => {
    if (!(await sandboxStatus('bwrap').then(() => true, () => false))) return;
    const bad = await s.call('shed_exec', { zone: 'storage', cmd: 'convert', args: ['text:notes.txt', 'out.png'] });
    expect(bad.data?.returncode).not.toBe(0);
    expect(fs.existsSync(s.zonePath('storage', 'out.png'))).toBe(false);
    const ok = await s.call('shed_exec', { zone: 'storage', cmd: 'convert', args: ['pic.png', 'out.jpg'] });
    expect(ok.data?.returncode, ok.data?.stderr).toBe(0);
  });
});
