/**
 * A saved e-mail (.eml, RFC 5322 with MIME) as text: the main headers (From, To, Cc, Date,
 * Subject, decoded from RFC 2047 words), the names of its attachments, then the body (the plain
 * text part, or the HTML part as readable text when there is no plain one). Parts nest at most
 * DOC_LIMITS.mailDepth deep and count at most DOC_LIMITS.mailParts; transfer encodings
 * (base64, quoted-printable) and character sets are decoded with the runtime's decoders.
 */
import { htmlToText } from './html.js';
import { DOC_LIMITS } from './limits.js';
import { TextOut } from './text.js';

interface Part {
  headers: Map<string, string>;
  body: Buffer;
}

function splitHead(raw: Buffer): Part {
  let end = raw.indexOf('\r\n\r\n');
  let sep = 4;
  const lf = raw.indexOf('\n\n');
  if (end === -1 || (lf !== -1 && lf < end)) {
    end = lf;
    sep = 2;
  }
  const head = end === -1 ? raw.toString('latin1') : raw.subarray(0, end).toString('latin1');
  const body = end === -1 ? Buffer.alloc(0) : raw.subarray(end + sep);
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    if (!headers.has(key)) headers.set(key, line.slice(colon + 1).trim());
  }
  return { headers, body };
}

function decodeCharset(bytes: Buffer, charset: string | undefined): string {
  const label = (charset ?? 'utf-8').trim().replace(/^"|"$/g, '').toLowerCase();
  try {
    return new TextDecoder(label === 'us-ascii' || label === 'ascii' ? 'utf-8' : label).decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes); // an unknown charset: read it as UTF-8
  }
}

/** RFC 2047 encoded words (=?charset?B|Q?text?=) in a header. */
export function decodeWords(value: string): string {
  const raw = Buffer.from(value, 'latin1').toString('utf8').includes('\uFFFD') ? value : Buffer.from(value, 'latin1').toString('utf8');
  return raw
    .replace(/(=\?[^?\s]+\?[bqBQ]\?[^?\s]*\?=)\s+(?==\?)/g, '$1')
    .replace(/=\?([^?\s]+)\?([bqBQ])\?([^?\s]*)\?=/g, (_m, cs: string, enc: string, text: string) => {
      const bytes = enc.toUpperCase() === 'B' ? Buffer.from(text, 'base64') : qp(text.replace(/_/g, ' '));
      return decodeCharset(bytes, cs.split('*')[0]);
    });
}

function qp(text: string): Buffer {
  const soft = text.replace(/=\r?\n/g, '');
  const out: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    const c = soft.charCodeAt(i);
    if (c === 0x3d && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
      out.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else out.push(c & 0xff);
  }
  return Buffer.from(out);
}

function param(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  const star = new RegExp(`;\\s*${name}\\*=([^;]+)`, 'i').exec(header);
  if (star) {
    const m = /^([^']*)'[^']*'(.*)$/.exec(star[1]!.trim().replace(/^"|"$/g, ''));
    if (m) {
      try {
        return decodeCharset(Buffer.from(decodeURIComponent(m[2]!.replace(/%(?![0-9A-Fa-f]{2})/g, '%25')), 'latin1'), m[1] || 'utf-8');
      } catch {
        return m[2];
      }
    }
  }
  const plain = new RegExp(`;\\s*${name}=("([^"]*)"|[^;\\s]+)`, 'i').exec(header);
  return plain ? decodeWords(plain[2] ?? plain[1]!) : undefined;
}

function transferDecode(part: Part): Buffer {
  const enc = (part.headers.get('content-transfer-encoding') ?? '').toLowerCase().trim();
  if (enc === 'base64') return Buffer.from(part.body.toString('latin1').replace(/[^A-Za-z0-9+/=]/g, ''), 'base64');
  if (enc === 'quoted-printable') return qp(part.body.toString('latin1'));
  return part.body;
}

interface Walk {
  plain: string[];
  html: string[];
  attachments: string[];
  parts: number;
}

function walk(part: Part, depth: number, w: Walk): void {
  if (++w.parts > DOC_LIMITS.mailParts) return;
  const type = (part.headers.get('content-type') ?? 'text/plain').split(';')[0]!.trim().toLowerCase();
  const disposition = part.headers.get('content-disposition');
  const filename = param(disposition, 'filename') ?? param(part.headers.get('content-type'), 'name');
  if (type.startsWith('multipart/') && depth < DOC_LIMITS.mailDepth) {
    const boundary = param(part.headers.get('content-type'), 'boundary');
    if (boundary === undefined) return;
    const marker = Buffer.from(`--${boundary}`, 'latin1');
    let at = part.body.indexOf(marker);
    while (at !== -1 && w.parts <= DOC_LIMITS.mailParts) {
      let from = at + marker.length;
      if (part.body[from] === 0x2d && part.body[from + 1] === 0x2d) break; // closing boundary
      from = part.body.indexOf('\n', from) + 1;
      if (from === 0) break;
      const next = part.body.indexOf(marker, from);
      const end = next === -1 ? part.body.length : next;
      walk(splitHead(part.body.subarray(from, end)), depth + 1, w);
      at = next;
    }
    return;
  }
  if (filename !== undefined || /^attachment/i.test(disposition ?? '')) {
    const size = transferSize(part);
    w.attachments.push(`${filename ?? 'unnamed'} (${type}, ${size})`);
    return;
  }
  if (type === 'message/rfc822') {
    const inner = splitHead(transferDecode(part));
    w.attachments.push(`forwarded message: ${decodeWords(inner.headers.get('subject') ?? '(no subject)')}`);
    return;
  }
  const charset = param(part.headers.get('content-type'), 'charset');
  if (type === 'text/plain') w.plain.push(decodeCharset(transferDecode(part), charset));
  else if (type === 'text/html') w.html.push(decodeCharset(transferDecode(part), charset));
}

function transferSize(part: Part): string {
  const enc = (part.headers.get('content-transfer-encoding') ?? '').toLowerCase().trim();
  const bytes = enc === 'base64' ? Math.floor((part.body.length * 3) / 4) : part.body.length;
  return bytes >= 1048576 ? `${(bytes / 1048576).toFixed(1)} MB` : bytes >= 1024 ? `${Math.round(bytes / 1024)} KB` : `${bytes} bytes`;
}

export function emailText(raw: Buffer): TextOut {
  const top = splitHead(raw);
  const w: Walk = { plain: [], html: [], attachments: [], parts: 0 };
  walk(top, 0, w);
  const out = new TextOut();
  for (const key of ['from', 'to', 'cc', 'date', 'subject']) {
    const value = top.headers.get(key);
    if (value === undefined) continue;
    out.add(`${key[0]!.toUpperCase()}${key.slice(1)}: ${decodeWords(value)}`);
    out.br();
  }
  out.add(`Attachments: ${w.attachments.length === 0 ? 'none' : w.attachments.join('; ')}`);
  out.br(true);
  if (w.plain.length > 0) out.add(w.plain.join('\n\n').replace(/\r\n/g, '\n'), true);
  else if (w.html.length > 0) for (const h of w.html) htmlToText(h, out);
  return out;
}
