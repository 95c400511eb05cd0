/**
 * shed_read on real documents of every format, made in the test (helpers/documents.mjs): what part of
 * how much each answer shows, how to get the rest, pages and sheets, max_output, teaching errors,
 * and text files unchanged.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as D from '../helpers/documents.mjs';
import { makeShed, type Shed } from '../helpers/shed.js';

let s: Shed;
const put = (rel: string, c: string | Buffer) => {
  const p = s.zonePath('storage', rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, c);
};
const read = (args: Record<string, unknown>) => s.call('shed_read', { zone: 'storage', ...args });

beforeAll(() => {
  s = makeShed();
  put('report.pdf', D.makePdf(Array.from({ length: 31 }, (_v, i) => (i === 2 ? '' : `Page ${i + 1} heading\nBody of page ${i + 1}.`))));
  put('memo.docx', D.makeDocx([{ heading: 'Memo' }, 'First paragraph.', { table: [['Region', 'Total'], ['North', '10']] }, 'Last paragraph.']));
  put('sales.xlsx', D.makeXlsx({ Q1: [['region', 'total'], ['North', 10]], Q3: Array.from({ length: 600 }, (_v, i) => (i === 0 ? ['region', 'total'] : [`R${i}`, i])) }));
  put('deck.pptx', D.makePptx(['Intro slide\nAgenda', 'Results slide']));
  put('letter.odt', D.makeOdt(['Dear reader,', 'Regards.'], 'Letter'));
  put('table.ods', D.makeOds({ First: [['a', 'b'], ['1', '2']], Second: [['x']] }));
  put('talk.odp', D.makeOdp(['Opening', 'Closing']));
  put('book.epub', D.makeEpub([{ title: 'Chapter One', text: 'It was a dark night.' }, { title: 'Chapter Two', text: 'Morning came.' }]));
  put('mail.eml', D.makeEml());
  put('page.html', '<!doctype html><html><head><title>Quarter</title><style>body{}</style><script>var secret=1</script></head><body><h2>Numbers</h2><p>Up &amp; to the right&nbsp;today.</p><table><tr><td>a</td><td>b</td></tr></table></body></html>');
  put('notes.txt', 'one\ntwo\nthree\n');
});
afterAll(() => s.cleanup());

describe('paged documents', () => {
  it('PDF: whole pages while they fit, the page count, where to go on, and a page with no text', async () => {
    const r = await read({ path: 'report.pdf', max_output: 300 });
    expect(r.success, JSON.stringify(r)).toBe(true);
    expect(r.data!.total_pages).toBe(31);
    expect(r.data!.content).toMatch(/^--- page 1 of 31 ---\nPage 1 heading\nBody of page 1\.\n/);
    expect(r.data!.content.length).toBeLessThanOrEqual(300);
    const last = r.data!.last_page as number;
    expect(last).toBeGreaterThanOrEqual(3);
    expect(r.message).toContain(`Showing pages 1-${last}`);
    expect(r.message).toContain(`pages="${last + 1}-"`);
    expect(r.data!.pages_without_text).toEqual([3]);
    expect(r.message).toMatch(/Page 3 has no text \(scanned/);
    expect(r.data!.content).toContain('--- page 3 of 31: no text on this page (a scanned image?) ---');
  });

  it('PDF pages="29-" reads to the end; pages past the end teach', async () => {
    const r = await read({ path: 'report.pdf', pages: '29-' });
    expect([r.data!.first_page, r.data!.last_page]).toEqual([29, 31]);
    expect(r.data!.next_pages).toBeUndefined();
    const n = await read({ path: 'report.pdf', pages: 2 });
    expect([n.data!.first_page, n.data!.last_page, n.data!.content]).toEqual([2, 2, '--- page 2 of 31 ---\nPage 2 heading\nBody of page 2.\n']);
    const past = await read({ path: 'report.pdf', pages: '40-45' });
    expect(past.error!.code).toBe('INVALID_PARAMETER');
    expect(past.error!.message).toContain('only 31 pages');
    expect(past.error!.hint).toMatch(/shed_read\(.*pages=/);
    const bad = await read({ path: 'report.pdf', pages: 'two' });
    expect(bad.error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'pages', received: 'two' } });
    expect(bad.error!.hint).toContain('pages="2-4"');
  });

  it('a page longer than max_output is cut by lines, with the call that continues it', async () => {
    const r = await read({ path: 'report.pdf', pages: '1', max_output: 25 });
    expect(r.data!.content.length).toBeLessThanOrEqual(25);
    expect(r.data!.truncated).toBe(true);
    expect(r.message).toMatch(/continue with shed_read\(.*pages="1", start_line=\d+\)/);
    const next = await read({ path: 'report.pdf', pages: '1', start_line: r.data!.next_start_line });
    expect(next.data!.content).toContain('Body of page 1.');
  });

  it('PPTX slides in presentation order, ODP pages', async () => {
    const r = await read({ path: 'deck.pptx' });
    expect(r.data!.content).toBe('--- slide 1 of 2 ---\nIntro slide\nAgenda\n--- slide 2 of 2 ---\nResults slide\n');
    expect(r.message).toContain('2 slides');
    const two = await read({ path: 'deck.pptx', pages: '2' });
    expect(two.data!.content).toBe('--- slide 2 of 2 ---\nResults slide\n');
    const odp = await read({ path: 'talk.odp' });
    expect(odp.data!.content).toBe('--- slide 1 of 2 ---\nOpening\n--- slide 2 of 2 ---\nClosing\n');
  });
});

describe('documents as text', () => {
  it('DOCX: headings, paragraphs, tables', async () => {
    const r = await read({ path: 'memo.docx' });
    expect(r.data!.content).toBe('# Memo\n\nFirst paragraph.\n\nRegion | Total\nNorth | 10\n\nLast paragraph.\n');
    expect(r.message).toContain('Word document (DOCX) as text: lines 1-8 of 8');
  });

  it('DOCX lines and max_output like a text file', async () => {
    const r = await read({ path: 'memo.docx', start_line: 3, end_line: 5 });
    expect(r.data!.content).toBe('First paragraph.\n\nRegion | Total\n');
    const cut = await read({ path: 'memo.docx', max_output: 20 });
    expect(cut.data!.truncated).toBe(true);
    expect(cut.data!.content.length).toBeLessThanOrEqual(20);
    expect(cut.message).toContain(`start_line=${cut.data!.next_start_line}`);
  });

  it('ODT, EPUB (spine order, no scripts or styles), EML, HTML', async () => {
    expect((await read({ path: 'letter.odt' })).data!.content).toBe('# Letter\n\nDear reader,\n\nRegards.\n');
    const book = (await read({ path: 'book.epub' })).data!.content as string;
    expect(book.indexOf('Morning came.')).toBeLessThan(book.indexOf('It was a dark night.'));
    expect(book).toContain('# Chapter Two');
    expect(book).not.toMatch(/alert|color:red/);
    const mail = await read({ path: 'mail.eml' });
    expect(mail.data!.content).toBe('From: Jürgen Müller <jm@example.com>\nTo: team@example.com\nDate: Tue, 3 Mar 2026 10:00:00 +0100\nSubject: Quarterly résumé\nAttachments: q3.pdf (application/pdf, 16 bytes)\n\nHello team,\nThe numbers are attached. Café at 10.\n');
    const html = await read({ path: 'page.html' });
    expect(html.data!.content).toBe('Quarter\n\n## Numbers\n\nUp & to the right\u00a0today.\n\na | b\n');
    expect(html.message).toContain('raw=true');
    const raw = await read({ path: 'page.html', raw: true });
    expect(raw.data!.content).toContain('<script>var secret=1</script>');
  });
});

describe('spreadsheets', () => {
  it('the first sheet by default, others by name or number, rows as lines', async () => {
    const r = await read({ path: 'sales.xlsx' });
    expect(r.data).toMatchObject({ sheet: 'Q1', sheet_number: 1, sheets: ['Q1', 'Q3'], content: 'region,total\nNorth,10\n', total_rows: 2 });
    const q3 = await read({ path: 'sales.xlsx', sheet: 'q3', start_line: 500, max_output: 40 });
    expect(q3.data!.content.startsWith('R499,499\n')).toBe(true);
    expect(q3.message).toMatch(/sheet "Q3" as CSV \(line N = row N\): rows 500-\d+ of 600/);
    expect(q3.message).toMatch(/sheet="Q3", start_line=\d+/);
    expect((await read({ path: 'sales.xlsx', sheet: 2, end_line: 1 })).data!.content).toBe('region,total\n');
    const none = await read({ path: 'sales.xlsx', sheet: 'Q2' });
    expect(none.error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'sheet', received: 'Q2', expected: ['Q1', 'Q3'] } });
    expect(none.error!.message).toContain('1: "Q1", 2: "Q3"');
  });

  it('ODS: a million repeated empty rows and 16,000 empty cells cost nothing', async () => {
    const r = await read({ path: 'table.ods' });
    expect(r.data).toMatchObject({ sheet: 'First', content: 'a,b\n1,2\n', total_rows: 2, sheets: ['First', 'Second'] });
    expect((await read({ path: 'table.ods', sheet: 'Second' })).data!.content).toBe('x\n');
  });
});

describe('parameters and text files', () => {
  it('pages and sheet teach where they do not apply', async () => {
    const p = await read({ path: 'memo.docx', pages: '1' });
    expect(p.error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'pages' } });
    expect(p.error!.hint).toMatch(/shed_read\(.*start_line=1/);
    const t = await read({ path: 'notes.txt', sheet: 'A' });
    expect(t.error).toMatchObject({ code: 'INVALID_PARAMETER', details: { parameter: 'sheet' } });
  });

  it('a text file answers as before', async () => {
    const r = await read({ path: 'notes.txt', start_line: 2 });
    expect(r.data).toEqual({ path: 'notes.txt', zone: 'Storage', content: 'two\nthree\n', size: 14, total_lines: 3, start_line: 2, end_line: 3, truncated: false });
    expect(r.message).toBe('Read lines 2-3 of 3 (10 characters).');
  });
});

describe('images', () => {
  it('PNG, JPEG, GIF and WebP come back as a scaled image with the original size in the text', async () => {
    put('big.png', D.makePng(3000, 1500));
    put('photo.jpg', D.convertImage(4000, 3000, 'jpg'));
    put('anim.gif', D.convertImage(300, 200, 'gif'));
    put('pic.webp', D.convertImage(2000, 2000, 'webp'));
    const cases: Array<[string, string, number, number, number, number]> = [
      ['big.png', 'image/png', 3000, 1500, 1568, 784],
      ['photo.jpg', 'image/jpeg', 4000, 3000, 1568, 1176],
      ['anim.gif', 'image/png', 300, 200, 300, 200],
      ['pic.webp', 'image/png', 2000, 2000, 1568, 1568],
    ];
    for (const [file, mime, ow, oh, w, h] of cases) {
      const r = await read({ path: file });
      expect(r.success, `${file}: ${JSON.stringify(r.error)}`).toBe(true);
      const img = r.data!.image;
      expect(img, file).toMatchObject({ mime_type: mime, original_width: ow, original_height: oh, width: w, height: h });
      expect(img.data_uri.startsWith(`data:${mime};base64,`)).toBe(true);
      expect(Buffer.from(img.data_uri.split(',')[1], 'base64').length).toBe(img.bytes);
      expect(img.bytes).toBeLessThanOrEqual(1024 * 1024);
      expect(r.message).toContain(`${ow} x ${oh} pixels`);
    }
  }, 60_000);

  it('the byte cap is a valve; 0 turns images off', async () => {
    const small = makeShed({ read_image_max_kb: 20 });
    const off = makeShed({ read_image_max_kb: 0 });
    try {
      for (const shed of [small, off]) {
        fs.mkdirSync(shed.zonePath('storage'), { recursive: true });
        fs.writeFileSync(shed.zonePath('storage', 'photo.jpg'), D.convertImage(2400, 1800, 'jpg'));
      }
      const r = await small.call('shed_read', { zone: 'storage', path: 'photo.jpg' });
      expect(r.success, JSON.stringify(r.error)).toBe(true);
      expect(r.data!.image.bytes).toBeLessThanOrEqual(20 * 1024);
      const o = await off.call('shed_read', { zone: 'storage', path: 'photo.jpg' });
      expect(o.error!.code).toBe('INVALID_FORMAT');
      expect(o.error!.message).toContain('read_image_max_kb=0');
    } finally {
      small.cleanup();
      off.cleanup();
    }
  }, 60_000);
});
