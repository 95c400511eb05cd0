/**
 * Markdown files viewed as pages (`?view=1`). markdown-it with `html: false` escapes every raw
 * HTML tag in the source, and its link validator refuses javascript:, vbscript:, file: and
 * non-image data: URLs; the page is also served under a CSP that allows no script at all, so
 * a `<script>` in a Markdown file is shown as text and could not run anyway.
 */
import MarkdownIt from 'markdown-it';
import { page } from './pages.js';

/** Larger files are served raw: rendering happens in memory. */
export const MARKDOWN_VIEW_MAX_BYTES = 5 * 1024 * 1024;

const md = new MarkdownIt({ html: false, linkify: false, typographer: false });

/** `inFolder`: the file was reached through a folder link, whose page is one level up. */
export function markdownPage(name: string, source: string, inFolder: boolean): string {
  const raw = `<a href="${encodeURIComponent(name)}">raw</a>`;
  const body = `<nav class="crumbs">${inFolder ? '<a href="./">← folder</a> · ' : ''}${raw}</nav><article>${md.render(source)}</article>`;
  return page(name, body);
}
