/**
 * The pictures a call shows or makes, for the chat: an image shed_read returned (data.image) and
 * the images a script or command wrote (data.files_changed: a chart saved by matplotlib). Hosts put
 * them where the chat displays them: MCP `image` content, or an Open WebUI `files` event. The bytes
 * of a made image come from a shed_read through the same dispatcher, with the caller's identity
 * and the same zone, so every path rule, permission and size cap applies (and the picture is scaled
 * to the model's 1568 px).
 */
import type { HostBridge, hostApi as HostApi } from '../index.js';

const IMAGE = /\.(png|jpe?g|gif|webp)$/i;
/** At most this many made pictures per call reach the chat (a script writing 500 PNGs shows 4). */
export const MAX_CHAT_IMAGES = 4;
const MAKERS = new Set(['shed_run_python', 'shed_run_shell', 'shed_exec']);

export interface ChatImage {
  path: string;
  mimeType: string;
  /** base64 */
  data: string;
}

type Envelope = Record<string, unknown>;
const obj = (v: unknown): Record<string, unknown> | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

/** The image files a successful call wrote (paths in its zone), at most MAX_CHAT_IMAGES. */
export function madeImagePaths(name: string, envelope: Envelope): string[] {
  if (!MAKERS.has(name) || envelope.success !== true) return [];
  const changed = obj(envelope.data)?.files_changed;
  return Array.isArray(changed) ? changed.filter((p): p is string => typeof p === 'string' && IMAGE.test(p)).slice(0, MAX_CHAT_IMAGES) : [];
}

/** Splits a data URI into its type and base64 text. */
export function splitDataUri(uri: unknown): { mimeType: string; data: string } | undefined {
  if (typeof uri !== 'string') return undefined;
  const m = /^data:(image\/[\w.+-]+);base64,/.exec(uri);
  return m ? { mimeType: m[1]!, data: uri.slice(m[0].length) } : undefined;
}

/** Reads each made image as the caller (shed_read in the call's zone and group); unreadable ones are skipped. */
export async function readMadeImages(api: typeof HostApi, args: Record<string, unknown>, paths: string[], valves: Record<string, unknown>, host: HostBridge): Promise<ChatImage[]> {
  const out: ChatImage[] = [];
  for (const path of paths) {
    const readArgs: Record<string, unknown> = { zone: args.zone, path, ...(typeof args.group === 'string' && args.group ? { group: args.group } : {}) };
    for (const k of ['__user__', '__metadata__']) if (k in args) readArgs[k] = args[k];
    const envelope = JSON.parse(await api.call('shed_read', readArgs, valves, host)) as Envelope;
    const image = splitDataUri(obj(obj(envelope.data)?.image)?.data_uri);
    if (envelope.success === true && image) out.push({ path, ...image });
  }
  return out;
}
