/**
 * Response headers every /files response carries, and the RFC 6266 Content-Disposition.
 */
import type http from 'node:http';

/** The page's own CSS only: no script, no external anything. Listing and error pages use it. */
export const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

export function commonHeaders(res: http.ServerResponse): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'private, no-cache');
  // The token is in the URL: never let a page or a file's link leak it to another site.
  res.setHeader('Referrer-Policy', 'no-referrer');
}

/** ASCII fallback plus the exact UTF-8 name (RFC 6266 / RFC 8187). */
export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_') || 'download';
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
