/**
 * A small XML tokenizer for the XML inside office files and e-books, and (lenient mode) for HTML.
 * It reports start tags with their attributes, end tags and decoded text, nothing else: no DTD is
 * processed, so an entity declared in a document (the "billion laughs" bomb) is never expanded:
 * only the five predefined entities, numeric references and, in HTML mode, the common named ones
 * are decoded; any other `&name;` stays as written. Work is linear in the input's length.
 */
import { HTML_ENTITIES } from './entities.js';

export interface XmlHandler {
  open?(name: string, attrs: Record<string, string>, selfClosing: boolean): void;
  close?(name: string): void;
  text?(text: string): void;
}

// Maps, not object literals: `&constructor;` or `&__proto__;` must not find Object.prototype's members.
const XML_ENTITIES: ReadonlyMap<string, string> = new Map([
  ['lt', '<'],
  ['gt', '>'],
  ['amp', '&'],
  ['quot', '"'],
  ['apos', "'"],
]);

/**
 * ASCII-only lower-casing, as HTML does for tag and attribute names. Unlike String.toLowerCase it
 * never changes a string's length (U+0130 'İ' lower-cases to two UTF-16 units there), so positions
 * found in the lower-cased copy are positions in the source.
 */
export function asciiLower(s: string): string {
  return /[A-Z]/.test(s) ? s.replace(/[A-Z]+/g, (m) => m.toLowerCase()) : s;
}

/** Decodes character and entity references (see the module comment for which). */
export function decodeEntities(text: string, html = false): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#[0-9]{1,7}|[A-Za-z][A-Za-z0-9]{1,31});?/g, (whole, ref: string) => {
    if (ref[0] === '#') {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff) ? String.fromCodePoint(code) : '\uFFFD';
    }
    if (!whole.endsWith(';') && !html) return whole;
    return XML_ENTITIES.get(ref) ?? (html ? HTML_ENTITIES.get(ref) : undefined) ?? whole;
  });
}

/** Attributes of a start tag's body (after its name): name="v", name='v', name=v, or a bare name. */
function attributes(source: string, html: boolean): Record<string, string> {
  // No prototype: an attribute named `constructor` or `__proto__` is an ordinary key.
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  const n = source.length;
  let i = 0;
  while (i < n) {
    let c = source.charCodeAt(i);
    if (c <= 0x20 || c === 0x2f /* / */) {
      i++;
      continue;
    }
    const nameStart = i;
    while (i < n && (c = source.charCodeAt(i)) > 0x20 && c !== 0x3d /* = */ && c !== 0x2f && c !== 0x3e) i++;
    const name = html ? asciiLower(source.slice(nameStart, i)) : source.slice(nameStart, i);
    while (i < n && source.charCodeAt(i) <= 0x20) i++;
    let value = '';
    if (source.charCodeAt(i) === 0x3d) {
      i++;
      while (i < n && source.charCodeAt(i) <= 0x20) i++;
      const q = source.charCodeAt(i);
      if (q === 0x22 || q === 0x27) {
        const end = source.indexOf(q === 0x22 ? '"' : "'", i + 1);
        const stop = end === -1 ? n : end;
        value = source.slice(i + 1, stop);
        i = stop + 1;
      } else {
        const from = i;
        while (i < n && source.charCodeAt(i) > 0x20 && source.charCodeAt(i) !== 0x3e) i++;
        value = source.slice(from, i);
      }
    }
    if (name !== '' && !Object.hasOwn(out, name)) out[name] = decodeEntities(value, html);
    if (i === nameStart) i++; // a character no rule consumed: step over it
  }
  return out;
}

/** Elements whose content is raw text in HTML (never markup): skipped to their end tag. */
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'plaintext']);

/**
 * Walks `source`, calling the handler. `html`: tag names lower-cased, lenient about a stray `<`,
 * raw-text elements (script, style...) handed over as one text.
 */
export function tokenize(source: string, handler: XmlHandler, opts: { html?: boolean } = {}): void {
  const html = opts.html === true;
  const n = source.length;
  // Raw-text elements end at their close tag in any case: searched in a lower-cased copy made once,
  // of the same length as the source (ASCII only), so its positions are the source's.
  const lower = html ? asciiLower(source) : '';
  let i = 0;
  const text = (from: number, to: number) => {
    if (to > from && handler.text) handler.text(decodeEntities(source.slice(from, to), html));
  };
  while (i < n) {
    const lt = source.indexOf('<', i);
    if (lt === -1) {
      text(i, n);
      break;
    }
    text(i, lt);
    const next = source.charCodeAt(lt + 1);
    if (source.startsWith('<!--', lt)) {
      const end = source.indexOf('-->', lt + 4);
      i = end === -1 ? n : end + 3;
    } else if (source.startsWith('<![CDATA[', lt)) {
      const end = source.indexOf(']]>', lt + 9);
      const stop = end === -1 ? n : end;
      if (handler.text && stop > lt + 9) handler.text(source.slice(lt + 9, stop));
      i = end === -1 ? n : end + 3;
    } else if (next === 0x21 /* ! */ || next === 0x3f /* ? */) {
      // <!DOCTYPE ...> (with its internal subset, whose entity declarations are ignored) or <?...?>.
      i = skipDeclaration(source, lt);
    } else if (next === 0x2f /* / */) {
      const end = source.indexOf('>', lt + 2);
      if (end === -1) {
        text(lt, n);
        break;
      }
      const name = source.slice(lt + 2, end).trim();
      handler.close?.(html ? asciiLower(name) : name);
      i = end + 1;
    } else if (html && !isNameStart(next)) {
      text(lt, lt + 1); // a lone '<' in HTML text
      i = lt + 1;
    } else {
      const end = tagEnd(source, lt + 1);
      if (end === -1) {
        text(lt, n);
        break;
      }
      const body = source.slice(lt + 1, end);
      const selfClosing = body.endsWith('/');
      const inner = selfClosing ? body.slice(0, -1) : body;
      const space = inner.search(/[\s/]/);
      const rawName = space === -1 ? inner : inner.slice(0, space);
      const name = html ? asciiLower(rawName) : rawName;
      handler.open?.(name, space === -1 ? (Object.create(null) as Record<string, string>) : attributes(inner.slice(space), html), selfClosing);
      i = end + 1;
      if (html && !selfClosing && RAW_TEXT.has(name)) {
        const close = lower.indexOf(`</${name}`, i);
        const stop = close === -1 ? n : close;
        if (handler.text && stop > i) handler.text(name === 'title' || name === 'textarea' ? decodeEntities(source.slice(i, stop), true) : source.slice(i, stop));
        const gt = close === -1 ? -1 : source.indexOf('>', close);
        handler.close?.(name);
        i = gt === -1 ? n : gt + 1;
      } else if (selfClosing) {
        handler.close?.(name);
      }
    }
  }
}

function isNameStart(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || c === 0x3a || c > 0x7f;
}

/** The '>' ending a tag that starts at `from`, skipping quoted attribute values. */
function tagEnd(s: string, from: number): number {
  let quote = 0;
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (quote !== 0) {
      if (c === quote) quote = 0;
    } else if (c === 0x22 || c === 0x27) quote = c;
    else if (c === 0x3e) return i;
  }
  return -1;
}

/** End of `<!...>` / `<?...?>`, including a DOCTYPE's bracketed internal subset. */
function skipDeclaration(s: string, from: number): number {
  let depth = 0;
  let quote = 0;
  for (let i = from + 2; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (quote !== 0) {
      if (c === quote) quote = 0;
    } else if (c === 0x22 || c === 0x27) quote = c;
    else if (c === 0x5b) depth++;
    else if (c === 0x5d) depth = Math.max(0, depth - 1);
    else if (c === 0x3e && depth === 0) return i + 1;
  }
  return s.length;
}

/** The local part of a qualified name: `w:t` → `t`. */
export function local(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}
