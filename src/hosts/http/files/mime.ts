/**
 * Content types from file names (the server never sniffs contents; nosniff tells browsers not to
 * either), and which of them a browser would run as active content.
 */
const TYPES: Record<string, string> = {
  txt: 'text/plain', md: 'text/markdown', markdown: 'text/markdown', csv: 'text/csv', tsv: 'text/tab-separated-values', log: 'text/plain',
  html: 'text/html', htm: 'text/html', xhtml: 'application/xhtml+xml', xml: 'application/xml', xsl: 'application/xml', xslt: 'application/xml',
  svg: 'image/svg+xml', css: 'text/css', js: 'text/javascript', mjs: 'text/javascript', json: 'application/json', yaml: 'text/yaml', yml: 'text/yaml',
  pdf: 'application/pdf', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', avif: 'image/avif', ico: 'image/x-icon', bmp: 'image/bmp',
  mp3: 'audio/mpeg', wav: 'audio/wav', ogg: 'audio/ogg', flac: 'audio/flac', m4a: 'audio/mp4', mp4: 'video/mp4', webm: 'video/webm', mov: 'video/quicktime',
  zip: 'application/zip', gz: 'application/gzip', tgz: 'application/gzip', tar: 'application/x-tar', bz2: 'application/x-bzip2', xz: 'application/x-xz', '7z': 'application/x-7z-compressed',
  sqlite: 'application/vnd.sqlite3', db: 'application/vnd.sqlite3', wasm: 'application/wasm',
  doc: 'application/msword', docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xls: 'application/vnd.ms-excel', xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  ppt: 'application/vnd.ms-powerpoint', pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  odt: 'application/vnd.oasis.opendocument.text', ods: 'application/vnd.oasis.opendocument.spreadsheet', odp: 'application/vnd.oasis.opendocument.presentation',
  py: 'text/plain', ts: 'text/plain', sh: 'text/plain', c: 'text/plain', h: 'text/plain', java: 'text/plain', rs: 'text/plain', go: 'text/plain', sql: 'text/plain', ini: 'text/plain', toml: 'text/plain',
};

/** Types a browser renders with script or markup: always served under `Content-Security-Policy: sandbox`. */
const ACTIVE = new Set(['text/html', 'application/xhtml+xml', 'application/xml', 'image/svg+xml', 'text/javascript', 'text/css']);

export function extensionOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot + 1).toLowerCase();
}

export function contentTypeOf(name: string): { type: string; active: boolean } {
  const base = TYPES[extensionOf(name)] ?? 'application/octet-stream';
  const text = base.startsWith('text/') || base === 'application/json' || base === 'application/xml' || base === 'image/svg+xml' || base === 'application/xhtml+xml';
  return { type: text ? `${base}; charset=utf-8` : base, active: ACTIVE.has(base) };
}

export function isMarkdown(name: string): boolean {
  const ext = extensionOf(name);
  return ext === 'md' || ext === 'markdown';
}
