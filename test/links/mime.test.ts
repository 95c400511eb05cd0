/**
 * One MIME table (issue 34): shed_file_type and the link server read the same Map in core/formats/mime.ts, so
 * a file named after an Object.prototype member (`x.constructor`) gets a clean answer from both, where
 * it used to get a garbled type and a 404. Real files, real HTTP on loopback.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { extensionOf, mimeOfExtension } from '../../src/core/formats/mime.js';
import { contentTypeOf } from '../../src/hosts/http/files/mime.js';
import { groupShed } from '../groups/setup.js';
import { get, onServer, startFilesServer, type FilesServer } from './server.js';

const INHERITED = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', '__lookupGetter__'];

let s: Awaited<ReturnType<typeof groupShed>>;
let server: FilesServer;
beforeEach(async () => {
  s = await groupShed();
  server = await startFilesServer({ storageBase: s.base });
});
afterEach(async () => {
  await server.close();
  s.cleanup();
});

function put(rel: string, content: string | Buffer): void {
  const p = s.zonePath('storage', rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, content);
}

describe('the one MIME table', () => {
  it('finds nothing inherited, in any case', () => {
    for (const name of INHERITED) {
      expect(mimeOfExtension(name)).toBeUndefined();
      expect(mimeOfExtension(name.toUpperCase())).toBeUndefined();
      expect(contentTypeOf(`x.${name}`)).toEqual({ type: 'application/octet-stream', active: false });
    }
    expect(mimeOfExtension('PNG')).toBe('image/png');
    expect(extensionOf('dir.d/.env')).toBe('');
    expect(extensionOf('a/b.TAR.GZ')).toBe('gz');
  });

  it('is the only extension table in the source', () => {
    const hits: string[] = [];
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, e.name);
        if (e.isDirectory()) walk(full);
        else if (e.name.endsWith('.ts') && /\bpng: 'image\/png'/.test(fs.readFileSync(full, 'utf8'))) hits.push(path.relative('src', full));
      }
    };
    walk('src');
    expect(hits).toEqual(['core/formats/mime.ts']);
  });

  it('the link server labels types from it: markup active, source code as plain text, the rest as named', () => {
    expect(contentTypeOf('a.html')).toEqual({ type: 'text/html; charset=utf-8', active: true });
    expect(contentTypeOf('a.svg')).toEqual({ type: 'image/svg+xml; charset=utf-8', active: true });
    expect(contentTypeOf('a.py')).toEqual({ type: 'text/plain; charset=utf-8', active: false });
    expect(contentTypeOf('a.yaml')).toEqual({ type: 'text/plain; charset=utf-8', active: false });
    expect(contentTypeOf('a.md')).toEqual({ type: 'text/markdown; charset=utf-8', active: false });
    expect(contentTypeOf('a.PNG')).toEqual({ type: 'image/png', active: false });
    expect(contentTypeOf('a.docx').type).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
  });

  it('shed_file_type and a link agree on a file named x.constructor (clean answer, 200)', async () => {
    for (const name of INHERITED) {
      const rel = `data/x.${name}`;
      put(rel, `plain text in ${name}\n`);
      const t = await s.call('shed_file_type', { zone: 'storage', path: rel });
      expect(t.success).toBe(true);
      expect(t.data).toMatchObject({ mime: 'text/plain', extension: name.toLowerCase() });
      expect(JSON.stringify(t)).not.toContain('native code');
      const l = await s.call('shed_link_create', { zone: 'storage', path: rel });
      expect(l.success).toBe(true);
      const r = await get(onServer(server, l.data!.url as string));
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('application/octet-stream');
      expect(await r.text()).toBe(`plain text in ${name}\n`);
    }
  });
});
