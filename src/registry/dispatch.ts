/**
 * One call of one function: valves, identity, arguments, zone policy, the handler, the versioning
 * seam, and the envelope. Whatever happens inside, the caller gets a JSON string back.
 */
import fs from 'node:fs';
import path from 'node:path';
import { errorJson, successJson } from '../core/base/envelope.js';
import { shedError, ShedError, type ErrorCode } from '../core/base/errors.js';
import { conversationId, namedConversation, parseUser, type Identity } from '../core/base/identity.js';
import { errnoCode } from '../core/base/paths/resolve.js';
import { isStale } from '../core/base/fs/read.js';
import { parseValves, UserValvesSchema, ValvesSchema, type Valves } from '../core/base/valves.js';
import { appendAudit, auditEntry } from '../core/services/audit/audit.js';
import { noteActivity } from '../core/services/quota/records.js';
import { recordChange } from '../core/services/vcs/seam.js';
import { captureCall, markInterrupted } from '../core/services/undo/capture.js';
import { turnIdOf } from '../core/services/undo/turn.js';
import { describeMigration, prepareHome } from '../core/services/vcs/migrate.js';
import { groupHome, openZone, userHome, userScope, groupScope, type QuotaScope, type ZoneName } from '../core/base/zones/zones.js';
import { withCallLock } from '../core/base/locks/call-lock.js';
import { recoverAfterTakeover } from '../core/services/recovery/recover.js';
import { bumpStamp, stampMark } from '../core/services/quota/stamp.js';
import { scopeUsage } from '../core/services/quota/quota.js';
import { treeLoaded } from '../core/services/quota/usage.js';
import { resolveGroup } from '../core/services/groups/access.js';
import { standaloneDirectory, type GroupDirectory, type GroupInfo } from '../core/services/groups/directory.js';
import { readAttachedFiles, type EventEmitter, type HostBridge } from '../core/services/host-bridge.js';
import { parseArgs } from './args.js';
import { guardRawArgs } from './arg-guard.js';
import { mutatesCall, type CallContext, type FunctionDef, type HandlerResult } from './define.js';
import { renderCall } from '../core/base/text/format.js';

const ANONYMOUS: Identity = { id: 'anonymous', name: 'anonymous', email: '', role: 'user' };

export async function dispatch(def: FunctionDef, rawArgs: unknown, valvesRaw: unknown, host: HostBridge, functions: readonly FunctionDef[]): Promise<string> {
  const started = performance.now();
  const seen: Seen = {};
  const { json, code } = await answer(def, rawArgs, valvesRaw, host, functions, seen);
  if (seen.valves?.audit_log) {
    const args = isObject(rawArgs) ? rawArgs : {};
    // The conversation the host named; none when it sent no chat id (not the 'unknown' folder name).
    const conversation = namedConversation(args.__metadata__, args.__chat_id__) ?? '';
    const entry = auditEntry(def.name, args, seen.user ?? '-', conversation, code, performance.now() - started);
    appendAudit({ storageBase: seen.valves.storage_base_path, maxBytes: seen.valves.audit_max_mb * 1024 * 1024, retentionDays: seen.valves.audit_retention_days }, entry);
  }
  // Usage records for the admin page (core/services/quota/records.ts): the caller's scope after its call.
  if (seen.valves && seen.user && seen.user !== ANONYMOUS.id) await noteActivity(seen.valves, seen.user, seen.group, seen.mutating === true);
  return json;
}

/** What the call got to know before it ended, for the audit log. */
interface Seen {
  valves?: Valves;
  user?: string;
  convId?: string;
  /** The group space the call used (usage records). */
  group?: GroupInfo;
  /** The call may modify files (FunctionDef.mutates). */
  mutating?: boolean;
}

async function answer(def: FunctionDef, rawArgs: unknown, valvesRaw: unknown, host: HostBridge, functions: readonly FunctionDef[], seen: Seen): Promise<{ json: string; code: string }> {
  const scrubList: string[] = [];
  try {
    if (rawArgs !== undefined && (rawArgs === null || typeof rawArgs !== 'object' || Array.isArray(rawArgs))) {
      throw shedError('INVALID_PARAMETER', `${def.name} takes one object of named parameters; got ${Array.isArray(rawArgs) ? 'an array' : typeof rawArgs}.`, {
        hint: `Example: ${def.name}(${JSON.stringify(def.example)})`,
      });
    }
    const raw = (rawArgs ?? {}) as Record<string, unknown>;
    guardRawArgs(def, raw);
    const valves = parseValves(ValvesSchema, valvesRaw, 'valve');
    seen.valves = valves;
    scrubList.push(...diskPrefixes(valves.storage_base_path));
    const rawUser = raw.__user__;
    const userValves = parseValves(UserValvesSchema, isObject(rawUser) ? rawUser.valves : undefined, 'user valve');
    const user = def.needsUser === false && rawUser === undefined ? ANONYMOUS : parseUser(rawUser);
    seen.user = user.id;
    const args = parseArgs(def, raw);
    const emitter = typeof raw.__event_emitter__ === 'function' ? (raw.__event_emitter__ as EventEmitter) : undefined;
    const directory: GroupDirectory = host.groups
      ? host.groups({ storageBase: path.resolve(valves.storage_base_path), userId: user.id })
      : standaloneDirectory(valves.storage_base_path);
    // A group zone is resolved (id or exact name) and membership-checked before the handler runs,
    // so ctx.zone stays synchronous and handlers need nothing group-specific to open it.
    let group: GroupInfo | undefined;
    if (args.zone === 'group' && typeof args.group === 'string' && args.group !== '' && (!def.zones || def.zones.accepted.includes('group'))) {
      group = await resolveGroup(directory, args.group, user, def.name);
      seen.group = group;
    }
    seen.convId = conversationId(raw.__metadata__, raw.__chat_id__);
    const ctx: CallContext = {
      fn: def.name,
      valves,
      userValves,
      user,
      convId: seen.convId,
      host,
      args,
      groups: () => directory,
      functions,
      zone: (name: ZoneName, groupArg: string | undefined) => zoneFor(def, ctx, name, groupArg, group),
      emit: async (description, done = false) => {
        if (!emitter) return;
        try {
          await emitter({ type: 'status', data: { description, done } });
        } catch {
          // A broken emitter must not break the call.
        }
      },
      attachedFiles: () => (host.attachedFiles ? host.attachedFiles(raw.__files__, raw.__metadata__) : readAttachedFiles(raw.__files__, raw.__metadata__)),
      // Declared below; a handler calls it only once the call runs.
      modifying: (work) => modifying(work),
    };
    // The versioning seam: a handler's change in a versioned zone becomes one commit (under the call lock, as part of its turn).
    const committed = async (result: HandlerResult) => {
      const change = result.change;
      delete result.change; // recorded once, even when an escalated run's result passes here again
      if (change?.zone.versioned) {
        const message = typeof args.message === 'string' && args.message.trim() ? args.message : undefined;
        const { commit, warning } = await recordChange(change.zone, change, user, message);
        if (commit !== undefined) result.data = { ...result.data, commit };
        if (warning !== undefined) result.message = `${result.message} Warning: ${warning}`;
      }
      return result;
    };
    // A modifying call runs under the call locks of the spaces it may change, its changes captured under its turn.
    const modifying = async (work: () => Promise<HandlerResult>): Promise<HandlerResult> => {
      seen.mutating = true;
      const named = await namedGroup(user, directory, args, group);
      const homes = [userHome(valves, user.id), ...(named ? [groupHome(valves, named.id)] : [])];
      // A call lock taken over from a dead holder (kill -9 on any host) recovers that space first.
      const scopes = [userScope(valves, user.id), ...(named ? [groupScope(valves, named)] : [])];
      // A scope this process has not measured yet is walked while the call waits for its locks (a
      // takeover waits seconds), not after them: the question asked under the lock is then incremental.
      for (const scope of scopes) if (!Object.values(scope.trees).every(treeLoaded)) void scopeUsage(scope).catch(() => undefined);
      return withCallLock(homes, async () => {
        // First modifying call of this version in a space: its repository moves out of the zone (vcs/migrate.ts).
        const moved: string[] = [];
        for (const home of homes) for (const m of await prepareHome(home)) moved.push(describeMigration(m));
        // Undo by turn (core/services/undo): every change of the call is captured under its turn, which the answer names.
        const turn = turnIdOf(raw.__metadata__);
        const done = await stamped(scopes, () => captureCall({ valves, user, home: homes[0]!, turn, conv: seen.convId ?? 'unknown', fn: def.name }, async () => committed(await work())))();
        return moved.length === 0 ? done : { ...done, message: `${done.message} ${moved.join(' ')}` };
      }, (home) => {
        markInterrupted(home); // the killed call's changes: the undo capture resynchronises first
        return recoverAfterTakeover(home);
      });
    };
    seen.mutating = mutatesCall(def, args);
    const result = seen.mutating ? await modifying(() => def.handler(args, ctx)) : await committed(await def.handler(args, ctx));
    return { json: successJson(result), code: 'OK' };
  } catch (err) {
    const plain = asShedError(err, def.name);
    try {
      const error = withExampleCall(plain, def, rawArgs);
      return { json: errorJson(error, scrubList), code: error.code };
    } catch {
      // Rendering the error failed (an argument too odd to show): answer without echoing it.
      return { json: errorJson(plain, scrubList), code: plain.code };
    }
  }
}

/**
 * The group space a modifying call may change besides the caller's home (both are locked for its
 * whole run, see call-lock.ts): zone="group", or a group parameter as in shed_copy_to_group.
 */
async function namedGroup(user: Identity, directory: GroupDirectory, args: Record<string, unknown>, group: GroupInfo | undefined): Promise<GroupInfo | undefined> {
  if (group !== undefined || args.zone !== undefined || typeof args.group !== 'string' || args.group === '') return group;
  try {
    return await resolveGroup(directory, args.group, user, 'call');
  } catch {
    return undefined; // the handler resolves it again and reports the problem
  }
}

/**
 * Runs the call under its call locks, then records in the change stamp of each scope which folders
 * it changed (other processes read just those again, see stamp.ts). Before the call, each scope's
 * usage is brought up to date, so every tree is watched for the whole call.
 */
function stamped<T>(scopes: readonly QuotaScope[], run: () => Promise<T>): () => Promise<T> {
  return async () => {
    for (const scope of scopes) await scopeUsage(scope).catch(() => undefined);
    const mark = stampMark();
    try {
      return await run();
    } finally {
      for (const scope of scopes) await bumpStamp(scope, mark, () => scopeUsage(scope));
    }
  };
}

/** Codes a model fixes by changing its call: their hints must show a call to copy. */
const CALL_FIXABLE = new Set<ErrorCode>([
  'INVALID_PARAMETER', 'MISSING_PARAMETER', 'INVALID_PATH', 'PATH_ESCAPE', 'PATH_STARTS_WITH_ZONE', 'PROTECTED_PATH',
  'INVALID_ZONE', 'ZONE_READONLY', 'ZONE_FORBIDDEN', 'NOT_A_FILE', 'NOT_A_DIRECTORY', 'INVALID_MODE',
]);

/**
 * Ends the hint of a call-fixable error with a call to copy: the caller's own call with the
 * corrected value when the error knows it (details.suggested), else the function's example.
 */
function withExampleCall(err: ShedError, def: FunctionDef, rawArgs: unknown): ShedError {
  if (!CALL_FIXABLE.has(err.code) || /shed_\w+\(/.test(err.hint ?? '')) return err;
  const param = err.details?.parameter;
  const suggested = err.details?.suggested;
  let call = `Example: ${renderCall(def.name, def.example)}`;
  if (typeof param === 'string' && suggested !== undefined && isObject(rawArgs)) {
    const own = Object.fromEntries(Object.entries(rawArgs).filter(([k]) => !k.startsWith('__')).map(([k, v]) => [k, shorten(v)]));
    call = `Corrected call: ${renderCall(def.name, { ...own, [param]: suggested })}`;
  }
  return new ShedError(err.code, err.message, { details: err.details, hint: err.hint ? `${err.hint} ${call}` : call });
}

function shorten(value: unknown): unknown {
  return typeof value === 'string' && value.length > 60 ? `${value.slice(0, 57)}...` : value;
}

function zoneFor(def: FunctionDef, ctx: CallContext, name: ZoneName, group: string | undefined, resolved: GroupInfo | undefined) {
  const policy = def.zones;
  if (policy && !policy.accepted.includes(name)) {
    if (name === 'uploads' && policy.writes) {
      throw shedError('ZONE_READONLY', `zone="uploads" is read-only: ${def.name} cannot write there (only reading and shed_delete work in Uploads).`, {
        details: { zone: 'uploads', accepted: policy.accepted },
        hint: 'Move the file first: shed_move_uploads_to_storage(src="file.csv", dest="file.csv"), then work in zone="storage".',
      });
    }
    throw shedError('ZONE_FORBIDDEN', `${def.name} does not work in zone '${name}'; it accepts ${policy.accepted.join(', ')}.`, {
      details: { zone: name, accepted: policy.accepted },
      hint: `Example: ${renderCall(def.name, def.example)}`,
    });
  }
  return openZone({ valves: ctx.valves, user: ctx.user, convId: ctx.convId, ...(resolved ? { group: resolved } : {}) }, name, group);
}

const FS_ERRORS: Record<string, string> = {
  ENOSPC: 'The storage is full.',
  EDQUOT: 'The storage quota of the server is exhausted.',
  EACCES: 'The storage refused access.',
  EPERM: 'The storage refused the operation.',
  EROFS: 'The storage is read-only.',
  EMFILE: 'Too many open files on the server; try again.',
  EBUSY: 'The file is busy; try again.',
  ENAMETOOLONG: 'A name in the path is too long.',
  EISDIR: 'A folder was found where a file was expected.',
  ENOTDIR: 'A file was found where a folder was expected.',
  ENOTEMPTY: 'The folder is not empty.',
  EXDEV: 'The operation crosses storage devices.',
  ELOOP: 'Too many symbolic links.',
  // Network filesystems (NFS, GlusterFS, CephFS...):
  ESTALE: 'A file was replaced through another server at the same moment.',
  ENOTCONN: 'The storage (a network filesystem) is disconnected.',
  EIO: 'The storage reported an input/output error.',
  ETIMEDOUT: 'The storage did not answer in time.',
};

/** Anything thrown becomes a ShedError; messages of unexpected errors name their kind, never a stack. */
export function asShedError(err: unknown, fn: string): ShedError {
  if (err instanceof ShedError) return err;
  const code = isStale(err) ? 'ESTALE' : errnoCode(err); // libuv has no name for ESTALE
  if (code !== undefined && code in FS_ERRORS) {
    return shedError('IO_ERROR', `${fn} failed: ${FS_ERRORS[code]} (${code})`, { details: { errno: code }, hint: 'Nothing was changed by the failed step; retry later or ask an admin.' });
  }
  const kind = err instanceof Error ? err.name : typeof err;
  const text = err instanceof Error ? err.message.split('\n')[0] : String(err);
  return shedError('INTERNAL_ERROR', `Unexpected error while running ${fn}: ${kind}: ${text}`, {
    hint: 'The operation was not completed. If it keeps happening, report it to the admin.',
  });
}

function diskPrefixes(base: string): string[] {
  const abs = path.resolve(base);
  const out = [abs];
  try {
    const real = fs.realpathSync.native(abs); // in C: no lstat per component, every call
    if (real !== abs) out.push(real);
  } catch {
    // not created yet
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object';
}
