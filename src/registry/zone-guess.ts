/**
 * "Did you mean" for a zone name that is not one: the words models and users reach for ("docs",
 * "Upload", "my storage", "shared") mapped to the zone they mean, then a prefix or a small typo.
 * Only a guess the answer can stand behind: nothing when two zones fit as well.
 */
import { editDistance } from '../core/base/text/distance.js';

/** Words that name a zone without being its name (lower case, spaces and separators removed). */
const ALIASES: Record<string, string> = {
  doc: 'documents', docs: 'documents', document: 'documents', documents: 'documents', git: 'documents', versioned: 'documents',
  upload: 'uploads', uploaded: 'uploads', attachment: 'uploads', attachments: 'uploads', chat: 'uploads', files: 'uploads',
  store: 'storage', stored: 'storage', persistent: 'storage', home: 'storage', mystorage: 'storage', workspace: 'storage',
  groups: 'group', groupspace: 'group', shared: 'group', team: 'group', space: 'group',
};

export function guessZone(received: unknown, zones: readonly string[]): string | undefined {
  if (typeof received !== 'string') return undefined;
  const key = received.toLowerCase().replace(/[\s_\-/.]+/g, '');
  if (key === '') return undefined;
  if (zones.includes(key)) return key; // "Storage", "storage/" and the like
  const alias = ALIASES[key] ?? ALIASES[key.replace(/^my/, '')];
  if (alias !== undefined && zones.includes(alias)) return alias;
  const prefixed = zones.filter((z) => key.length >= 3 && (z.startsWith(key) || key.startsWith(z)));
  if (prefixed.length === 1) return prefixed[0];
  const scored = zones.map((z) => ({ z, d: editDistance(key, z) })).sort((a, b) => a.d - b.d);
  const [best, next] = scored;
  if (best !== undefined && best.d <= 2 && (next === undefined || next.d > best.d)) return best.z;
  return undefined;
}
