/**
 * The host bridge: everything the chat platform provides (attached files, status events, group
 * membership, link storage, …) reaches the core through this one interface (SPEC section 2). The
 * standalone implementation needs no platform at all. Hosts (src/hosts/) implement or wrap it.
 */
export interface StatusEvent {
  type: 'status';
  data: { description: string; done: boolean };
}

export type EventEmitter = (event: StatusEvent) => Promise<void> | void;

/** One file attached to the conversation, as the host describes it (nothing here is trusted yet). */
export interface AttachedFile {
  /** Name the host gives (reduced to a safe base name by shed_import). */
  name: string;
  id?: string;
  /** Local path the host stored the upload at (only read under the allowed folders). */
  path?: string;
  /** Inline content (Open WebUI: the parser's text output), used when there is no readable path. */
  content?: string;
  /** The upload's bytes, given by the host itself (HTTP multipart parts); imported like a local file. */
  bytes?: Uint8Array;
  /** Fetches the bytes from the platform (Open WebUI files API with the user's token), at most maxBytes. */
  fetch?: (maxBytes: number) => Promise<Uint8Array>;
}

import type { GroupDirectory } from './groups/directory.js';

export interface HostBridge {
  /** Name reported by shed_parameters. */
  readonly name: string;
  /**
   * The files attached to a call, from its host arguments (`__files__`, `__metadata__.files`).
   * Optional: hosts that do not provide it get the standalone reading.
   */
  attachedFiles?(files: unknown, metadata: unknown): AttachedFile[];
  /**
   * The files of the conversation the host reads from the chat platform itself (Open WebUI's chat
   * API with the user's session): the current message's, and earlier messages' when `earlier`.
   * Rejects with a sentence naming what to change when they cannot be read.
   */
  chatFiles?(opts: { earlier: boolean }): Promise<AttachedFile[]>;
  /** How a user attaches files with this host, for the hint when none are attached (default: in the chat). */
  readonly attachHint?: string;
  /**
   * Entries the host saw where attachments come from but does not offer, with the reason (fileshed
   * mcp: links and subfolders of the import folder): shed_import names them instead of staying silent.
   */
  skippedFiles?(): { name: string; reason: string }[];
  /**
   * Who serves this host's download links and for how long, ending the link message "served ..."
   * (default: by `fileshed serve` on the same storage at public_url).
   */
  linkServer?(publicUrl: string): string;
  /**
   * Group membership for this call (e.g. Open WebUI's REST groups API with the user's token).
   * Optional: without it the standalone directory (groups tables of access_auth.sqlite) is used.
   */
  groups?(ctx: { storageBase: string; userId: string; token?: string }): GroupDirectory;
  /**
   * The caller's Open WebUI session (a server serving Open WebUI with the user's own token fills
   * it): the link backend `openwebui` uploads and lists files with it. `url` is where the server
   * reaches Open WebUI's API (default: the valve openwebui_api_url).
   */
  readonly openWebUI?: { url?: string; token: string };
  /**
   * False for a host that serves several users and was not told otherwise (`fileshed serve` without
   * --allow-unconfined): valve sandbox="validated" then refuses commands instead of running them
   * without kernel confinement. Undefined (true): one local user's host (`fileshed mcp`, the CLI,
   * the plugin embedded in a platform that decides for itself).
   */
  readonly allowsUnconfined?: boolean;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const obj = (v: unknown): Record<string, unknown> | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

/**
 * Open WebUI's shape (also what standalone callers pass): `__files__` entries hold `name`, `id`
 * and a `file` object with `id`, `filename`, `path`, `meta.name` and `data.content`; a plain string
 * entry is a path. `__files__` wins; otherwise `__metadata__.files`.
 */
export function readAttachedFiles(files: unknown, metadata: unknown): AttachedFile[] {
  const list = Array.isArray(files) && files.length > 0 ? files : obj(metadata) && Array.isArray(obj(metadata)!.files) ? (obj(metadata)!.files as unknown[]) : [];
  const out: AttachedFile[] = [];
  for (const entry of list.slice(0, 1000)) {
    if (typeof entry === 'string') {
      out.push({ name: entry, path: entry });
      continue;
    }
    const e = obj(entry);
    if (e === undefined) continue;
    const f = obj(e.file) ?? {};
    const meta = obj(f.meta) ?? {};
    const data = obj(f.data) ?? obj(e.data) ?? {};
    const file: AttachedFile = {
      name: str(e.name) ?? str(e.filename) ?? str(f.filename) ?? str(f.name) ?? str(meta.name) ?? '',
    };
    const id = str(e.id) ?? str(f.id);
    if (id !== undefined) file.id = id;
    const p = str(f.path) ?? str(f.file_path) ?? str(e.path) ?? str(e.file_path);
    if (p !== undefined) file.path = p;
    if (typeof data.content === 'string') file.content = data.content;
    out.push(file);
  }
  return out;
}

export const standaloneHost: HostBridge = { name: 'standalone', attachedFiles: readAttachedFiles };
