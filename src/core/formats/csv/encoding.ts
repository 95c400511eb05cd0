/**
 * Text encodings of CSV files: names accepted from callers (Python spellings included) and
 * detection from the first bytes: a BOM decides (UTF-8, UTF-16 LE/BE); otherwise valid UTF-8 is
 * UTF-8, and anything else is Windows-1252 (the superset of Latin-1 that real "latin-1" files use:
 * byte 0x80 is the euro sign there, a control character in strict ISO-8859-1).
 */
export type CsvEncoding = 'utf-8' | 'utf-8-sig' | 'windows-1252' | 'utf-16le' | 'utf-16be';

const ALIASES: Record<string, CsvEncoding> = {
  'utf-8': 'utf-8',
  utf8: 'utf-8',
  'utf-8-sig': 'utf-8-sig',
  'utf8-sig': 'utf-8-sig',
  ascii: 'utf-8',
  'us-ascii': 'utf-8',
  'latin-1': 'windows-1252',
  latin1: 'windows-1252',
  'iso-8859-1': 'windows-1252',
  'iso8859-1': 'windows-1252',
  'iso-8859-15': 'windows-1252',
  l1: 'windows-1252',
  cp1252: 'windows-1252',
  'windows-1252': 'windows-1252',
  'cp-1252': 'windows-1252',
  ansi: 'windows-1252',
  'utf-16': 'utf-16le',
  utf16: 'utf-16le',
  'utf-16le': 'utf-16le',
  'utf-16-le': 'utf-16le',
  'utf-16be': 'utf-16be',
  'utf-16-be': 'utf-16be',
};

export const ENCODING_NAMES = ['utf-8', 'utf-8-sig', 'latin-1', 'windows-1252', 'iso-8859-1', 'utf-16'] as const;

export function normalizeEncoding(name: string): CsvEncoding | undefined {
  return ALIASES[name.trim().toLowerCase().replace(/_/g, '-')];
}

export interface Detected {
  encoding: CsvEncoding;
  /** Bytes of byte-order mark to skip. */
  bomBytes: number;
}

/** Reads a BOM if there is one; `given` (the caller's choice) wins over detection otherwise. */
export function detectEncoding(head: Uint8Array, given: CsvEncoding | undefined): Detected {
  const bom = bomOf(head);
  if (given === undefined || given === 'utf-8' || given === 'utf-8-sig') {
    if (bom === 'utf-8') return { encoding: 'utf-8-sig', bomBytes: 3 };
    if (given === undefined && bom === 'utf-16le') return { encoding: 'utf-16le', bomBytes: 2 };
    if (given === undefined && bom === 'utf-16be') return { encoding: 'utf-16be', bomBytes: 2 };
  }
  if (given !== undefined) {
    const skip = (given === 'utf-16le' && bom === 'utf-16le') || (given === 'utf-16be' && bom === 'utf-16be') ? 2 : 0;
    return { encoding: given, bomBytes: skip };
  }
  return { encoding: isUtf8(head) ? 'utf-8' : 'windows-1252', bomBytes: 0 };
}

function bomOf(b: Uint8Array): 'utf-8' | 'utf-16le' | 'utf-16be' | undefined {
  if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return 'utf-8';
  if (b[0] === 0xff && b[1] === 0xfe) return 'utf-16le';
  if (b[0] === 0xfe && b[1] === 0xff) return 'utf-16be';
  return undefined;
}

/** Valid UTF-8, ignoring a multi-byte sequence cut by the end of the sample. */
function isUtf8(head: Uint8Array): boolean {
  let end = head.length;
  // Step back over a possibly incomplete final sequence (at most 3 bytes).
  for (let i = 1; i <= 3 && end - i >= 0; i++) {
    const b = head[end - i]!;
    if (b >= 0xc0) {
      const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : 2;
      if (need > i) end -= i;
      break;
    }
    if (b < 0x80) break;
  }
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, end));
    return true;
  } catch {
    return false;
  }
}

/** The decoder label for a detected encoding. */
export function decoderLabel(e: CsvEncoding): string {
  return e === 'utf-8-sig' ? 'utf-8' : e;
}
