/**
 * Fileshed: the plugin module. Exports the Tools class (only shed_* methods), the LLM tool specs
 * and the valves schema, all derived from one registry.
 */
import { ERROR_CODES } from './core/base/errors.js';
import { groupAdmin } from './core/services/groups/directory.js';
import { appendAudit, readAudit } from './core/services/audit/audit.js';
import { measureUsage, readUsageRecords } from './core/services/quota/records.js';
import { maintainAll } from './core/services/maintenance/maintain.js';
import { storeSizes } from './core/services/undo/store.js';
import { adoptSecret } from './core/services/links/secret.js';
import { allLinks, revokeLink } from './core/services/links/store.js';
import { filesBelow, openChecked, readEntries, resolveTarget } from './core/services/links/serving.js';
import { linkThumbnail } from './core/services/links/thumbnail.js';
import { TimeSlice } from './core/base/fs/slice.js';
import { formatSize } from './core/base/text/size.js';
import { plural } from './core/base/text/format.js';
import { parseValves, ValvesSchema } from './core/base/valves.js';
import { FUNCTIONS } from './functions/index.js';
import type { HostArg } from './registry/define.js';
import { privateStorageBase } from './core/base/fs/private.js';
import { recoverStorage } from './core/services/recovery/recover.js';
import { coordinationInUse, useCoordination } from './core/base/locks/lease.js';
import { storageKind } from './core/base/fs/kind.js';
import { readText, writeBytes } from './core/base/fs/read.js';
import { poolStats, shutdownPool } from './core/base/work/pool.js';
// Side effect: in a pool worker thread (started on this very bundle) this serves jobs.
import './core/services/pool-worker.js';
import { enabledFunctions, type ProfileValves } from './registry/profiles.js';
import { toolSpec, valvesJsonSchema, type ToolSpec } from './registry/specs.js';
import { extensionOf, isTextType, mimeOfExtension } from './core/formats/mime.js';

export { Tools, type ToolsOptions } from './tools.js';
export type { HostBridge, StatusEvent } from './core/services/host-bridge.js';
export type { ToolSpec } from './registry/specs.js';
export type { GroupDirectory, GroupInfo } from './core/services/groups/directory.js';
export type { AttachedFile } from './core/services/host-bridge.js';
export { hostApi, type HostFunction } from './host-api.js';
export type { EntryOrder, FolderEntry, Refusal, SortKey, Target, TargetOptions } from './core/services/links/serving.js';
export type { RecoveryReport } from './core/services/recovery/recover.js';

/**
 * Administration for the standalone host (the CLI's `fileshed groups ...`): groups and their
 * members live in {storage_base_path}/access_auth.sqlite. Each function takes the storage base.
 */
export const admin = {
  groups: groupAdmin,
  /** Maintenance of every user and group of the storage (the server's schedule, the admin page's "run now"). */
  maintainAll: (valves: Record<string, unknown>) => maintainAll(parseValves(ValvesSchema, valves, 'valve')),
  /** The newest audit entries of a storage base, filtered (admin page). */
  readAudit,
  /** Usage records per user and group (admin page), and measuring the scopes that have none yet. */
  usage: {
    read: readUsageRecords,
    measure: (valves: Record<string, unknown>, all = false) => measureUsage(parseValves(ValvesSchema, valves, 'valve'), all),
    /** Bytes of each user's undo capture store (server state, not counted in the quota). */
    undoStores: storeSizes,
  },
  /** One audit line for an admin-page event (saves, sign-ins, refused requests); follows the audit_log valve. */
  auditEvent(valves: Record<string, unknown>, event: { user: string; action: string; code: string; flagged?: boolean; paths?: string[] }): void {
    const v = parseValves(ValvesSchema, valves, 'valve');
    if (!v.audit_log) return;
    const entry = { time: new Date().toISOString(), user: event.user, conversation: 'admin', function: event.action, code: event.code, ms: 0, ...(event.paths ? { paths: event.paths } : {}), ...(event.flagged ? { flagged: true as const } : {}) };
    appendAudit({ storageBase: v.storage_base_path, maxBytes: v.audit_max_mb * 1024 * 1024, retentionDays: v.audit_retention_days }, entry);
  },
  /** Every download link of a storage base, and revoking one (admin page). */
  links: { list: allLinks, revoke: revokeLink },
};
export type { UsageRecord } from './core/services/quota/records.js';
export type { AuditEntry } from './core/services/audit/audit.js';
export type { StorageMaintenance } from './core/services/maintenance/maintain.js';

/**
 * What `GET /files/{token}` needs from the core (the server's files route): the per-request
 * re-check of token, record, membership and path, and disk access to what it allows.
 */
export const linkServing = { resolveTarget, openChecked, readEntries, filesBelow, adoptSecret, thumbnail: linkThumbnail, slice: () => new TimeSlice(), mime: { extensionOf, mimeOfExtension, isTextType } };

/** Sizes and counts as people read them everywhere ("8.0 KiB", "1 user"): messages, tree lines, folder pages, the admin page. */
export { formatSize, plural };

/**
 * For a server hosting the plugin (`fileshed serve`): recovery of what killed calls left behind
 * (call `recoverStorage(base)` at start, before serving), keeping the base private
 * (`privateStorageBase(base)`: 0700, secrets 0600; a warning when it cannot), the worker pool's
 * shutdown and load, coordination across hosts (`useCoordination(coordinator, base)`: every lock of
 * that storage base becomes a lease of the coordinator), what filesystem the storage is on, and
 * whole-file reads that survive a network filesystem's stale handles.
 */
export const serving = { recoverStorage, privateStorageBase, shutdownPool, poolStats, useCoordination, coordinationInUse, storageKind, readText, writeBytes };
export type { Coordinator, Lease } from './core/base/locks/lease.js';
export type { StorageKind } from './core/base/fs/kind.js';

export const version = '0.1.0';

const allSpecs = FUNCTIONS.map(toolSpec);

/**
 * The specs of the functions the valves enable for a caller of this role (valves `functions` and
 * `functions_admin`, and the switches of code execution, `allow_python` and `allow_shell`): what
 * hosts (OpenAPI, MCP, the Open WebUI tool file) should expose.
 */
export function specsFor(valves: ProfileValves = {}, role: string = 'user'): ToolSpec[] {
  const enabled = new Set<string>(enabledFunctions(FUNCTIONS, valves, role).functions.map((f) => f.name));
  return allSpecs.filter((s) => enabled.has(s.function.name));
}

/**
 * OpenAI function-calling specs of the functions a deployment with the default valves offers (what
 * dist/tools.json and the Open WebUI tool file hold): every function but code execution, which is
 * off by default. `specsFor(valves)` gives another deployment's.
 */
export const toolSpecs = specsFor();

/** Names of the functions the valves enable for this role, in registry order. */
export function enabledFunctionNames(valves: ProfileValves = {}, role: string = 'user'): string[] {
  return enabledFunctions(FUNCTIONS, valves, role).functions.map((f) => f.name);
}

/** JSON Schema of the admin valves, user valves under $defs.UserValves (what valves.schema.json holds). */
export const valvesSchema = valvesJsonSchema();

/** One line per function and per error code, for documentation generators (README, hosts). */
export const catalog = {
  functions: FUNCTIONS.map(({ name, category, summary }) => ({ name, category, summary })),
  errorCodes: { ...ERROR_CODES } as Record<string, string>,
};

/**
 * Host arguments each function reads beyond the caller's identity and conversation (`__files__`,
 * `__event_emitter__`), for hosts that declare them per function (the Open WebUI tool file).
 */
export const hostArguments: Record<string, readonly HostArg[]> = Object.fromEntries(FUNCTIONS.map((f) => [f.name, f.hostArgs ?? []]));
