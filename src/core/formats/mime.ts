/**
 * The one table of content types by file extension, used by shed_file_type (to name a type and to
 * notice an extension that lies) and by the link server (to label what it sends). A Map, not an
 * object literal: a name such as `x.constructor` or `x.__proto__` must find nothing inherited.
 * Pure: no disk, no process.
 */
const TABLE: ReadonlyMap<string, string> = new Map(
  Object.entries({
    // Text and markup
    txt: 'text/plain', log: 'text/plain', ini: 'text/plain', conf: 'text/plain', cfg: 'text/plain',
    md: 'text/markdown', markdown: 'text/markdown', csv: 'text/csv', tsv: 'text/tab-separated-values',
    html: 'text/html', htm: 'text/html', xhtml: 'application/xhtml+xml', xml: 'application/xml', xsl: 'application/xml', xslt: 'application/xml',
    css: 'text/css', js: 'text/javascript', mjs: 'text/javascript', json: 'application/json',
    yaml: 'application/yaml', yml: 'application/yaml', toml: 'application/toml', svg: 'image/svg+xml',
    // Source code
    ts: 'text/x-typescript', py: 'text/x-python', sh: 'application/x-sh', c: 'text/x-c', h: 'text/x-c', cpp: 'text/x-c++',
    java: 'text/x-java', go: 'text/x-go', rs: 'text/x-rust', rb: 'text/x-ruby', pl: 'text/x-perl', r: 'text/x-r',
    php: 'application/x-httpd-php', sql: 'application/sql', tex: 'application/x-tex', rtf: 'application/rtf',
    diff: 'text/x-diff', patch: 'text/x-diff',
    // Pictures
    png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif', webp: 'image/webp', bmp: 'image/bmp',
    ico: 'image/x-icon', tif: 'image/tiff', tiff: 'image/tiff', heic: 'image/heic', avif: 'image/avif', psd: 'image/vnd.adobe.photoshop',
    // Documents and archives
    pdf: 'application/pdf', ps: 'application/postscript', zip: 'application/zip', gz: 'application/gzip', tgz: 'application/gzip',
    bz2: 'application/x-bzip2', xz: 'application/x-xz', zst: 'application/zstd', '7z': 'application/x-7z-compressed', rar: 'application/vnd.rar',
    tar: 'application/x-tar', jar: 'application/java-archive', apk: 'application/vnd.android.package-archive', epub: 'application/epub+zip',
    docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
    odt: 'application/vnd.oasis.opendocument.text', ods: 'application/vnd.oasis.opendocument.spreadsheet',
    odp: 'application/vnd.oasis.opendocument.presentation', doc: 'application/msword', xls: 'application/vnd.ms-excel',
    ppt: 'application/vnd.ms-powerpoint',
    // Sound and video
    mp3: 'audio/mpeg', wav: 'audio/wav', ogg: 'audio/ogg', flac: 'audio/flac', m4a: 'audio/mp4', aac: 'audio/aac', mid: 'audio/midi',
    mp4: 'video/mp4', mov: 'video/quicktime', avi: 'video/x-msvideo', mkv: 'video/x-matroska', webm: 'video/webm',
    // Data, programs, fonts
    sqlite: 'application/vnd.sqlite3', db: 'application/vnd.sqlite3', wasm: 'application/wasm',
    exe: 'application/vnd.microsoft.portable-executable', dll: 'application/vnd.microsoft.portable-executable',
    so: 'application/x-sharedlib', woff: 'font/woff', woff2: 'font/woff2', ttf: 'font/ttf', otf: 'font/otf',
  }),
);

/** The extension of a file name, lower-cased, without the dot ('' for none and for dot-files such as `.env`). */
export function extensionOf(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot <= 0 ? '' : base.slice(dot + 1).toLowerCase();
}

/** The content type an extension (without its dot, any case) names, or undefined for an unknown one. */
export function mimeOfExtension(extension: string): string | undefined {
  return TABLE.get(extension.toLowerCase());
}

/** Whether a content type is text a reader can show as is (source code, markup, data formats). */
export function isTextType(mime: string): boolean {
  return mime.startsWith('text/') || TEXT_APPLICATION.has(mime);
}

const TEXT_APPLICATION = new Set([
  'application/json', 'application/xml', 'application/xhtml+xml', 'image/svg+xml', 'application/yaml', 'application/toml',
  'application/x-sh', 'application/x-httpd-php', 'application/sql', 'application/x-tex',
]);
