/**
 * The folder page: breadcrumbs, one row per entry (name, size, date), sortable by name, size or
 * date through the query (`?sort=size&order=desc`), links relative to the folder's own URL (which
 * ends with '/'), a "download all" zip link. Entries that are links leading outside the linked
 * folder and blocked entries are left out.
 */
import path from 'node:path';
import { formatSize, linkServing, type FolderEntry, type SortKey, type Target } from '../../../index.js';
import { previewKind } from './preview.js';
import { escapeHtml, page } from './pages.js';

type Entry = FolderEntry;

const href = (name: string) => encodeURIComponent(name);
/** Dates to the minute; files of one folder share few minutes, so each is formatted once per page. */
function dateFormatter(): (ms: number) => string {
  const seen = new Map<number, string>();
  return (ms) => {
    const minute = Math.floor(ms / 60_000);
    let text = seen.get(minute);
    if (text === undefined) {
      text = new Date(minute * 60_000).toISOString().slice(0, 16).replace('T', ' ');
      seen.set(minute, text);
    }
    return text;
  };
}

/** The page of `entries`, already in display order (readEntries sorts them); rows are rendered in slices. */
export async function listingPage(target: Target, entries: Entry[], key: SortKey, desc: boolean): Promise<string> {
  const rootName = target.link.path === '' ? target.zone.label : path.posix.basename(target.link.path);
  const segs = target.sub === '' ? [] : target.sub.split('/');
  const crumbs = [rootName, ...segs].map((label, i) => {
    const up = segs.length - i;
    return up === 0 ? `<strong>${escapeHtml(label)}</strong>` : `<a href="${'../'.repeat(up)}">${escapeHtml(label)}</a>`;
  });
  const sortLink = (k: SortKey, label: string, cls: string) => {
    const nextDesc = k === key ? !desc : k !== 'name';
    const arrow = k === key ? (desc ? ' ↓' : ' ↑') : '';
    return `<th class="${cls}"><a href="?sort=${k}&amp;order=${nextDesc ? 'desc' : 'asc'}">${label}${arrow}</a></th>`;
  };
  const date = dateFormatter();
  const slice = linkServing.slice();
  const rows: string[] = [];
  for (const e of entries) {
    await slice.tick();
    const link = e.isFolder ? `${href(e.name)}/` : href(e.name);
    const kind = e.isFolder ? undefined : previewKind(e.name);
    // The preview link has its own column: the name cell holds exactly one link, the entry's.
    const view = kind !== undefined ? `<a href="${link}?view=1">view</a>` : '';
    // Pictures show as a small thumbnail (?thumb=1, loaded only when scrolled into view); the name's link is the real file.
    const thumb = kind === 'image' ? `<img class="thumb" src="${link}?thumb=1" alt="" loading="lazy" width="40" height="40">` : '';
    rows.push(`<tr><td class="n">${thumb}<a href="${link}">${e.isFolder ? '📁 ' : ''}${escapeHtml(e.name)}${e.isFolder ? '/' : ''}</a></td><td class="v">${view}</td><td class="s">${e.isFolder ? '' : formatSize(e.size)}</td><td class="d">${date(e.mtimeMs)}</td></tr>`);
  }
  const body = [
    `<nav class="crumbs">${crumbs.join(' / ')}</nav>`,
    `<h1>${escapeHtml(segs.at(-1) ?? rootName)}</h1>`,
    `<div class="bar"><a href="?zip=1" download>⬇ Download all (zip)</a><span>${entries.length} item${entries.length === 1 ? '' : 's'}</span></div>`,
    `<table><thead><tr>${sortLink('name', 'Name', 'n')}<th class="v"></th>${sortLink('size', 'Size', 's')}${sortLink('date', 'Modified', 'd')}</tr></thead><tbody>${rows.join('')}</tbody></table>`,
    `<footer>Shared with Fileshed · link valid until ${escapeHtml(target.link.expiresAt.replace('T', ' ').slice(0, 16))} UTC</footer>`,
  ];
  return page(segs.at(-1) ?? rootName, body.join(''));
}
