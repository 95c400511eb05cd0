/**
 * Safety of archive entry names, decided before anything is written. Backslashes are taken as
 * folder separators (archives made on Windows), then a name must be relative (no leading /, no
 * drive letter, no UNC prefix), contain no '..' component at all (even one that would stay inside),
 * no control characters, and no overlong part. "./a//b" is normalised to "a/b".
 */
import { shedError } from '../../base/errors.js';

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u;
const MAX_PART_BYTES = 255;
const MAX_NAME_BYTES = 4096;

export type NameVerdict = { ok: true; rel: string } | { ok: false; code: 'PATH_ESCAPE' | 'INVALID_PATH'; why: string };

/** Plain names (the usual case) need no further work: ASCII, no backslash, no dot-only part. */
const PLAIN = /^(?:[A-Za-z0-9_$+=@,~-][A-Za-z0-9_ .$+=@,~-]*\/)*[A-Za-z0-9_$+=@,~-][A-Za-z0-9_ .$+=@,~-]*\/?$/;

export function checkEntryName(raw: string): NameVerdict {
  if (raw.length < 240 && PLAIN.test(raw) && !raw.includes('/.') ) return { ok: true, rel: raw.endsWith('/') ? raw.slice(0, -1) : raw };
  if (CONTROL.test(raw)) return { ok: false, code: 'INVALID_PATH', why: 'contains a control character' };
  const name = raw.replace(/\\/g, '/');
  if (name.startsWith('/')) return { ok: false, code: 'PATH_ESCAPE', why: 'is an absolute path' };
  if (/^[A-Za-z]:/.test(name)) return { ok: false, code: 'PATH_ESCAPE', why: 'starts with a drive letter' };
  const parts: string[] = [];
  for (const part of name.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') return { ok: false, code: 'PATH_ESCAPE', why: "contains '..' (path traversal)" };
    if (Buffer.byteLength(part) > MAX_PART_BYTES) return { ok: false, code: 'INVALID_PATH', why: `has a name part longer than ${MAX_PART_BYTES} bytes` };
    parts.push(part.normalize('NFC'));
  }
  const rel = parts.join('/');
  if (Buffer.byteLength(rel) > MAX_NAME_BYTES) return { ok: false, code: 'INVALID_PATH', why: `is longer than ${MAX_NAME_BYTES} bytes` };
  return { ok: true, rel };
}

export function unsafeEntry(shown: string, entry: string, verdict: Exclude<NameVerdict, { ok: true }>): Error {
  const printable = JSON.stringify(entry).slice(1, -1);
  return shedError(verdict.code, `${shown} holds an entry that would be written outside the destination: '${printable}' ${verdict.why}. Nothing was extracted.`, {
    details: { entry: printable, reason: verdict.why },
    hint: 'This archive is unsafe (or made by a broken tool); it cannot be extracted. shed_zipinfo lists its entries.',
  });
}
