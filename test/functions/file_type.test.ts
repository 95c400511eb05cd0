import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { makeShed, type Shed } from '../helpers/shed.js';

let s: Shed;
afterEach(() => s?.cleanup());

function put(rel: string, bytes: Uint8Array | string): void {
  const abs = s.zonePath('storage', rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, bytes);
}

const typeOf = (p: string) => s.call('shed_file_type', { zone: 'storage', path: p });

/** Stored (uncompressed) ZIP local entries, enough for content sniffing. */
function zip(entries: Array<[name: string, content: string]>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, content] of entries) {
    const header = Buffer.alloc(30);
    header.write('PK\x03\x04', 0, 'latin1');
    header.writeUInt16LE(10, 4);
    header.writeUInt32LE(content.length, 18);
    header.writeUInt32LE(content.length, 22);
    header.writeUInt16LE(Buffer.byteLength(name), 26);
    parts.push(header, Buffer.from(name), Buffer.from(content, 'latin1'));
  }
  parts.push(Buffer.from('PK\x05\x06', 'latin1'), Buffer.alloc(18));
  return Buffer.concat(parts);
}

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000280000001e00806000000', 'hex');

describe('shed_file_type: magic bytes', () => {
  it('recognises a PNG written with shed_patch_bytes, with its dimensions', async () => {
    s = makeShed();
    const w = await s.call('shed_patch_bytes', { zone: 'storage', path: 'pic.png', content: PNG.toString('hex') });
    expect(w.success).toBe(true);
    expect(fs.readFileSync(s.zonePath('storage', 'pic.png'))).toEqual(PNG);
    const r = await typeOf('pic.png');
    expect(r.data).toMatchObject({ path: 'pic.png', zone: 'Storage', type: 'file', mime: 'image/png', mime_type: 'image/png', extension: 'png', size: PNG.length });
    expect(r.data?.description).toContain('640 x 480');
    expect(r.data).not.toHaveProperty('encoding');
  });

  const samples: Array<[string, Buffer, string, string]> = [
    ['x.jpg', Buffer.from('ffd8ffe000104a464946', 'hex'), 'image/jpeg', 'JPEG'],
    ['x.gif', Buffer.from('GIF89a\x10\x00\x20\x00', 'latin1'), 'image/gif', '16 x 32'],
    ['x.pdf', Buffer.from('%PDF-1.7\n%\xe2\xe3\n', 'latin1'), 'application/pdf', 'version 1.7'],
    ['x.gz', zlib.gzipSync('hello'), 'application/gzip', 'gzip'],
    ['x.bz2', Buffer.from('BZh91AY&SY', 'latin1'), 'application/x-bzip2', 'bzip2'],
    ['x.xz', Buffer.from('fd377a585a000004e6d6b446', 'hex'), 'application/x-xz', 'XZ'],
    ['x.zst', Buffer.from('28b52ffd2000', 'hex'), 'application/zstd', 'Zstandard'],
    ['x.7z', Buffer.from('377abcaf271c0004', 'hex'), 'application/x-7z-compressed', '7-Zip'],
    ['x.rar', Buffer.from('Rar!\x1a\x07\x01\x00', 'latin1'), 'application/vnd.rar', 'RAR'],
    ['prog', Buffer.concat([Buffer.from('7f454c46020101', 'hex'), Buffer.alloc(9), Buffer.from([2, 0])]), 'application/x-executable', 'ELF 64-bit executable'],
    ['x.mp3', Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1'), 'audio/mpeg', 'MP3'],
    ['x.mp4', Buffer.from('\x00\x00\x00\x18ftypisom\x00\x00\x02\x00', 'latin1'), 'video/mp4', 'MPEG-4'],
    ['x.mov', Buffer.from('\x00\x00\x00\x14ftypqt  \x00\x00\x02\x00', 'latin1'), 'video/quicktime', 'QuickTime'],
    ['x.ogg', Buffer.from('OggS\x00\x02\x00\x00\x01vorbis', 'latin1'), 'audio/ogg', 'Ogg'],
    ['x.wav', Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'), 'audio/wav', 'WAV'],
    ['x.avi', Buffer.from('RIFF\x24\x00\x00\x00AVI LIST', 'latin1'), 'video/x-msvideo', 'AVI'],
    ['x.webp', Buffer.from('RIFF\x24\x00\x00\x00WEBPVP8 ', 'latin1'), 'image/webp', 'WebP'],
    ['x.db', Buffer.concat([Buffer.from('SQLite format 3\x00', 'latin1'), Buffer.alloc(84)]), 'application/vnd.sqlite3', 'SQLite'],
    ['x.tif', Buffer.from('II*\x00\x08\x00\x00\x00', 'latin1'), 'image/tiff', 'TIFF'],
    ['x.bmp', Buffer.concat([Buffer.from('BM', 'latin1'), Buffer.alloc(12), Buffer.from([40, 0, 0, 0])]), 'image/bmp', 'BMP'],
    ['x.ico', Buffer.from('000001000100101000000000', 'hex'), 'image/x-icon', 'icon'],
    ['x.wasm', Buffer.from('0061736d01000000', 'hex'), 'application/wasm', 'WebAssembly'],
  ];
  it.each(samples)('%s → %s', async (name, bytes, mime, words) => {
    s = makeShed();
    put(name, bytes);
    const r = await typeOf(name);
    expect(r.data?.mime).toBe(mime);
    expect(r.data?.description).toContain(words);
  });

  it('identifies content regardless of a misleading extension, and says so', async () => {
    s = makeShed();
    put('notes.txt', PNG);
    const r = await typeOf('notes.txt');
    expect(r.data?.mime).toBe('image/png');
    expect(r.data?.note).toContain('.txt');
    expect(r.message).toContain('image/png');
  });

  it('recognises a shebang script and its interpreter', async () => {
    s = makeShed();
    put('run', '#!/usr/bin/env python3\nprint("hi")\n');
    const r = await typeOf('run');
    expect(r.data).toMatchObject({ mime: 'text/x-python', encoding: 'ascii', eol: 'unix' });
    expect(r.data?.description).toContain('Python script');
  });

  it('does not take text that starts with "BM" or "MZ" for an image or executable', async () => {
    s = makeShed();
    put('cars', 'BMW and Mazda\n');
    put('mz', 'MZ is a label\n');
    expect((await typeOf('cars')).data?.mime).toBe('text/plain');
    expect((await typeOf('mz')).data?.mime).toBe('text/plain');
  });
});

describe('shed_file_type: ZIP containers', () => {
  it('refines a ZIP holding word/ into DOCX', async () => {
    s = makeShed();
    put('report.bin', zip([['[Content_Types].xml', '<Types/>'], ['_rels/.rels', '<R/>'], ['word/document.xml', '<w/>']]));
    const r = await typeOf('report.bin');
    expect(r.data?.mime).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(r.data?.description).toContain('DOCX');
  });

  it('refines xl/ into XLSX and ppt/ into PPTX', async () => {
    s = makeShed();
    put('a.zip', zip([['[Content_Types].xml', 'x'], ['xl/workbook.xml', 'x']]));
    put('b.zip', zip([['[Content_Types].xml', 'x'], ['ppt/presentation.xml', 'x']]));
    expect((await typeOf('a.zip')).data?.mime).toContain('spreadsheetml');
    expect((await typeOf('b.zip')).data?.mime).toContain('presentationml');
  });

  it('reads the mimetype entry of OpenDocument files', async () => {
    s = makeShed();
    put('letter.odt', zip([['mimetype', 'application/vnd.oasis.opendocument.text'], ['content.xml', '<x/>']]));
    const r = await typeOf('letter.odt');
    expect(r.data?.mime).toBe('application/vnd.oasis.opendocument.text');
    expect(r.data?.note).toBeUndefined();
  });

  it('recognises a JAR by META-INF/, and a plain ZIP with a caveat', async () => {
    s = makeShed();
    put('lib.jar', zip([['META-INF/MANIFEST.MF', 'Manifest-Version: 1.0\n']]));
    put('plain.zip', zip([['a.txt', 'hello']]));
    expect((await typeOf('lib.jar')).data?.mime).toBe('application/java-archive');
    const plain = await typeOf('plain.zip');
    expect(plain.data?.mime).toBe('application/zip');
    expect(plain.data?.description).toContain('DOCX');
  });

  it('recognises an empty ZIP', async () => {
    s = makeShed();
    put('e.zip', Buffer.concat([Buffer.from('PK\x05\x06', 'latin1'), Buffer.alloc(18)]));
    expect((await typeOf('e.zip')).data?.description).toContain('empty');
  });
});

describe('shed_file_type: text', () => {
  it.each([
    ['unix.txt', 'a\nb\n', 'unix'],
    ['dos.txt', 'a\r\nb\r\n', 'dos'],
    ['mac.txt', 'a\rb\r', 'mac'],
    ['mixed.txt', 'a\r\nb\nc\r', 'mixed'],
    ['one.txt', 'no newline', 'none'],
  ])('%s has eol %s', async (name, text, eol) => {
    s = makeShed();
    put(name, text);
    const r = await typeOf(name);
    expect(r.data).toMatchObject({ mime: 'text/plain', eol, encoding: 'ascii' });
  });

  it('tells UTF-8 from ASCII, with and without BOM', async () => {
    s = makeShed();
    put('u.md', 'héllo\n');
    put('bom.csv', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('a;b\r\n1;2\r\n')]));
    expect((await typeOf('u.md')).data).toMatchObject({ mime: 'text/markdown', encoding: 'utf-8', eol: 'unix' });
    expect((await typeOf('bom.csv')).data).toMatchObject({ mime: 'text/csv', encoding: 'utf-8 (with BOM)', eol: 'dos' });
  });

  it('recognises UTF-16 by its BOM, despite the NUL bytes', async () => {
    s = makeShed();
    put('le.txt', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hi\r\nyo\r\n', 'utf16le')]));
    put('be.txt', Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('hi\n', 'utf16le').swap16()]));
    expect((await typeOf('le.txt')).data).toMatchObject({ mime: 'text/plain', encoding: 'utf-16le', eol: 'dos' });
    expect((await typeOf('be.txt')).data).toMatchObject({ encoding: 'utf-16be', eol: 'unix' });
  });

  it('accepts a UTF-8 character cut at the end of the 8 KiB sample', async () => {
    s = makeShed();
    put('long.txt', `${'a'.repeat(8191)}é${'b'.repeat(100)}\n`);
    expect((await typeOf('long.txt')).data).toMatchObject({ encoding: 'utf-8' });
  });

  it('recognises XML, SVG and HTML without a telling extension', async () => {
    s = makeShed();
    put('a', '<?xml version="1.0"?>\n<root/>\n');
    put('b', '<svg xmlns="http://www.w3.org/2000/svg"></svg>');
    put('c', '<!DOCTYPE html>\n<html></html>');
    expect((await typeOf('a')).data?.mime).toBe('application/xml');
    expect((await typeOf('b')).data?.mime).toBe('image/svg+xml');
    expect((await typeOf('c')).data?.mime).toBe('text/html');
  });

  it('calls invalid UTF-8 or NUL-containing data binary', async () => {
    s = makeShed();
    put('x.data', Buffer.from([0x41, 0xc3, 0x28, 0x42]));
    put('y', Buffer.from([0x41, 0x00, 0x42]));
    const x = await typeOf('x.data');
    expect(x.data?.mime).toBe('application/octet-stream');
    expect(x.data).not.toHaveProperty('eol');
    expect((await typeOf('y')).data?.description).toContain('Binary');
  });

  it('describes an empty file', async () => {
    s = makeShed();
    put('empty.txt', '');
    put('empty', '');
    expect((await typeOf('empty.txt')).data).toMatchObject({ mime: 'text/plain', description: 'Empty file', size: 0, size_human: '0 B' });
    expect((await typeOf('empty')).data?.mime).toBe('application/x-empty');
  });
});

describe('shed_file_type: folders, zones and paths', () => {
  it('describes the zone root and folders as directories', async () => {
    s = makeShed();
    put('dir/a.txt', 'x');
    for (const p of ['.', '', 'dir']) {
      const r = await typeOf(p);
      expect(r.data).toMatchObject({ type: 'directory', mime: 'inode/directory', mime_type: 'inode/directory' });
    }
    expect((await s.call('shed_file_type', { zone: 'storage' })).data?.type).toBe('directory');
  });

  it('works in Uploads', async () => {
    s = makeShed();
    const abs = s.zonePath('uploads', 'up.pdf');
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, '%PDF-1.4\n');
    expect((await s.call('shed_file_type', { zone: 'uploads', path: 'up.pdf' })).data?.mime).toBe('application/pdf');
  });

  it('gives FILE_NOT_FOUND for a missing file', async () => {
    s = makeShed();
    expect((await typeOf('nope.png')).error?.code).toBe('FILE_NOT_FOUND');
  });

  it('refuses traversal and symlinks leading outside', async () => {
    s = makeShed();
    const outsideDir = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-outside-'));
    try {
      fs.writeFileSync(path.join(outsideDir, 'secret.pdf'), '%PDF-1.4\n');
      fs.mkdirSync(s.zonePath('storage'), { recursive: true });
      fs.symlinkSync(path.join(outsideDir, 'secret.pdf'), s.zonePath('storage', 'link.pdf'));
      fs.symlinkSync(outsideDir, s.zonePath('storage', 'linkdir'));
      expect((await typeOf('link.pdf')).error?.code).toBe('PATH_ESCAPE');
      expect((await typeOf('linkdir')).error?.code).toBe('PATH_ESCAPE');
      expect((await typeOf('..')).error?.code).toBe('PATH_ESCAPE');
    } finally {
      fs.rmSync(outsideDir, { recursive: true, force: true });
    }
  });
});
