/**
 * Documents that answered with less than they hold (issue 32, the last list): a scanned PDF page said
 * "no text" and nothing else, now offered as a picture rendered by pdftoppm (confined like the other
 * converters) for a model that sees images; XLSX formula cells without a cached value came out
 * blank, now shown as their formula, counted in the answer.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as D from '../helpers/documents.mjs';
import { makeShed, type Shed } from '../helpers/shed.js';
import { pdfCountRuns } from '../../src/core/services/documents/pdf.js';

let s: Shed;
const put = (rel: string, c: string | Buffer) => {
  const p = s.zonePath('storage', rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, c);
};
const read = (args: Record<string, unknown>) => s.call('shed_read', { zone: 'storage', ...args });

/** A workbook as openpyxl writes one: formulas with no cached <v>, a shared formula, a computed empty string. */
function formulaWorkbook(): Buffer {
  const sheet = [
    '<row r="1"><c r="A1" t="inlineStr"><is><t>item</t></is></c><c r="B1" t="inlineStr"><is><t>price</t></is></c><c r="C1" t="inlineStr"><is><t>with tax</t></is></c></row>',
    '<row r="2"><c r="A2" t="inlineStr"><is><t>pen</t></is></c><c r="B2"><v>2</v></c><c r="C2"><f t="shared" ref="C2:C3" si="0">B2*1.2</f></c></row>',
    '<row r="3"><c r="A3" t="inlineStr"><is><t>ink</t></is></c><c r="B3"><v>5</v></c><c r="C3"><f t="shared" si="0"/></c></row>',
    '<row r="4"><c r="A4" t="inlineStr"><is><t>total</t></is></c><c r="B4"><f>SUM(B2:B3)</f></c><c r="C4" t="str"><f>IF(B4&gt;100,"big","")</f><v></v></c><c r="D4"><f>B4*2</f><v>14</v></c></row>',
  ].join('');
  const files: Record<string, string> = {
    '[Content_Types].xml': '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
    'xl/workbook.xml': '<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Prices" sheetId="1" r:id="rId1"/></sheets></workbook>',
    'xl/_rels/workbook.xml.rels': '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
    'xl/worksheets/sheet1.xml': `<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${sheet}</sheetData></worksheet>`,
  };
  return Buffer.from(zipSync(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, strToU8(v)]))));
}

/** An ODS whose formula cells hold no displayed value (a generator that does not calculate). */
function formulaOds(): Buffer {
  const NS = 'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"';
  const cell = (t: string) => `<table:table-cell office:value-type="string"><text:p>${t}</text:p></table:table-cell>`;
  const rows = [
    `<table:table-row>${cell('item')}${cell('price')}</table:table-row>`,
    `<table:table-row>${cell('pen')}<table:table-cell office:value-type="float" office:value="2"><text:p>2</text:p></table:table-cell></table:table-row>`,
    `<table:table-row>${cell('total')}<table:table-cell table:formula="of:=SUM([.B2:.B2])" office:value-type="float"/><table:table-cell table:formula="of:=[.B2]*2" office:value-type="float" office:value="4"/></table:table-row>`,
  ].join('');
  const content = `<?xml version="1.0" encoding="UTF-8"?><office:document-content ${NS}><office:body><office:spreadsheet><table:table table:name="Prices">${rows}</table:table></office:spreadsheet></office:body></office:document-content>`;
  const files = { mimetype: 'application/vnd.oasis.opendocument.spreadsheet', 'META-INF/manifest.xml': '<?xml version="1.0"?><manifest/>', 'content.xml': content };
  return Buffer.from(zipSync(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, strToU8(v)]))));
}

/** The colour of one pixel of a PNG data URI, read by ImageMagick. */
function pixel(dataUri: string, x: number, y: number): string {
  const png = Buffer.from(dataUri.replace(/^data:image\/png;base64,/, ''), 'base64');
  return execFileSync('convert', ['png:-', '-format', `%[pixel:p{${x},${y}}]`, 'info:'], { input: png }).toString();
}

beforeAll(() => {
  s = makeShed();
  put('scan.pdf', D.makePdf(['']));
  put('mixed.pdf', D.makePdf(['Page one text', '', 'Page three text', '']));
  put('allscan.pdf', D.makePdf(['', '']));
  put('prices.xlsx', formulaWorkbook());
  put('prices.ods', formulaOds());
});
afterAll(() => s.cleanup());

describe('a PDF page without text', () => {
  it('a one-page scan: the page comes as an image (data.image, as an image read), rendered at the model size, and the answer says so', async () => {
    const r = await read({ path: 'scan.pdf' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data!.pages_without_text).toEqual([1]);
    const image = r.data!.image;
    expect(image).toMatchObject({ mime_type: 'image/png', height: 1568 });
    expect(image.width).toBe(Math.round((1568 * 612) / 792));
    expect(r.data!.image_page).toBe(1);
    expect(r.message).toContain('Page 1 has no text');
    expect(r.message).toMatch(/Page 1 is attached as an image \(1212 x 1568 PNG, [\d.]+ KiB\) for a model that sees images/);
    // The blue square the page draws (72..272 pt from the bottom left) is in the picture; the margin is white.
    const scale = 1568 / 792;
    expect(pixel(image.data_uri, Math.round(172 * scale), Math.round((792 - 172) * scale))).toMatch(/^srgb\(0,0,255\)$/);
    expect(pixel(image.data_uri, 10, 10)).toMatch(/^(srgb\(255,255,255\)|white)$/);
  });

  it('paging through a PDF asks pdfinfo once: the page count is cached across calls', async () => {
    await read({ path: 'mixed.pdf', pages: '1' });
    const runs = pdfCountRuns();
    await read({ path: 'mixed.pdf', pages: '3' });
    await read({ path: 'mixed.pdf', pages: '4' });
    expect(pdfCountRuns()).toBe(runs);
  });

  it('pages with text beside one without: the answer names the call that shows it as an image, and that call attaches it', async () => {
    const r = await read({ path: 'mixed.pdf' });
    expect(r.data!.pages_without_text).toEqual([2, 4]);
    expect(r.data!.image).toBeUndefined();
    expect(r.message).toContain('A model that sees images can look at the page instead: shed_read(zone="storage", path="mixed.pdf", pages="2") attaches it as an image.');
    const page = await read({ path: 'mixed.pdf', pages: '2' });
    expect(page.data!.image_page).toBe(2);
    expect(page.data!.image.data_uri).toMatch(/^data:image\/png;base64,/);
  });

  it('only scanned pages in the range: the first is attached and the next one named', async () => {
    const r = await read({ path: 'allscan.pdf' });
    expect(r.data!.image_page).toBe(1);
    expect(r.message).toContain('The others one at a time: shed_read(zone="storage", path="allscan.pdf", pages="2").');
  });

  it('a byte cap below the PNG: re-encoded smaller (JPEG) within read_image_max_kb', async () => {
    const small = makeShed({ read_image_max_kb: 8 });
    try {
      fs.mkdirSync(small.zonePath('storage'), { recursive: true });
      fs.writeFileSync(small.zonePath('storage', 'scan.pdf'), D.makePdf(['']));
      const r = await small.call('shed_read', { zone: 'storage', path: 'scan.pdf' });
      expect(r.success, JSON.stringify(r.error)).toBe(true);
      expect(r.data!.image.bytes).toBeLessThanOrEqual(8 * 1024);
    } finally {
      small.cleanup();
    }
  });

  it.each(['bwrap', 'landlock'] as const)('pdftoppm runs in the %s sandbox like pdftotext', async (mode) => {
    const m = makeShed({ sandbox: mode });
    try {
      fs.mkdirSync(m.zonePath('storage'), { recursive: true });
      fs.writeFileSync(m.zonePath('storage', 'scan.pdf'), D.makePdf(['']));
      const r = await m.call('shed_read', { zone: 'storage', path: 'scan.pdf' });
      expect(r.success, JSON.stringify(r.error)).toBe(true);
      expect(r.data!.image.height).toBe(1568);
    } finally {
      m.cleanup();
    }
  });

  it('images turned off (read_image_max_kb=0): no image, and the answer says why', async () => {
    const off = makeShed({ read_image_max_kb: 0 });
    try {
      fs.mkdirSync(off.zonePath('storage'), { recursive: true });
      fs.writeFileSync(off.zonePath('storage', 'scan.pdf'), D.makePdf(['']));
      const r = await off.call('shed_read', { zone: 'storage', path: 'scan.pdf' });
      expect(r.data!.image).toBeUndefined();
      expect(r.message).toContain('Showing pages as images is turned off on this server (valve read_image_max_kb=0).');
    } finally {
      off.cleanup();
    }
  });
});

describe('XLSX formulas without a cached value', () => {
  it('are shown as their formula (a shared one named by its first cell) and counted; a cached value or a computed "" stays as it is', async () => {
    const r = await read({ path: 'prices.xlsx' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data!.content).toBe('item,price,with tax\npen,2,=B2*1.2\nink,5,=(shared formula of B2*1.2 (in C2))\ntotal,=SUM(B2:B3),,14\n');
    expect(r.data!.formulas_without_value).toBe(3);
    expect(r.message).toContain('3 formula cells of this sheet have no computed value in the file');
    expect(r.message).toContain('e.g. C2 =B2*1.2');
  });

  it('ODS: a formula cell without a displayed value shows its formula too (its stored value when it has one)', async () => {
    const r = await read({ path: 'prices.ods' });
    expect(r.success, JSON.stringify(r.error)).toBe(true);
    expect(r.data!.content).toBe('item,price\npen,2\ntotal,=SUM([.B2:.B2]),4\n');
    expect(r.data!.formulas_without_value).toBe(1);
    expect(r.message).toContain('1 formula cell of this sheet has no computed value in the file');
  });
});
