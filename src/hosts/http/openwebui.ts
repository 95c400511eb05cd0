/**
 * Open WebUI's REST API seen with the calling user's own session token: group membership
 * (GET /api/v1/groups/), attachment bytes (GET /api/v1/files/{id}/content) and chat status events
 * (POST /api/v1/chats/{chat}/messages/{message}/event). The token is used, never logged.
 */
import { formatSize, type AttachedFile, type GroupDirectory, type GroupInfo } from '../../index.js';

export function openwebuiGroups(baseUrl: string, token: string, caller: { id: string; role: string }): GroupDirectory {
  interface Row extends GroupInfo {
    userIds?: string[];
  }
  let listing: Promise<Row[]> | undefined;
  const list = () =>
    (listing ??= (async () => {
      const res = await fetch(`${baseUrl}/api/v1/groups/`, { headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) });
      if (!res.ok) throw new Error(`Open WebUI answered ${res.status} to the group listing`);
      const body = (await res.json()) as unknown;
      const items = Array.isArray(body) ? body : [];
      return items.flatMap((g: Record<string, unknown>) =>
        typeof g?.id === 'string'
          ? [{ id: g.id, name: typeof g.name === 'string' ? g.name : g.id, description: typeof g.description === 'string' ? g.description : '', ...(Array.isArray(g.user_ids) ? { userIds: g.user_ids.map(String) } : {}) }]
          : [],
      );
    })());
  const strip = ({ id, name, description }: Row): GroupInfo => ({ id, name, description });
  return {
    // For a non-admin Open WebUI lists only the caller's groups; for an admin all of them.
    groupsOf: async (userId) => (await list()).filter((g) => (g.userIds ? g.userIds.includes(userId) : caller.role !== 'admin' || userId === caller.id)).map(strip),
    byId: async (id) => {
      const g = (await list()).find((x) => x.id === id);
      return g && strip(g);
    },
    byNameIgnoringCase: async (name) => (await list()).filter((g) => g.name.toLowerCase() === name.toLowerCase()).map(strip),
    members: async (groupId) => {
      const g = (await list()).find((x) => x.id === groupId);
      if (g === undefined) return [];
      if (g.userIds) return g.userIds;
      // Newer Open WebUI versions omit user_ids: a non-admin sees only groups it belongs to.
      return caller.role === 'admin' ? [] : [caller.id];
    },
  };
}

/** An attachment known by its Open WebUI file id, fetched with the user's token when imported. */
export function openwebuiFile(baseUrl: string, token: string, id: string, name: string): AttachedFile {
  return {
    id,
    name,
    fetch: async (maxBytes) => {
      const res = await fetch(`${baseUrl}/api/v1/files/${encodeURIComponent(id)}/content`, { headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(60_000) });
      if (!res.ok || res.body === null) throw new Error(`Open WebUI answered ${res.status} for file ${id}`);
      const chunks: Uint8Array[] = [];
      let size = 0;
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        size += chunk.length;
        if (size > maxBytes) throw new Error(`it is larger than ${formatSize(maxBytes)}`);
        chunks.push(chunk);
      }
      return Buffer.concat(chunks, size);
    },
  };
}

/** Relays a status event to the Open WebUI chat message the call belongs to (best effort). */
export async function postChatEvent(baseUrl: string, token: string, chatId: string, messageId: string, event: unknown): Promise<void> {
  try {
    await fetch(`${baseUrl}/api/v1/chats/${encodeURIComponent(chatId)}/messages/${encodeURIComponent(messageId)}/event`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(event),
      signal: AbortSignal.timeout(5_000),
    });
  } catch {
    // The chat display is a courtesy: a failed relay never affects the call.
  }
}
