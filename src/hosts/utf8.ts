/**
 * Text from the wire is UTF-8 or it is refused. A lenient decoder turns bytes that are not UTF-8
 * (0xFF, an overlong 0xC0 0xAF, an encoded surrogate, a truncated sequence) into U+FFFD, and the
 * call would then write a name or a content the client never sent. Every host that reads a body
 * (POST /{name} and its multipart `arguments`, the valve headers, MCP over HTTP and stdio) decodes
 * through here; the error says where the bad bytes are and in which parameter.
 */
import { isUtf8 } from 'node:buffer';

export class InvalidUtf8 extends Error {}

const isContinuation = (byte: number | undefined) => byte !== undefined && (byte & 0xc0) === 0x80;

/** `bytes` as text, or InvalidUtf8 naming `what`, the first bad byte and the parameters it is in. */
export function strictUtf8(bytes: Uint8Array, what: string): string {
  assertUtf8(bytes, what);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8');
}

export function assertUtf8(bytes: Uint8Array, what: string): void {
  if (isUtf8(bytes)) return;
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  throw invalidUtf8(what, buf.toString('utf8'), firstInvalidByte(buf), buf);
}

/**
 * A form field decoded by a lenient parser (multipart): its text holds U+FFFD where bytes were
 * replaced. Valid input is found verbatim in the raw body; a replaced one is not.
 */
export function checkDecodedField(text: string, rawBody: Uint8Array, what: string): void {
  if (!text.includes('\uFFFD')) return;
  if (Buffer.from(rawBody.buffer, rawBody.byteOffset, rawBody.length).indexOf(Buffer.from(text, 'utf8')) >= 0) return;
  throw invalidUtf8(what, text, undefined, undefined);
}

function invalidUtf8(what: string, lenient: string, refused: number | undefined, bytes: Buffer | undefined): InvalidUtf8 {
  let where = '';
  if (refused !== undefined && bytes !== undefined) {
    const start = sequenceStart(bytes, refused);
    where = ` at byte ${start} (${hex(bytes, start)})`;
  }
  const params = parametersHolding(lenient);
  const inParams = params.length > 0 ? ` in ${params.map((p) => `'${p}'`).join(', ')}` : '';
  return new InvalidUtf8(
    `${what} is not valid UTF-8${where}${inParams}; it would be stored with U+FFFD instead of the bytes sent, so nothing was run. ` +
      'Send JSON as UTF-8 text; for binary content use shed_patch_bytes with content_format "base64" or "hex".',
  );
}

/** Offset of the first byte a strict decoder refuses (the start of a truncated final sequence). */
function firstInvalidByte(bytes: Buffer): number {
  const CHUNK = 64 * 1024;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  for (let start = 0; start < bytes.length; start += CHUNK) {
    try {
      decoder.decode(bytes.subarray(start, start + CHUNK), { stream: true });
    } catch {
      // A fresh decoder from the first character boundary before this chunk, then the shortest
      // prefix it refuses: its last byte is the one found invalid.
      let from = start;
      while (from > 0 && start - from < 3 && isContinuation(bytes[from])) from--;
      let lo = from;
      let hi = Math.min(bytes.length, start + CHUNK);
      while (lo + 1 < hi) {
        const mid = (lo + hi) >>> 1;
        if (refuses(bytes.subarray(from, mid))) hi = mid;
        else lo = mid;
      }
      return hi - 1;
    }
  }
  // Only the end is wrong: a sequence cut short. It starts at the last lead byte.
  let end = bytes.length - 1;
  while (end > 0 && isContinuation(bytes[end])) end--;
  return end;
}

function refuses(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
    return false;
  } catch {
    return true;
  }
}

/** Length of the sequence a lead byte announces (0 for a byte that cannot lead one). */
const announced = (byte: number) => (byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 0);

/**
 * Where the bad sequence begins: the byte the decoder refused, or the lead byte before it whose
 * sequence the refused byte cut short (0xF0 0x9F 0x98 then "x": the sequence, not the "x").
 */
function sequenceStart(bytes: Buffer, refused: number): number {
  let lead = refused - 1;
  while (lead >= 0 && refused - lead <= 3 && isContinuation(bytes[lead])) lead--;
  return lead >= 0 && announced(bytes[lead]!) > refused - lead ? lead : refused;
}

/** The bad sequence in hex, through the continuation bytes its lead announces: "0xC0 0xAF". */
function hex(bytes: Buffer, start: number): string {
  let end = start + 1;
  while (end < bytes.length && end - start < announced(bytes[start]!) && isContinuation(bytes[end])) end++;
  return [...bytes.subarray(start, end)].map((b) => `0x${b.toString(16).toUpperCase().padStart(2, '0')}`).join(' ');
}

/** Top-level JSON keys whose key or value holds U+FFFD (where replaced bytes landed). */
function parametersHolding(lenient: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(lenient);
  } catch {
    return [];
  }
  if (parsed === null || typeof parsed !== 'object') return [];
  const holder = (parsed as { params?: { arguments?: unknown } }).params?.arguments ?? parsed; // a JSON-RPC tools/call
  if (holder === null || typeof holder !== 'object') return [];
  return Object.entries(holder as Record<string, unknown>)
    .filter(([k, v]) => k.includes('\uFFFD') || JSON.stringify(v)?.includes('\uFFFD'))
    .map(([k]) => k)
    .slice(0, 5);
}
