/**
 * Streams a CSV file one block (about 1 MiB) at a time, so memory does not grow with the file.
 *
 * Parsing: every block ends at a line end and starts at a record boundary. A block that contains a
 * double quote is parsed by csv-parse (RFC 4180: quoted fields, "" escapes, quoted newlines); if a
 * quoted field is still open at the block's end (a cell with line breaks crossing the block
 * boundary), csv-parse says so and the block is parsed again together with the next one. A block
 * without any quote needs no parser: for such text RFC 4180 parsing IS splitting lines on newlines
 * and fields on the delimiter. Those blocks are handed over as raw UTF-8 bytes (validated) so the
 * importer can split and convert fields without creating strings; this is what makes million-row
 * imports affordable. Other encodings are decoded to text first and handled the same way.
 */
import { isUtf8 } from 'node:buffer';
import fs from 'node:fs';
import { parse as parseCsv } from 'csv-parse/sync';
import { shedError } from '../../../base/errors.js';
import { decoderLabel, type CsvEncoding } from '../../../formats/csv/encoding.js';

const BLOCK = 1 << 20;
/** Longest record accepted: a runaway quote cannot make one record swallow the whole file. */
export const MAX_RECORD_BYTES = 64 << 20;

export class DecodeError extends Error {
  constructor(readonly byteOffset: number) {
    super(`undecodable bytes near byte ${byteOffset}`);
  }
}

export interface ReaderOptions {
  encoding: CsvEncoding;
  bomBytes: number;
  delimiter: string;
  skipRows: number;
}

/** Either parsed records, or a region of whole quote-free UTF-8 lines to split by the caller. */
export type Batch = { records: string[][]; bytes?: undefined } | { records?: undefined; bytes: { buf: Buffer; start: number; end: number } };

export class RecordReader {
  readonly size: number;
  private readonly fd: number;
  private readonly utf8: boolean;
  private readonly decoder: TextDecoder | undefined;
  private pos: number;
  private carry: Buffer = Buffer.alloc(0);
  private work: Buffer = Buffer.allocUnsafe(2 * BLOCK);
  private carryText = '';
  private skipLeft: number;
  private crOnly: boolean | undefined;
  private eof = false;
  /** Blank lines skipped (csv-parse skips them in quoted blocks without counting). */
  blank = 0;

  constructor(
    abs: string,
    private readonly opts: ReaderOptions,
  ) {
    this.fd = fs.openSync(abs, 'r');
    this.size = fs.fstatSync(this.fd).size;
    this.pos = opts.bomBytes;
    this.skipLeft = opts.skipRows;
    this.utf8 = opts.encoding === 'utf-8' || opts.encoding === 'utf-8-sig';
    this.decoder = this.utf8 ? undefined : new TextDecoder(decoderLabel(opts.encoding), { fatal: opts.encoding !== 'windows-1252', ignoreBOM: true });
  }

  get bytesRead(): number {
    return this.pos;
  }

  get blankLines(): number {
    return this.blank;
  }

  close(): void {
    try {
      fs.closeSync(this.fd);
    } catch {
      // already closed
    }
  }

  /**
   * The next batch, or null at the end. With `raw` false, quote-free UTF-8 blocks are split into
   * string records too (used for the sample that decides the column types).
   */
  async next(raw: boolean): Promise<Batch | null> {
    if (this.eof) return null;
    if (!this.utf8 || this.crOnly) return this.nextText();
    // One work buffer, reused: the carried bytes first, then the next block read after them. (A
    // batch of bytes is consumed before the next call, so reusing the buffer is safe.)
    const carried = this.carry.length;
    if (this.work.length < carried + BLOCK) this.work = Buffer.allocUnsafe(carried + BLOCK);
    if (carried > 0) this.carry.copy(this.work, 0);
    const n = fs.readSync(this.fd, this.work, carried, BLOCK, this.pos);
    const blockStart = this.pos - carried;
    this.pos += n;
    if (n === 0) this.eof = true;
    const buf = this.work.subarray(0, carried + n);
    if (this.crOnly === undefined && buf.length > 0) {
      this.crOnly = buf.includes(13) && !buf.includes(10);
      if (this.crOnly) {
        // Old Mac line ends: rare enough to go through the text path, from this block again.
        this.pos = blockStart;
        this.eof = false;
        this.carry = Buffer.alloc(0);
        return this.nextText();
      }
    }
    let end = buf.length;
    if (!this.eof) {
      const cut = buf.lastIndexOf(10);
      if (cut === -1) {
        if (buf.length > MAX_RECORD_BYTES) throw tooLong();
        this.carry = Buffer.from(buf);
        return { records: [] };
      }
      end = cut + 1;
      this.carry = Buffer.from(buf.subarray(end));
    } else {
      this.carry = Buffer.alloc(0);
    }
    const start = this.skipBytes(buf, 0, end);
    if (start === end) return { records: [] };
    if (!isUtf8(buf.subarray(start, end))) throw new DecodeError(blockStart + firstBadUtf8(buf, start, end));
    const quote = buf.indexOf(34, start);
    if (quote === -1 || quote >= end) {
      // (At the end of the file the last line may lack its newline; the splitter accepts that.)
      if (raw) return { bytes: { buf, start, end } };
      return { records: this.split(buf.toString('utf8', start, end)) };
    }
    const records = this.parseQuoted(buf.toString('utf8', start, end));
    if (records === undefined) {
      // A quoted field crosses the block's end: parse this region again with the next block.
      if (end - start + this.carry.length > MAX_RECORD_BYTES) throw tooLong();
      this.carry = Buffer.concat([buf.subarray(start, end), this.carry]);
      return { records: [] };
    }
    return { records };
  }

  private async nextText(): Promise<Batch | null> {
    let text = '';
    if (!this.eof) {
      const block = Buffer.allocUnsafe(BLOCK);
      const n = fs.readSync(this.fd, block, 0, BLOCK, this.pos);
      const at = this.pos;
      this.pos += n;
      if (n === 0) this.eof = true;
      text = this.utf8 ? this.decodeUtf8(block.subarray(0, n), at, this.eof) : this.decodeOther(block.subarray(0, n), at, n === 0);
    }
    if (this.crOnly) text = text.replace(/\r/g, '\n');
    let body = this.carryText + text;
    if (this.eof) {
      this.carryText = '';
    } else {
      const cut = body.lastIndexOf('\n');
      if (cut === -1) {
        this.carryText = body;
        if (body.length > MAX_RECORD_BYTES) throw tooLong();
        return { records: [] };
      }
      this.carryText = body.slice(cut + 1);
      body = body.slice(0, cut + 1);
    }
    body = this.skipText(body);
    if (body === '') return { records: [] };
    if (!body.includes('"')) return { records: this.split(body) };
    const records = this.parseQuoted(body);
    if (records === undefined) {
      if (body.length + this.carryText.length > MAX_RECORD_BYTES) throw tooLong();
      this.carryText = body + this.carryText;
      return { records: [] };
    }
    return { records };
  }

  /** UTF-8 for the rare text path (old Mac line ends): incomplete sequences stay for the next block. */
  private utf8Decoder: TextDecoder | undefined;
  private decodeUtf8(bytes: Uint8Array, at: number, last: boolean): string {
    this.utf8Decoder ??= new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
    try {
      return last ? this.utf8Decoder.decode(bytes) : this.utf8Decoder.decode(bytes, { stream: true });
    } catch {
      throw new DecodeError(at);
    }
  }

  private decodeOther(bytes: Uint8Array, at: number, last: boolean): string {
    try {
      return last ? this.decoder!.decode() : this.decoder!.decode(bytes, { stream: true });
    } catch {
      throw new DecodeError(at);
    }
  }

  private skipBytes(buf: Buffer, start: number, end: number): number {
    let p = start;
    while (this.skipLeft > 0 && p < end) {
      const nl = buf.indexOf(10, p);
      p = nl === -1 || nl >= end ? end : nl + 1;
      this.skipLeft--;
    }
    return p;
  }

  private skipText(body: string): string {
    let from = 0;
    while (this.skipLeft > 0 && from < body.length) {
      const nl = body.indexOf('\n', from);
      from = nl === -1 ? body.length : nl + 1;
      this.skipLeft--;
    }
    return from === 0 ? body : body.slice(from);
  }

  private split(body: string): string[][] {
    const out: string[][] = [];
    const d = this.opts.delimiter;
    const n = body.length;
    let start = 0;
    while (start < n) {
      let nl = body.indexOf('\n', start);
      if (nl === -1) nl = n;
      let end = nl;
      if (end > start && body.charCodeAt(end - 1) === 13) end--;
      if (end === start) this.blank++;
      else out.push(body.slice(start, end).split(d));
      start = nl + 1;
    }
    return out;
  }

  /** csv-parse on whole lines; undefined when a quoted field is still open at the end (and more text follows). */
  private parseQuoted(body: string): string[][] | undefined {
    try {
      return parseCsv(body, {
        delimiter: this.opts.delimiter,
        quote: '"',
        escape: '"',
        record_delimiter: ['\r\n', '\n'],
        relax_quotes: true,
        relax_column_count: true,
        skip_empty_lines: true,
        bom: false,
        max_record_size: MAX_RECORD_BYTES,
      }) as string[][];
    } catch (err) {
      if (!this.eof && (err as { code?: string }).code === 'CSV_QUOTE_NOT_CLOSED') return undefined;
      throw parseError(err as Error);
    }
  }
}

function firstBadUtf8(buf: Buffer, start: number, end: number): number {
  let lo = start;
  let hi = end;
  // Binary search for the shortest invalid prefix (a prefix cut inside a character also counts, so step back 3).
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (isUtf8(buf.subarray(start, mid))) lo = mid;
    else hi = mid;
  }
  return Math.max(start, lo - 3);
}

function tooLong(): Error {
  return shedError('CSV_PARSE_ERROR', `The CSV file has a line longer than ${MAX_RECORD_BYTES >> 20} MiB; it is probably not a CSV file, or a quote is never closed.`, {
    hint: 'Check the file with shed_read(zone=..., path=..., end_line=5) or shed_file_type.',
  });
}

function parseError(err: Error): Error {
  const text = err.message.replace(/^\w+:\s*/, '');
  const quote = /quote/i.test(text);
  return shedError('CSV_PARSE_ERROR', `The CSV file could not be parsed: ${text}`, {
    details: { parser_code: (err as { code?: string }).code },
    hint: quote
      ? 'A double quote opens a field that is never closed (or a quoted field is followed by text). Fix the quoting, or give the right delimiter=... if the sniffed one is wrong.'
      : 'Check the first lines with shed_read(zone=..., path=..., end_line=5); set delimiter=..., encoding=... or skip_rows=... if needed.',
  });
}
