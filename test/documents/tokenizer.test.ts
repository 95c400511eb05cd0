/**
 * The XML/HTML tokenizer's two known bugs (issue 34), each shown directly and through shed_read:
 * an entity named like an Object.prototype member decoded to that member's source text, and the
 * Turkish capital dotted I (one UTF-16 unit, two once lower-cased) shifting the raw-text search so
 * that everything after a <script> was lost.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { htmlToText } from '../../src/core/services/documents/html.js';
import { asciiLower, decodeEntities, tokenize } from '../../src/core/formats/xml/tokenize.js';
import { makeShed, type Shed } from '../helpers/shed.js';

let s: Shed;
beforeAll(() => {
  s = makeShed();
  fs.mkdirSync(s.zonePath('storage'), { recursive: true });
});
afterAll(() => s.cleanup());

const INHERITED = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isPrototypeOf'];

describe('entities named like Object.prototype members', () => {
  it('stay as written, in XML and in HTML mode, with or without the semicolon', () => {
    for (const name of INHERITED) {
      expect(decodeEntities(`a &${name}; b`)).toBe(`a &${name}; b`);
      expect(decodeEntities(`a &${name}; b`, true)).toBe(`a &${name}; b`);
      expect(decodeEntities(`a &${name} b`, true)).toBe(`a &${name} b`);
    }
    // The real ones still decode.
    expect(decodeEntities('&lt;&amp;&eacute;&#65;&#x42;&hellip;', true)).toBe('<&éAB…');
  });

  it('in text and in attributes of a tokenized document', () => {
    const texts: string[] = [];
    const attrs: Record<string, string>[] = [];
    tokenize('<p title="&constructor;" constructor="x" __proto__="y">&toString;&__proto__;</p>', {
      open: (_n, a) => attrs.push(a),
      text: (t) => texts.push(t),
    }, { html: true });
    expect(texts.join('')).toBe('&toString;&__proto__;');
    expect(attrs[0]!.title).toBe('&constructor;');
    // Attributes with those names are ordinary keys, kept once each.
    expect(Object.hasOwn(attrs[0]!, 'constructor')).toBe(true);
    expect(attrs[0]!.constructor).toBe('x');
    expect(Object.hasOwn(attrs[0]!, '__proto__')).toBe(true);
  });

  it('shed_read of an HTML file shows them as written, never native code', async () => {
    fs.writeFileSync(s.zonePath('storage', 'ent.html'), '<html><body><p>one &constructor; two &toString; three &__proto__; &amp;</p></body></html>');
    const r = await s.call('shed_read', { zone: 'storage', path: 'ent.html' });
    expect(r.success).toBe(true);
    const text = JSON.stringify(r);
    expect(text).not.toContain('native code');
    expect(text).toContain('one &constructor; two &toString; three &__proto__; &');
  });
});

describe('the Turkish capital dotted I (İ, U+0130)', () => {
  it('ASCII lower-casing keeps the length', () => {
    const s = 'İ'.repeat(20) + '<SCRIPT>';
    expect(s.toLowerCase().length).toBe(s.length + 20); // why String.toLowerCase was wrong here
    expect(asciiLower(s).length).toBe(s.length);
    expect(asciiLower(s)).toBe('İ'.repeat(20) + '<script>');
  });

  it('twenty of them before a <script> lose nothing after it', () => {
    const html = `<p>${'İ'.repeat(20)}</p><script>var x = "</p>";</script><p>after the script</p><p>and the end</p>`;
    const text = htmlToText(html).toString();
    expect(text).toContain('İ'.repeat(20));
    expect(text).toContain('after the script');
    expect(text).toContain('and the end');
    expect(text).not.toContain('var x');
  });

  it('tag names lower-case only their ASCII letters', () => {
    const names: string[] = [];
    tokenize('<DİV>x</DİV><ScRiPt>y</ScRiPt>', { open: (n) => names.push(n) }, { html: true });
    expect(names).toEqual(['dİv', 'script']);
  });

  it('through shed_read', async () => {
    fs.writeFileSync(s.zonePath('storage', 'tr.html'), `<html><body><p>İSTANBUL ${'İ'.repeat(40)}</p><script>alert(1)</script><p>Görüşürüz</p></body></html>`);
    const r = await s.call('shed_read', { zone: 'storage', path: 'tr.html' });
    expect(r.success).toBe(true);
    const text = JSON.stringify(r);
    expect(text).toContain('Görüşürüz');
    expect(text).not.toContain('alert(1)');
  });
});
