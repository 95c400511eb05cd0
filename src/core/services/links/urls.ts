/**
 * How a link is shown: its URL (built from the valve public_url) and the Markdown the chat renders.
 */
import { tokenFor } from './tokens.js';
import type { SigningKeys } from './secret.js';
import type { LinkKind } from './store.js';

export function linkUrl(publicUrl: string, keys: SigningKeys, id: string, kind: LinkKind): string {
  // A folder link ends with '/' so the listing's relative entry links resolve below it.
  return `${publicUrl.replace(/\/+$/, '')}/files/${tokenFor(keys, id)}${kind === 'folder' ? '/' : ''}`;
}

/** Markdown link text: brackets and backslashes in a file name must not end the link early. */
export function clickable(name: string, url: string, kind: LinkKind): string {
  const label = name.replace(/[\\[\]]/g, (c) => `\\${c}`);
  return kind === 'folder' ? `[📂 Open ${label}](${url})` : `[📥 Download ${label}](${url})`;
}
