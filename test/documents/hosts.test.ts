/**
 * Documents and images through the hosts built in dist/: over HTTP (`fileshed serve`, POST
 * /shed_read answers the JSON envelope, the image inside as one data URI) and over MCP with the
 * official SDK client (`fileshed mcp` on stdio): a converted document is a text item, an image is an
 * `image` content item beside the text, whose envelope keeps the sizes and not the bytes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as D from '../helpers/documents.mjs';
import { CLI, json, serve, tempBase, type Served } from '../hosts/helpers.js';

let base: string;
const put = (user: string, rel: string, c: string | Buffer) => {
  const p = path.join(base, 'users', user, 'Storage', 'data', rel);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, c);
};

beforeAll(() => {
  base = tempBase();
  for (const user of ['local', 'desk']) {
    put(user, 'report.pdf', D.makePdf(['First page', 'Second page']));
    put(user, 'sheet.xlsx', D.makeXlsx({ Data: [['a', 'b'], ['1', 2]] }));
    put(user, 'photo.jpg', D.convertImage(3000, 2000, 'jpg'));
  }
});
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

describe('HTTP (fileshed serve)', () => {
  let server: Served;
  beforeAll(async () => {
    server = await serve([], { base });
  }, 60_000);
  afterAll(async () => {
    await server.stop();
  });

  it('documents and images answer the JSON envelope', async () => {
    const pdf = await json(await server.post('shed_read', { zone: 'storage', path: 'report.pdf' }));
    expect(pdf.data.content).toBe('--- page 1 of 2 ---\nFirst page\n--- page 2 of 2 ---\nSecond page\n');
    const xlsx = await json(await server.post('shed_read', { zone: 'storage', path: 'sheet.xlsx', sheet: 1 }));
    expect(xlsx.data).toMatchObject({ sheet: 'Data', content: 'a,b\n1,2\n' });
    const res = await server.post('shed_read', { zone: 'storage', path: 'photo.jpg' });
    expect(res.status).toBe(200);
    const img = await json(res);
    expect(img.data.image).toMatchObject({ mime_type: 'image/jpeg', width: 1568, height: 1045, original_width: 3000, original_height: 2000 });
    expect(img.data.image.data_uri).toMatch(/^data:image\/jpeg;base64,\/9j\//);
  }, 60_000);
});

describe('MCP (fileshed mcp, official SDK client)', () => {
  it('a document is text; an image is an image content item beside the text', async () => {
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--base', base, '--user', 'desk'], stderr: 'pipe' }));
    try {
      const pdf = await client.callTool({ name: 'shed_read', arguments: { zone: 'storage', path: 'report.pdf', pages: '2' } });
      const pdfContent = pdf.content as Array<{ type: string; text?: string }>;
      expect(pdfContent.map((c) => c.type)).toEqual(['text']);
      expect(JSON.parse(pdfContent[0]!.text!).data.content).toBe('--- page 2 of 2 ---\nSecond page\n');

      const img = await client.callTool({ name: 'shed_read', arguments: { zone: 'storage', path: 'photo.jpg' } });
      expect(img.isError).toBe(false);
      const content = img.content as Array<{ type: string; text?: string; data?: string; mimeType?: string }>;
      expect(content.map((c) => c.type)).toEqual(['text', 'image']);
      expect(content[1]!.mimeType).toBe('image/jpeg');
      const bytes = Buffer.from(content[1]!.data!, 'base64');
      expect([bytes[0], bytes[1]]).toEqual([0xff, 0xd8]);
      const envelope = JSON.parse(content[0]!.text!);
      expect(envelope.data.image).toMatchObject({ width: 1568, height: 1045, original_width: 3000, bytes: bytes.length });
      expect(envelope.data.image.data_uri).toBeUndefined();
      expect(img.structuredContent).toEqual(envelope);
      expect(envelope.message).toContain('3000 x 2000 pixels');
    } finally {
      await client.close();
    }
  }, 60_000);
});
