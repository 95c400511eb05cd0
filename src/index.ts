/**
 * Fileshed: the plugin module. Exports the Tools class (only shed_* methods), the LLM tool specs
 * and the valves schema, all derived from one registry.
 */
import { ERROR_CODES } from './core/errors.js';
import { groupAdmin } from './core/groups/directory.js';
import { appendAudit, readAudit } from './core/audit/audit.js';
import { measureUsage, readUsageRecords } from './core/quota/records.js';
import { maintainAll } from './core/maintenance/maintain.js';
import { parseValves, ValvesSchema } from './core/valves.js';
import { FUNCTIONS } from './functions/index.js';
import { toolSpec, valvesJsonSchema } from './registry/specs.js';

export { Tools, type ToolsOptions } from './tools.js';
export type { HostBridge, StatusEvent } from './host/bridge.js';
export type { GroupDirectory, GroupInfo } from './core/groups/directory.js';
export type { AttachedFile } from './host/bridge.js';
export { hostApi, type HostFunction } from './hosts/api.js';

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
  },
  /** One audit line for an admin-page event (saves, sign-ins, refused requests); follows the audit_log valve. */
  auditEvent(valves: Record<string, unknown>, event: { user: string; action: string; code: string; flagged?: boolean; paths?: string[] }): void {
    const v = parseValves(ValvesSchema, valves, 'valve');
    if (!v.audit_log) return;
    const entry = { time: new Date().toISOString(), user: event.user, conversation: 'admin', function: event.action, code: event.code, ms: 0, ...(event.paths ? { paths: event.paths } : {}), ...(event.flagged ? { flagged: true as const } : {}) };
    appendAudit({ storageBase: v.storage_base_path, maxBytes: v.audit_max_mb * 1024 * 1024, retentionDays: v.audit_retention_days }, entry);
  },
};
export type { UsageRecord } from './core/quota/records.js';
export type { AuditEntry } from './core/audit/audit.js';
export type { StorageMaintenance } from './core/maintenance/maintain.js';

export const version = '0.1.0';

/** OpenAI function-calling specs of every shed_* function (what dist/tools.json holds). */
export const toolSpecs = FUNCTIONS.map(toolSpec);

/** JSON Schema of the admin valves, user valves under $defs.UserValves (what valves.schema.json holds). */
export const valvesSchema = valvesJsonSchema();

/** One line per function and per error code, for documentation generators (README, hosts). */
export const catalog = {
  functions: FUNCTIONS.map(({ name, category, summary }) => ({ name, category, summary })),
  errorCodes: { ...ERROR_CODES } as Record<string, string>,
};
