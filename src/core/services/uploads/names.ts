/**
 * File names of imported attachments: a host-given name becomes a safe base name (no folders, no
 * control or direction-changing characters, not "." or "..", no leading "-" that a command would
 * take for an option, not a temp-file name), and names are made unique within one import.
 */
import { TEMP_SUFFIX } from '../../base/fs/atomic.js';

const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/gu;
const MAX_NAME_BYTES = 200;

export function safeName(raw: string, fallback: string): string {
  let name = raw.normalize('NFC').replace(/\\/g, '/');
  name = (name.split('/').pop() ?? '').replace(UNSAFE, '_').trim();
  if (name === '' || /^\.+$/.test(name)) name = fallback;
  if (name.startsWith('-')) name = `_${name}`;
  if (name.endsWith(TEMP_SUFFIX)) name = `${name}_`;
  return shorten(name);
}

/** Keeps the extension when a name is cut to the byte limit. */
function shorten(name: string): string {
  if (Buffer.byteLength(name) <= MAX_NAME_BYTES) return name;
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
  let stem = name.slice(0, name.length - ext.length);
  while (Buffer.byteLength(stem + ext) > MAX_NAME_BYTES) stem = [...stem].slice(0, -1).join('');
  return stem + ext;
}

/** A fallback name from the host's file id (or the position in the list). */
export function fallbackName(id: string | undefined, index: number): string {
  const clean = (id ?? '').replace(/[^A-Za-z0-9_-]/g, '').slice(0, 40);
  return clean ? `attachment-${clean}` : `attachment-${index + 1}`;
}

/** report.csv, report-2.csv, report-3.csv ... : the first name not in `taken`. */
export function uniqueName(name: string, taken: Set<string>): string {
  if (!taken.has(name)) return name;
  const dot = name.lastIndexOf('.');
  const [stem, ext] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
  for (let n = 2; ; n++) {
    const candidate = `${stem}-${n}${ext}`;
    if (!taken.has(candidate)) return candidate;
  }
}
