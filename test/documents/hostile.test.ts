/**
 * Hostile files: a corrupt file of every format gives a clean error (never INTERNAL_ERROR, never a
 * hang); decompression bombs (a member declaring a huge size, a member inflating past what it
 * declares, a member at a bomb's ratio), a PDF of 100,000 pages, XML entity expansion ("billion
 * laughs") in DOCX, XLSX and EPUB, an image declaring 100,000 x 100,000 pixels: each refused or
 * bounded; a conversion past the time limit is stopped; another user's call is answered meanwhile.
 */
import fs from 'node:fs';
import path from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as D from '../helpers/documents.mjs';
import { makeShed, type Shed } from '../helpers/shed.js';

let s: Shed;
const put = (rel: string, c: string | Buffer | Uint8Array) => {
  const p = s.zonePath('storage', rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, c);
};
const read = (args: Record<string, unknown>, as?: { user?: string }) => s.call('shed_read', { zone: 'storage', ...args }, as);

beforeAll(() => {
  s = makeShed();
});
afterAll(() => s.cleanup());

/** A document whose XML declares the classic nine-level entity bomb (10^9 "lol"s if expanded) and uses it. */
const LOLS = `<!DOCTYPE lolz [<!ENTITY lol "lol">${Array.from({ length: 9 }, (_v, i) => `<!ENTITY lol${i + 1} "${`&lol${i === 0 ? '' : i};`.repeat(10)}">`).join('')}]>`;

describe('corrupt files give clean errors', () => {
  const truncate = (b: Buffer) => b.subarray(0, Math.floor(b.length / 2));
  const cases: Array<[string, () => Buffer | string]> = [
    ['broken.pdf', () => Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(4000, 0x41)])],
    ['broken.docx', () => truncate(D.makeDocx(['text']))],
    ['broken.xlsx', () => Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(200, 7)])],
    ['broken.pptx', () => truncate(D.makePptx(['a', 'b']))],
    ['broken.odt', () => truncate(D.makeOdt(['a']))],
    ['broken.ods', () => truncate(D.makeOds({ S: [['a']] }))],
    ['broken.odp', () => truncate(D.makeOdp(['a']))],
    ['broken.epub', () => Buffer.from(zipSync({ mimetype: strToU8('application/epub+zip') }))],
    ['broken.png', () => Buffer.concat([D.makePng(10, 10).subarray(0, 40), Buffer.alloc(100, 1)])],
    ['broken.jpg', () => Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16]), Buffer.alloc(500, 9)])],
    ['broken.gif', () => Buffer.from('GIF89a\x10\x00\x10\x00garbage-garbage', 'latin1')],
    ['broken.webp', () => truncate(D.convertImage(64, 64, 'webp'))],
    ['broken.eml', () => Buffer.from('From: x\0\0\0binary')],
  ];
  for (const [name, make] of cases) {
    it(name, async () => {
      put(name, make());
      const r = await read({ path: name });
      expect(r.success, JSON.stringify(r)).toBe(false);
      expect(['INVALID_FORMAT', 'DOCUMENT_LIMIT']).toContain(r.error!.code);
      expect(r.error!.message).toContain(`Storage/${name}`);
      expect(r.error!.hint).toBeTruthy();
    }, 30_000);
  }
  it('HTML and e-mail are read leniently (unclosed tags, a broken MIME tree)', async () => {
    put('open.html', '<html><body><p>unclosed <b>bold <i>text <div>more');
    expect((await read({ path: 'open.html' })).data!.content).toBe('unclosed bold text\nmore\n');
    put('half.eml', 'Subject: half\nContent-Type: multipart/mixed; boundary=zz\n\n--zz\nContent-Type: text/plain\n\nbody without end');
    expect((await read({ path: 'half.eml' })).data!.content).toBe('Subject: half\nAttachments: none\n\nbody without end\n');
  });
});

describe('bombs', () => {
  /** A DOCX whose document.xml is `inflated` bytes, with its sizes in the zip patched to `declared`. */
  function docxDeclaring(inflated: number, declared: number | undefined): Buffer {
    const xml = `<?xml version="1.0"?><w:document xmlns:w="w"><w:body><w:p><w:r><w:t>${' '.repeat(inflated)}</w:t></w:r></w:p></w:body></w:document>`;
    const zip = Buffer.from(zipSync({ '[Content_Types].xml': strToU8('<Types/>'), 'word/document.xml': strToU8(xml) }, { level: 9 }));
    if (declared !== undefined) {
      // Patch the uncompressed size in the local header and the central directory entry of the member.
      const name = Buffer.from('word/document.xml');
      for (let i = zip.indexOf(name); i !== -1; i = zip.indexOf(name, i + 1)) {
        if (zip.readUInt32LE(i - 30) === 0x04034b50) zip.writeUInt32LE(declared, i - 30 + 22);
        if (zip.readUInt32LE(i - 46) === 0x02014b50) zip.writeUInt32LE(declared, i - 46 + 24);
      }
    }
    return zip;
  }

  it('a member declaring 2 GiB is refused before inflating', async () => {
    put('declared.docx', docxDeclaring(1000, 0x7fffffff));
    const r = await read({ path: 'declared.docx' });
    expect(r.error!.code).toBe('DOCUMENT_LIMIT');
    expect(r.error!.message).toContain("'word/document.xml'");
  });

  it('a member inflating past its declared size stops there', async () => {
    put('liar.docx', docxDeclaring(5_000_000, 1000));
    const r = await read({ path: 'liar.docx' });
    expect(r.error!.code).toBe('DOCUMENT_LIMIT');
  });

  it("a member at a bomb's ratio (200 MB of one byte) is refused", async () => {
    put('ratio.docx', docxDeclaring(200 * 1024 * 1024, undefined));
    expect(fs.statSync(s.zonePath('storage', 'ratio.docx')).size).toBeLessThan(1024 * 1024);
    const r = await read({ path: 'ratio.docx' });
    expect(r.error!.code).toBe('DOCUMENT_LIMIT');
  }, 60_000);

  it('billion laughs in DOCX, XLSX and EPUB: entities are never expanded', async () => {
    // Each document declares the bomb in its DOCTYPE and references &lol9; in its text.
    const withRef = Buffer.from(zipSync({ '[Content_Types].xml': strToU8('<Types/>'), 'word/document.xml': strToU8(`<?xml version="1.0"?>${LOLS}<w:document xmlns:w="w"><w:body><w:p><w:r><w:t>before &lol9; after</w:t></w:r></w:p></w:body></w:document>`) }));
    put('lol.docx', withRef);
    const d = await read({ path: 'lol.docx' });
    expect(d.data!.content).toBe('before &lol9; after\n');
    const x = Buffer.from(zipSync({
      'xl/workbook.xml': strToU8('<workbook><sheets><sheet name="S" r:id="r1"/></sheets></workbook>'),
      'xl/_rels/workbook.xml.rels': strToU8('<Relationships><Relationship Id="r1" Target="worksheets/sheet1.xml"/></Relationships>'),
      'xl/sharedStrings.xml': strToU8(`<?xml version="1.0"?>${LOLS}<sst><si><t>&lol9;</t></si></sst>`),
      'xl/worksheets/sheet1.xml': strToU8('<worksheet><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row></sheetData></worksheet>'),
    }));
    put('lol.xlsx', x);
    expect((await read({ path: 'lol.xlsx' })).data!.content).toBe('&lol9;\n');
    const epub = Buffer.from(zipSync({
      mimetype: strToU8('application/epub+zip'),
      'META-INF/container.xml': strToU8('<container><rootfiles><rootfile full-path="c.opf"/></rootfiles></container>'),
      'c.opf': strToU8('<package><manifest><item id="a" href="a.xhtml"/></manifest><spine><itemref idref="a"/></spine></package>'),
      'a.xhtml': strToU8(`<?xml version="1.0"?>${LOLS}<html><body><p>x &lol9; y</p></body></html>`),
    }));
    put('lol.epub', epub);
    const e = await read({ path: 'lol.epub' });
    expect(e.data!.content).toContain('x &lol9; y');
    expect(e.data!.content.length).toBeLessThan(100);
  });

  it('a PDF of 100,000 pages: the count, and one call worth of pages', async () => {
    put('huge.pdf', D.makePdf(Array.from({ length: 100_000 }, (_v, i) => `p${i + 1}`)));
    const started = performance.now();
    const r = await read({ path: 'huge.pdf' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data!.total_pages).toBe(100_000);
    expect(r.data!.last_page).toBe(50);
    expect(r.message).toContain('pages="51-"');
    expect(performance.now() - started).toBeLessThan(20_000);
    const tail = await read({ path: 'huge.pdf', pages: '99999-' });
    expect(tail.data!.content).toBe('--- page 99999 of 100000 ---\np99999\n--- page 100000 of 100000 ---\np100000\n');
  }, 60_000);

  it('an image declaring 100,000 x 100,000 pixels is refused before decoding', async () => {
    put('bomb.png', D.pngHeaderOnly(100_000, 100_000));
    const r = await read({ path: 'bomb.png' });
    expect(r.error!.code).toBe('DOCUMENT_LIMIT');
    expect(r.error!.message).toContain('100000 x 100000');
    put('tall.gif', Buffer.from(`GIF89a${String.fromCharCode(0xff, 0xff, 0xff, 0xff)}\0\0\0;`, 'latin1'));
    expect((await read({ path: 'tall.gif' })).error!.code).toBe('DOCUMENT_LIMIT');
  });
});

describe('time and other users', () => {
  const bigHtml = () => `<html><body>${'<div><p>cell <b>bold</b> &amp; text</p></div>'.repeat(600_000)}</body></html>`;

  it("another user's read is answered while a slow conversion runs", async () => {
    put('slow.html', bigHtml());
    fs.mkdirSync(s.zonePath('storage', '', 'bob'), { recursive: true });
    fs.writeFileSync(s.zonePath('storage', 'hi.txt', 'bob'), 'hello\n');
    let slowDone = false;
    const slow = read({ path: 'slow.html', max_output: 100 }).then((r) => {
      slowDone = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 200));
    const t = performance.now();
    const other = await read({ path: 'hi.txt' }, { user: 'bob' });
    const otherMs = performance.now() - t;
    expect(other.data!.content).toBe('hello\n');
    expect(slowDone, `the other call (${otherMs.toFixed(0)} ms) waited for the conversion`).toBe(false);
    const r = await slow;
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data!.content.length).toBeLessThanOrEqual(100);
  }, 120_000);

  it('a conversion past the time limit is stopped with TIMEOUT', async () => {
    const quick = makeShed({ exec_timeout_default: 1 });
    try {
      fs.mkdirSync(quick.zonePath('storage'), { recursive: true });
      fs.writeFileSync(quick.zonePath('storage', 'slow.html'), bigHtml().repeat(2));
      const started = performance.now();
      const r = await quick.call('shed_read', { zone: 'storage', path: 'slow.html' });
      expect(r.success).toBe(false);
      // Converting it takes seconds: the 1 s deadline stops it (or the worker's heap cap, the other bound).
      expect(['TIMEOUT', 'RESOURCE_LIMIT'], JSON.stringify(r.error)).toContain(r.error!.code);
      expect(performance.now() - started).toBeLessThan(30_000);
    } finally {
      quick.cleanup();
    }
  }, 120_000);
});
