/**
 * CSV import with real files on disk: encodings, delimiters, headers, types, ragged rows, limits,
 * injection in table names, and the database file checked afterwards with a fresh engine.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';
import { ENGINES, useEngine } from './engines.js';
import { columnTypes, makeDb, onDisk, put } from './helpers.js';

let s: Shed;
afterEach(() => s?.cleanup());

const imp = (args: Record<string, unknown>) => s.call('shed_sqlite', { zone: 'storage', path: 'data.db', table: 't', ...args });
const db = () => s.zonePath('storage', 'data.db');

describe.each(ENGINES)('%s engine', (engine) => {
  useEngine(engine);

  describe('CSV import: types and values', () => {
    it('infers INTEGER, REAL, TEXT and DATE and stores exact values', async () => {
      s = makeShed();
      put(s, 'sales.csv', 'id,name,price,day,code\n1,apple,1.5,2024-01-31,007\n2,pear,2,2024-02-29,010\n3,"fig, dried",0.25,2023-12-01,123\n');
      const r = await imp({ import_csv: 'sales.csv' });
      expect(r.success, JSON.stringify(r)).toBe(true);
      expect(r.data).toMatchObject({ table: 't', rows_imported: 3, columns: ['id', 'name', 'price', 'day', 'code'] });
      expect(r.data!.import_info).toMatchObject({
        column_types: { id: 'INTEGER', name: 'TEXT', price: 'REAL', day: 'DATE', code: 'TEXT' },
        detected_encoding: 'utf-8',
        detected_delimiter: ',',
      });
      expect(await columnTypes(db(), 't')).toEqual({ id: 'INTEGER', name: 'TEXT', price: 'REAL', day: 'DATE', code: 'TEXT' });
      expect(await onDisk(db(), 'SELECT id, typeof(id), name, price, typeof(price), day, code FROM t ORDER BY id')).toEqual([
        [1, 'integer', 'apple', 1.5, 'real', '2024-01-31', '007'],
        [2, 'integer', 'pear', 2, 'real', '2024-02-29', '010'],
        [3, 'integer', 'fig, dried', 0.25, 'real', '2023-12-01', '123'],
      ]);
      expect(r.message).toContain("Imported 3 rows");
      expect(r.message).toContain('id INTEGER');
    });

    it('keeps integers beyond 2^53 exact and stores integers beyond 64 bits as text', async () => {
      s = makeShed();
      put(s, 'big.csv', 'a,b\n9007199254740993,123456789012345678901\n-9223372036854775808,1\n');
      const r = await imp({ import_csv: 'big.csv' });
      expect(r.data!.import_info.column_types).toEqual({ a: 'INTEGER', b: 'TEXT' });
      expect(await onDisk(db(), "SELECT CAST(a AS TEXT), typeof(a), b FROM t")).toEqual([
        ['9007199254740993', 'integer', '123456789012345678901'],
        ['-9223372036854775808', 'integer', '1'],
      ]);
      const q = await s.call('shed_sqlite', { zone: 'storage', path: 'data.db', query: 'SELECT a FROM t' });
      expect(q.data!.rows).toEqual([['9007199254740993'], ['-9223372036854775808']]);
    });

    it('empty fields are NULL; NA markers are NULL in numeric columns and text in text columns', async () => {
      s = makeShed();
      put(s, 'na.csv', 'n,country\n1,NA\nNA,FR\n,\n4,N/A\n');
      const r = await imp({ import_csv: 'na.csv' });
      expect(r.data!.import_info.column_types).toEqual({ n: 'INTEGER', country: 'TEXT' });
      expect(await onDisk(db(), 'SELECT n, country FROM t')).toEqual([
        [1, 'NA'],
        [null, 'FR'],
        [null, null],
        [4, 'N/A'],
      ]);
    });

    it('widens a column when a late value does not fit (two passes), storing the original text', async () => {
      s = makeShed();
      const lines = ['id,v,w'];
      for (let i = 1; i <= 150000; i++) lines.push(`${i},${i},${i}`);
      lines.push('150001,abc,1.5');
      put(s, 'late.csv', `${lines.join('\n')}\n`);
      const r = await imp({ import_csv: 'late.csv' });
      expect(r.success, JSON.stringify(r.error)).toBe(true);
      expect(r.data!.rows_imported).toBe(150001);
      expect(r.data!.import_info.column_types).toEqual({ id: 'INTEGER', v: 'TEXT', w: 'REAL' });
      expect(r.data!.import_info.passes).toBe(2);
      expect(await onDisk(db(), "SELECT count(*), sum(typeof(v) = 'text'), max(CASE WHEN id = 120000 THEN v END), sum(w) FROM t")).toEqual([[150001, 150001, '120000', 11250075001.5]]);
    });

    it('treats numbers with leading zeros as text everywhere in the column', async () => {
      s = makeShed();
      put(s, 'zip.csv', 'zip\n75001\n01000\n');
      await imp({ import_csv: 'zip.csv' });
      expect(await onDisk(db(), 'SELECT zip, typeof(zip) FROM t')).toEqual([
        ['75001', 'text'],
        ['01000', 'text'],
      ]);
    });

    it('all-empty columns are TEXT; a header-only file makes an empty table', async () => {
      s = makeShed();
      put(s, 'h.csv', 'a,b,c\n');
      const r = await imp({ import_csv: 'h.csv' });
      expect(r.success).toBe(true);
      expect(r.data!.rows_imported).toBe(0);
      expect(r.message).toContain('no data rows');
      expect(await columnTypes(db(), 't')).toEqual({ a: 'TEXT', b: 'TEXT', c: 'TEXT' });
    });
  });

  describe('CSV import: encodings and delimiters', () => {
    it('European file: Windows-1252 bytes, semicolons, decimal comma, day-first dates', async () => {
      s = makeShed();
      const text = 'Prénom;Montant (€);Date;Ville\r\nZoé;1.234,56;31/12/2024;Besançon\r\nAndré;-7,5;01/02/2024;Orléans\r\n';
      put(s, 'euro.csv', Buffer.from(text, 'latin1').map((b, i) => (text[i] === '€' ? 0x80 : b)));
      const r = await imp({ import_csv: 'euro.csv', decimal: ',', date_columns: ['Date'], date_format: 'dayfirst' });
      expect(r.success, JSON.stringify(r.error)).toBe(true);
      expect(r.data!.import_info).toMatchObject({
        detected_encoding: 'windows-1252',
        detected_delimiter: ';',
        column_types: { Prénom: 'TEXT', Montant: 'REAL', Date: 'DATE', Ville: 'TEXT' },
        renamed_columns: { 'Montant (€)': 'Montant' },
      });
      expect(await onDisk(db(), 'SELECT * FROM t')).toEqual([
        ['Zoé', 1234.56, '2024-12-31', 'Besançon'],
        ['André', -7.5, '2024-02-01', 'Orléans'],
      ]);
    });

    it('decimal omitted, a ;-separated file with 1.234,56: the decimal comma is applied and SUM is right', async () => {
      s = makeShed();
      put(s, 'c.csv', 'name;price;qty\nA;1.234,56;1.000\nB;310,40;2\nC;-0,5;3\n');
      const r = await imp({ import_csv: 'c.csv' });
      expect(r.success, JSON.stringify(r.error)).toBe(true);
      expect(r.data!.import_info).toMatchObject({ column_types: { price: 'REAL', qty: 'INTEGER' }, detected_decimal: ',', decimal_comma_columns: ['price'] });
      expect(r.message).toContain("a decimal comma was detected (1.234,56 read as 1234.56) in 'price'");
      expect(await onDisk(db(), 'SELECT round(SUM(price), 2), SUM(qty) FROM t')).toEqual([[1544.46, 1005]]);
    });

    it('decimal="." given: the comma numbers stay text and every suggestion is in the message', async () => {
      s = makeShed();
      put(s, 'c.csv', 'name;price;cost\nA;1,5;2,5\nB;2,25;3,75\n');
      const r = await imp({ import_csv: 'c.csv', decimal: '.' });
      expect(r.data!.import_info.column_types).toMatchObject({ price: 'TEXT', cost: 'TEXT' });
      expect(r.data!.import_info.detected_decimal).toBeUndefined();
      expect(r.message).toContain("Column 'price' looks like numbers with a decimal comma");
      expect(r.message).toContain("Column 'cost' looks like numbers with a decimal comma");
    });

    it('mixed marks (1.234,56 beside 3.14) are not guessed: TEXT, and the message says why, with each suggestion', async () => {
      s = makeShed();
      put(s, 'm.csv', 'name;amount;rate;total\nA;1.234,56;3.14;7,5\nB;310,40;2.5;1,25\n');
      const r = await imp({ import_csv: 'm.csv' });
      expect(r.data!.import_info).toMatchObject({ column_types: { amount: 'TEXT', rate: 'REAL', total: 'TEXT' }, detected_decimal: 'mixed' });
      expect(r.message).toContain("The decimal mark was not guessed: columns 'amount', 'total' look like numbers with a decimal comma");
      expect(r.message).toContain("other columns ('rate') hold numbers with a decimal point");
      expect(r.message).toContain("Column 'amount' looks like numbers with a decimal comma");
      expect(r.message).toContain("Column 'total' looks like numbers with a decimal comma");
    });

    it('a ,-separated file with quoted "1,5" is not guessed either (a comma there is often a thousands separator)', async () => {
      s = makeShed();
      put(s, 'q.csv', 'name,price\nA,"1,5"\nB,"2,25"\n');
      const r = await imp({ import_csv: 'q.csv' });
      expect(r.data!.import_info.column_types.price).toBe('TEXT');
      expect(r.message).toContain('the fields are separated by commas');
      expect(r.message).toContain('decimal=","');
    });

    it('only ambiguous values (1,234 with three digits) are not taken as decimal commas', async () => {
      s = makeShed();
      put(s, 'a.csv', 'name;n\nA;1,234\nB;5,678\n');
      const r = await imp({ import_csv: 'a.csv' });
      expect(r.data!.import_info.column_types.n).toBe('TEXT');
      expect(r.data!.import_info.detected_decimal).toBeUndefined();
    });

    it('a UTF-8 file with a BOM: the BOM is not part of the first column name', async () => {
      s = makeShed();
      put(s, 'bom.csv', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('name,n\nÅsa,1\n')]));
      const r = await imp({ import_csv: 'bom.csv' });
      expect(r.data!.columns).toEqual(['name', 'n']);
      expect(r.data!.import_info.detected_encoding).toBe('utf-8-sig');
      expect(await onDisk(db(), 'SELECT name FROM t')).toEqual([['Åsa']]);
    });

    it('UTF-16 LE with BOM (spreadsheet "Unicode text") is read', async () => {
      s = makeShed();
      put(s, 'u16.csv', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a\tb\nä\t2\n', 'utf16le')]));
      const r = await imp({ import_csv: 'u16.csv' });
      expect(r.data!.import_info).toMatchObject({ detected_encoding: 'utf-16le', detected_delimiter: '\\t' });
      expect(await onDisk(db(), 'SELECT a, b FROM t')).toEqual([['ä', 2]]);
    });

    it('a TSV file: delimiter sniffed, and the two characters \\t accepted as delimiter', async () => {
      s = makeShed();
      put(s, 'x.tsv', 'a\tb\tc\n1\tx,y\t2.5\n');
      const sniffed = await imp({ import_csv: 'x.tsv' });
      expect(sniffed.data!.import_info.detected_delimiter).toBe('\\t');
      expect(await onDisk(db(), 'SELECT b FROM t')).toEqual([['x,y']]);
      const given = await imp({ import_csv: 'x.tsv', delimiter: '\\t', if_exists: 'replace' });
      expect(given.success).toBe(true);
      expect(await onDisk(db(), 'SELECT a, b, c FROM t')).toEqual([[1, 'x,y', 2.5]]);
    });

    it('a UTF-8 guess that meets invalid bytes late in the file restarts as Windows-1252', async () => {
      s = makeShed();
      const rows = ['city,n'];
      for (let i = 0; i < 40000; i++) rows.push(`Paris,${i}`);
      put(s, 'late.csv', Buffer.concat([Buffer.from(`${rows.join('\n')}\n`), Buffer.from('Orl\xe9ans,1\n', 'latin1')]));
      const r = await imp({ import_csv: 'late.csv' });
      expect(r.success, JSON.stringify(r.error)).toBe(true);
      expect(r.data!.import_info.detected_encoding).toBe('windows-1252');
      expect(await onDisk(db(), "SELECT count(*), max(CASE WHEN city <> 'Paris' THEN city END) FROM t")).toEqual([[40001, 'Orléans']]);
    });

    it('an explicit utf-8 encoding with invalid bytes is a CSV_PARSE_ERROR naming the encoding', async () => {
      s = makeShed();
      put(s, 'bad.csv', Buffer.from('a\n\xe9\n', 'latin1'));
      const r = await imp({ import_csv: 'bad.csv', encoding: 'utf-8' });
      expect(r.error?.code).toBe('CSV_PARSE_ERROR');
      expect(r.error?.message).toContain('utf-8');
      expect(r.error?.hint).toContain('windows-1252');
      expect(fs.existsSync(db())).toBe(false);
    });

    it('an unknown encoding name is refused with the supported ones', async () => {
      s = makeShed();
      put(s, 'a.csv', 'a\n1\n');
      const r = await imp({ import_csv: 'a.csv', encoding: 'ebcdic' });
      expect(r.error?.code).toBe('INVALID_PARAMETER');
      expect(r.error?.message).toContain("'encoding'");
      expect(r.error?.message).toContain('latin-1');
    });

    it('old Mac (CR only) line ends are lines', async () => {
      s = makeShed();
      put(s, 'mac.csv', 'a,b\r1,2\r3,4\r');
      const r = await imp({ import_csv: 'mac.csv' });
      expect(r.data!.rows_imported).toBe(2);
      expect(await onDisk(db(), 'SELECT a, b FROM t')).toEqual([
        [1, 2],
        [3, 4],
      ]);
    });

    it('a one-character delimiter only: "ab" is refused', async () => {
      s = makeShed();
      put(s, 'a.csv', 'a\n1\n');
      const r = await imp({ import_csv: 'a.csv', delimiter: ';;' });
      expect(r.error?.code).toBe('INVALID_PARAMETER');
      expect(r.error?.message).toContain("'delimiter'");
    });
  });

  describe('CSV import: structure', () => {
    it('quoted fields with delimiters, doubled quotes and newlines, anywhere in a large file', async () => {
      s = makeShed();
      const rows = ['id,text'];
      for (let i = 1; i <= 50000; i++) rows.push(i === 41234 ? `${i},"line one\nline ""two"", with comma"` : `${i},plain ${i}`);
      put(s, 'q.csv', `${rows.join('\r\n')}\r\n`);
      const r = await imp({ import_csv: 'q.csv' });
      expect(r.success, JSON.stringify(r.error)).toBe(true);
      expect(r.data!.rows_imported).toBe(50000);
      expect(await onDisk(db(), 'SELECT text FROM t WHERE id IN (41233, 41234, 41235) ORDER BY id')).toEqual([
        ['plain 41233'],
        ['line one\nline "two", with comma'],
        ['plain 41235'],
      ]);
      expect(await onDisk(db(), 'SELECT count(*), sum(id) FROM t')).toEqual([[50000, 1250025000]]);
    });

    it('a quoted cell with line breaks larger than a read block (3 MB) is one value', async () => {
      s = makeShed();
      const big = Array.from({ length: 60000 }, (_, i) => `line ${i}, with "quotes"`).join('\n');
      const rows = ['id,text,after'];
      for (let i = 1; i <= 20000; i++) rows.push(`${i},plain,x`);
      rows.push(`20001,"${big.replace(/"/g, '""')}",y`);
      for (let i = 20002; i <= 40000; i++) rows.push(`${i},plain,z`);
      put(s, 'cell.csv', `${rows.join('\n')}\n`);
      const r = await imp({ import_csv: 'cell.csv' });
      expect(r.success, JSON.stringify(r.error)).toBe(true);
      expect(r.data!.rows_imported).toBe(40000);
      expect(await onDisk(db(), 'SELECT text = ?1, after FROM t WHERE id = 20001'.replace('?1', `'${big.replace(/'/g, "''")}'`))).toEqual([[1, 'y']]);
      expect(await onDisk(db(), "SELECT count(*) FROM t WHERE text = 'plain'")).toEqual([[39999]]);
    });

    it('ragged rows: short ones padded with NULL, long ones cut, both reported', async () => {
      s = makeShed();
      put(s, 'r.csv', 'a,b,c\n1,2,3\n4,5\n6,7,8,9\n');
      const r = await imp({ import_csv: 'r.csv' });
      expect(r.data!.import_info).toMatchObject({ rows_padded: 1, rows_truncated: 1, first_ragged_row: 2 });
      expect(r.message).toContain('2 rows had a different number of fields');
      expect(await onDisk(db(), 'SELECT a, b, c FROM t')).toEqual([
        [1, 2, 3],
        [4, 5, null],
        [6, 7, 8],
      ]);
    });

    it('headers are sanitised and made unique', async () => {
      s = makeShed();
      put(s, 'h.csv', ' First Name ,first name,,2024,select,a-b\n1,2,3,4,5,6\n');
      const r = await imp({ import_csv: 'h.csv' });
      expect(r.data!.columns).toEqual(['First_Name', 'first_name_2', 'col_3', '_2024', 'select', 'a_b']);
      expect(await onDisk(db(), 'SELECT "select", a_b FROM t')).toEqual([[5, 6]]);
    });

    it('has_header=false names columns col_1..; skip_rows skips lines before the header', async () => {
      s = makeShed();
      put(s, 'n.csv', 'report v2\ngenerated today\nx,y\n1,2\n');
      const skipped = await imp({ import_csv: 'n.csv', skip_rows: 2 });
      expect(skipped.data!.columns).toEqual(['x', 'y']);
      expect(skipped.data!.rows_imported).toBe(1);
      put(s, 'noh.csv', '1,a\n2,b\n');
      const r = await imp({ import_csv: 'noh.csv', has_header: false, table: 'u' });
      expect(r.data!.columns).toEqual(['col_1', 'col_2']);
      expect(r.data!.import_info.generated_columns).toBe(true);
      expect(await onDisk(db(), 'SELECT * FROM u')).toEqual([
        [1, 'a'],
        [2, 'b'],
      ]);
    });

    it('blank lines are skipped and counted; a whitespace-only line is data', async () => {
      s = makeShed();
      put(s, 'b.csv', 'a\n1\n\n\n2\n   \n');
      const r = await imp({ import_csv: 'b.csv' });
      expect(r.data!.rows_imported).toBe(3);
      expect(r.data!.import_info.blank_lines_skipped).toBe(2);
      expect(await onDisk(db(), 'SELECT a FROM t')).toEqual([['1'], ['2'], ['   ']]);
    });

    it('date formats: explicit pattern, month-first, guessed order, unparsed values kept', async () => {
      s = makeShed();
      put(s, 'd.csv', 'a,b,c\n31.12.2024,12/31/2024,25/01/2024\n01.02.2024,02/01/2024,n/a date\n');
      const r = await imp({ import_csv: 'd.csv', date_columns: ['a'], date_format: '%d.%m.%Y' });
      expect(r.success, JSON.stringify(r.error)).toBe(true);
      expect(await onDisk(db(), 'SELECT a FROM t')).toEqual([['2024-12-31'], ['2024-02-01']]);
      const m = await imp({ import_csv: 'd.csv', date_columns: ['b'], date_format: 'monthfirst', if_exists: 'replace' });
      expect(m.success).toBe(true);
      expect(await onDisk(db(), 'SELECT b FROM t')).toEqual([['2024-12-31'], ['2024-02-01']]);
      const g = await imp({ import_csv: 'd.csv', date_columns: ['c'], if_exists: 'replace' });
      expect(g.data!.import_info.date_columns).toEqual({ c: 'dayfirst' });
      expect(g.data!.import_info.unparsed_dates).toEqual({ c: 1 });
      expect(await onDisk(db(), 'SELECT c FROM t')).toEqual([['2024-01-25'], ['n/a date']]);
    });

    it('date_format with a bad directive, and date_columns naming no column, are parameter errors', async () => {
      s = makeShed();
      put(s, 'd.csv', 'a\n2024-01-01\n');
      const bad = await imp({ import_csv: 'd.csv', date_columns: ['a'], date_format: '%Q/%m/%Y' });
      expect(bad.error?.code).toBe('INVALID_PARAMETER');
      expect(bad.error?.message).toContain("'date_format'");
      const missing = await imp({ import_csv: 'd.csv', date_columns: ['nope'] });
      expect(missing.error?.code).toBe('INVALID_PARAMETER');
      expect(missing.error?.message).toContain("'date_columns'");
      expect(missing.error?.hint).toContain('a');
    });
  });

  describe('CSV import: refusals and limits', () => {
    it('an empty file, and a file of blank lines, are CSV_EMPTY (with or without header)', async () => {
      s = makeShed();
      put(s, 'e.csv', '');
      put(s, 'blank.csv', '\n\n\r\n');
      for (const [file, has_header] of [['e.csv', true], ['e.csv', false], ['blank.csv', true], ['blank.csv', false]] as const) {
        const r = await imp({ import_csv: file, has_header });
        expect(r.error?.code, `${file} ${has_header}`).toBe('CSV_EMPTY');
      }
      expect(fs.existsSync(db())).toBe(false);
    });

    it('5001 columns (and 2001) are CSV_TOO_WIDE; 2000 columns import', async () => {
      s = makeShed();
      const wide = (n: number) => `${Array.from({ length: n }, (_, i) => `c${i}`).join(',')}\n${Array.from({ length: n }, (_, i) => i).join(',')}\n`;
      put(s, 'w5001.csv', wide(5001));
      put(s, 'w2001.csv', wide(2001));
      put(s, 'w2000.csv', wide(2000));
      const r = await imp({ import_csv: 'w5001.csv' });
      expect(r.error?.code).toBe('CSV_TOO_WIDE');
      expect(r.error?.message).toContain('5001 columns');
      expect((await imp({ import_csv: 'w2001.csv' })).error?.code).toBe('CSV_TOO_WIDE');
      const ok = await imp({ import_csv: 'w2000.csv' });
      expect(ok.success, JSON.stringify(ok.error)).toBe(true);
      expect(await onDisk(db(), 'SELECT c1999 FROM t')).toEqual([[1999]]);
    });

    it('an unterminated quote is a CSV_PARSE_ERROR and nothing is written', async () => {
      s = makeShed();
      put(s, 'q.csv', 'a,b\n1,"never closed\n2,3\n');
      const r = await imp({ import_csv: 'q.csv' });
      expect(r.error?.code).toBe('CSV_PARSE_ERROR');
      expect(r.error?.message.toLowerCase()).toContain('quote');
      expect(fs.existsSync(db())).toBe(false);
    });

    it.each([
      ['t; DROP TABLE x', 't_DROP_TABLE_x'],
      ['a"b', 'a_b'],
      ["a'b", 'a_b'],
      ['1abc', 't_1abc'],
      ['sqlite_master', 't_sqlite_master'],
      ['t-2024', 't_2024'],
    ])('table name %j is refused (injection-safe) with a suggestion', async (table, suggested) => {
      s = makeShed();
      await makeDb(db(), 'CREATE TABLE x(a); INSERT INTO x VALUES (1);');
      put(s, 'a.csv', 'a\n1\n');
      const before = fs.readFileSync(db());
      const r = await imp({ import_csv: 'a.csv', table });
      expect(r.error?.code).toBe('INVALID_PARAMETER');
      expect(r.error?.message).toContain("'table'");
      expect(r.error?.details?.suggested).toBe(suggested);
      expect(r.error?.hint).toContain(`table="${suggested}"`);
      expect(fs.readFileSync(db()).equals(before)).toBe(true);
    });

    it('if_exists: fail (TABLE_EXISTS), replace, append, and append with other columns refused', async () => {
      s = makeShed();
      put(s, 'a.csv', 'a,b\n1,x\n');
      put(s, 'other.csv', 'z\n1\n');
      expect((await imp({ import_csv: 'a.csv' })).success).toBe(true);
      const again = await imp({ import_csv: 'a.csv' });
      expect(again.error?.code).toBe('TABLE_EXISTS');
      expect(again.error?.hint).toContain('if_exists="replace"');
      expect((await imp({ import_csv: 'a.csv', if_exists: 'append' })).success).toBe(true);
      expect(await onDisk(db(), 'SELECT count(*) FROM t')).toEqual([[2]]);
      expect((await imp({ import_csv: 'a.csv', if_exists: 'replace' })).success).toBe(true);
      expect(await onDisk(db(), 'SELECT count(*) FROM t')).toEqual([[1]]);
      const mismatch = await imp({ import_csv: 'other.csv', if_exists: 'append' });
      expect(mismatch.error?.code).toBe('INVALID_PARAMETER');
      expect(mismatch.error?.message).toContain("'z'");
    });

    it('append keeps the existing table and its constraints (a violation is an SQL_ERROR, nothing written)', async () => {
      s = makeShed();
      await makeDb(db(), 'CREATE TABLE t(a INTEGER NOT NULL, b TEXT); INSERT INTO t VALUES (1, "x");');
      const before = fs.readFileSync(db());
      put(s, 'a.csv', 'a,b\n2,y\n,z\n');
      const r = await imp({ import_csv: 'a.csv', if_exists: 'append' });
      expect(r.error?.code).toBe('SQL_ERROR');
      expect(r.error?.message).toContain('NOT NULL');
      expect(fs.readFileSync(db()).equals(before)).toBe(true);
    });

    it('the CSV must exist in the same zone; import in Uploads is ZONE_FORBIDDEN', async () => {
      s = makeShed();
      const missing = await imp({ import_csv: 'nope.csv' });
      expect(missing.error?.code).toBe('FILE_NOT_FOUND');
      expect(missing.error?.details?.parameter).toBe('import_csv');
      put(s, 'u.csv', 'a\n1\n', 'uploads');
      const up = await s.call('shed_sqlite', { zone: 'uploads', path: 'u.db', import_csv: 'u.csv', table: 't' });
      expect(up.error?.code).toBe('ZONE_FORBIDDEN');
      expect(up.error?.hint).toContain('shed_move_uploads_to_storage');
      expect(fs.existsSync(s.zonePath('uploads', 'u.db'))).toBe(false);
    });

    it('the sqlite_readonly valve refuses imports too', async () => {
      s = makeShed({ sqlite_readonly: true });
      put(s, 'a.csv', 'a\n1\n');
      const r = await imp({ import_csv: 'a.csv' });
      expect(r.error?.code).toBe('COMMAND_FORBIDDEN');
      expect(fs.existsSync(db())).toBe(false);
    });

    it('query and import_csv together, neither, or import without table are parameter errors', async () => {
      s = makeShed();
      put(s, 'a.csv', 'a\n1\n');
      expect((await imp({ import_csv: 'a.csv', query: 'SELECT 1' })).error?.code).toBe('INVALID_PARAMETER');
      const none = await s.call('shed_sqlite', { zone: 'storage', path: 'data.db' });
      expect(none.error?.code).toBe('MISSING_PARAMETER');
      expect(none.error?.message).toContain("'import_csv'");
      const noTable = await s.call('shed_sqlite', { zone: 'storage', path: 'data.db', import_csv: 'a.csv' });
      expect(noTable.error?.code).toBe('MISSING_PARAMETER');
      expect(noTable.error?.hint).toContain('table="a"');
    });

    it('the import stops when the database would exceed max_file_size_mb; nothing is written', async () => {
      s = makeShed({ max_file_size_mb: 1 });
      const rows = ['a,b'];
      for (let i = 0; i < 60000; i++) rows.push(`${i},some text to make the database grow ${i}`);
      put(s, 'big.csv', `${rows.join('\n')}\n`);
      const r = await imp({ import_csv: 'big.csv' });
      expect(r.error?.code).toBe('FILE_TOO_LARGE');
      expect(fs.existsSync(db())).toBe(false);
    });

    it('progress events reach the host emitter and the last one says done', async () => {
      s = makeShed();
      put(s, 'a.csv', 'a\n1\n2\n');
      const events: { type: string; data: { description: string; done: boolean } }[] = [];
      const r = await imp({ import_csv: 'a.csv', __event_emitter__: async (e: (typeof events)[number]) => void events.push(e) });
      expect(r.success).toBe(true);
      expect(events.length).toBeGreaterThanOrEqual(2);
      expect(events[0]!.data.description).toContain('Importing');
      expect(events.at(-1)!.data).toEqual({ description: 'Imported 2 rows into t', done: true });
    });
  });
});
