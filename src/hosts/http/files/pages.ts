/**
 * The HTML shell of every page /files renders (listings, rendered Markdown, errors): no external
 * assets, no script, readable on a phone, following the system's light or dark mode.
 */
import type http from 'node:http';
import { commonHeaders, PAGE_CSP } from './headers.js';

const STYLE = `
:root{color-scheme:light dark;--fg:#1d1d1f;--bg:#fff;--muted:#6b6b70;--line:#e3e3e8;--link:#0b5cd6;--row:#f6f6f9}
@media (prefers-color-scheme:dark){:root{--fg:#e8e8ea;--bg:#151517;--muted:#a0a0a8;--line:#2c2c31;--link:#7db0ff;--row:#1e1e22}}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:960px;margin:0 auto;padding:16px}a{color:var(--link);text-decoration:none}a:hover{text-decoration:underline}
h1{font-size:1.25rem;margin:.25rem 0 1rem;word-break:break-word}nav.crumbs{color:var(--muted);word-break:break-word}
table{width:100%;border-collapse:collapse}th,td{padding:.5rem .4rem;border-bottom:1px solid var(--line);text-align:left;vertical-align:middle}
th a{color:inherit}td.n{word-break:break-word}td.s,td.d,th.s,th.d,td.v{white-space:nowrap;color:var(--muted);font-variant-numeric:tabular-nums}
tr:hover td{background:var(--row)}.bar{display:flex;gap:1rem;flex-wrap:wrap;margin:.5rem 0 1rem}
@media (max-width:600px){td.d,th.d{display:none}body{font-size:15px}}
article{overflow-wrap:anywhere}article pre{overflow:auto;padding:.75rem;background:var(--row);border-radius:6px}
article code{font-family:ui-monospace,Menlo,Consolas,monospace}article table td,article table th{border:1px solid var(--line)}
article img{max-width:100%}footer{margin-top:2rem;color:var(--muted);font-size:.85rem}
.note{color:var(--muted);font-size:.9rem}.scroll{overflow:auto;max-width:100%;border:1px solid var(--line);border-radius:6px}
table.lines td,table.grid td,table.grid th{border-bottom:1px solid var(--line);padding:.15rem .5rem;white-space:pre;font:13px/1.45 ui-monospace,Menlo,Consolas,monospace}
table.lines td.code{width:100%}td.ln,th.ln{color:var(--muted);text-align:right;user-select:none;background:var(--row);position:sticky;left:0}
table.grid th{position:sticky;top:0;background:var(--row);font-weight:600}table.grid{width:auto;min-width:100%}
figure.preview{margin:0;text-align:center}figure.preview img{max-width:100%;height:auto;border:1px solid var(--line);border-radius:6px}
iframe.pdf{width:100%;height:80vh;border:1px solid var(--line);border-radius:6px}
img.thumb{width:40px;height:40px;object-fit:cover;border-radius:4px;vertical-align:middle;margin-right:.5rem;border:1px solid var(--line)}
`;

export function escapeHtml(text: string): string {
  if (!/[&<>"']/.test(text)) return text; // the common case on big listings
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

export function sendPage(req: http.IncomingMessage, res: http.ServerResponse, status: number, html: string, extra: Record<string, string> = {}, csp = PAGE_CSP): void {
  const body = Buffer.from(html, 'utf8');
  commonHeaders(res);
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Content-Security-Policy', csp);
  res.setHeader('Content-Length', body.length);
  for (const [k, v] of Object.entries(extra)) res.setHeader(k, v);
  res.end(req.method === 'HEAD' ? undefined : body);
}

const ERRORS: Record<number, { title: string; text: string }> = {
  400: { title: 'Bad request', text: 'This request could not be understood.' },
  404: { title: 'Not found', text: 'This link does not exist, or what it pointed to is no longer there.' },
  405: { title: 'Method not allowed', text: 'Links can only be opened (GET or HEAD).' },
  410: { title: 'Link expired', text: 'This link has expired or was deleted. Ask for a new one: in the chat, ask the assistant to create a new download link (shed_link_create).' },
  416: { title: 'Range not satisfiable', text: 'The requested byte range lies outside the file.' },
  500: { title: 'Something went wrong', text: 'The file could not be served. Try again later.' },
};

export function sendError(req: http.IncomingMessage, res: http.ServerResponse, status: keyof typeof ERRORS | number, detail?: string, extra: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const e = ERRORS[status] ?? ERRORS[404]!;
  const body = `<h1>${status} · ${escapeHtml(e.title)}</h1><p>${escapeHtml(detail ?? e.text)}</p><footer>Fileshed</footer>`;
  sendPage(req, res, status, page(`${status} ${e.title}`, body), extra);
}
