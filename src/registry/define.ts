/**
 * The shape of one registry entry. Each shed_* function is defined once, with everything the
 * Tools method, the LLM tool spec, the help text (and later OpenAPI/MCP) are derived from.
 */
import type { z } from 'zod';
import type { Outcome } from '../core/base/envelope.js';
import type { Change } from '../core/services/vcs/seam.js';
import type { Zone, ZoneName } from '../core/base/zones/zones.js';
import type { CallScope } from '../core/services/call.js';
import type { AttachedFile } from '../core/services/host-bridge.js';
import type { Valves } from '../core/base/valves.js';

export type Category = 'exec' | 'code' | 'write' | 'read' | 'files' | 'edit' | 'bridges' | 'archives' | 'data' | 'links' | 'groups' | 'info';

/** Admin settings that are on or off (a function may exist only while one is on). */
export type SwitchValve = { [K in keyof Valves]: Valves[K] extends boolean ? K : never }[keyof Valves];

/** A handler's context: the core's view of the call, plus what only functions use. */
export interface CallContext extends CallScope {
  /** Sends a progress status to the chat when the host gave an event emitter. */
  emit(description: string, done?: boolean): Promise<void>;
  /** The functions this call's host exposes (shed_help lists them). */
  functions: readonly FunctionDef[];
  /** Files attached to the conversation (host arguments __files__ / __metadata__.files), read by the host bridge. */
  attachedFiles(): AttachedFile[];
  /**
   * Runs `work` as a modifying call (call locks, undo capture, versioning commit): for a handler
   * dispatched as a read (`mutates` said no) that finds it must write after all.
   */
  modifying(work: () => Promise<HandlerResult>): Promise<HandlerResult>;
}

/** MCP tool annotations (readOnlyHint, destructiveHint, idempotentHint, openWorldHint). */
export interface ToolHints {
  readOnly?: boolean;
  /** May delete or overwrite existing content (meaningful only when not read-only). */
  destructive?: boolean;
  /** Calling twice with the same arguments has no further effect. */
  idempotent?: boolean;
  /** Reaches beyond the user's files (network, other systems). */
  openWorld?: boolean;
}

export interface HandlerResult extends Outcome {
  /** A change to record in a versioned zone (one commit per call). */
  change?: Change & { zone: Zone };
}

export type HostArg = '__files__' | '__event_emitter__';

export interface FunctionDef<Shape extends z.ZodRawShape = z.ZodRawShape> {
  name: `shed_${string}`;
  category: Category;
  /** One line for the quick reference. */
  summary: string;
  /** What the LLM reads in the tool spec: when to use it, what it returns, one pitfall. */
  description: string;
  params: Shape;
  /** Zones the `zone` parameter accepts, and whether the function writes there. */
  zones?: { accepted: readonly ZoneName[]; writes: boolean };
  /** A correct call, shown in every parameter error's hint. */
  example: Record<string, unknown>;
  /** Extra advice per parameter, appended to that parameter's errors. */
  paramHints?: Partial<Record<string, string>>;
  /** Parameters dropped when overwrite=true (positioning is meaningless then). */
  overwriteIgnores?: readonly string[];
  /**
   * The admin setting that turns the function on (off by default: code execution). While it is off
   * the function exists nowhere: not in the specs, the OpenAPI document, the MCP tool list or the
   * help, and a call answers FUNCTION_DISABLED naming the setting (profiles.ts decides).
   */
  enabledBy?: SwitchValve;
  /** False for functions that work without a user (help, parameters). Default true. */
  needsUser?: boolean;
  /**
   * True when the function modifies files: calls in one quota scope are serialised. A function of
   * the arguments when only some calls modify (a shed_sqlite SELECT never waits for a writer).
   */
  mutates?: boolean | ((args: Record<string, unknown>) => boolean);
  /**
   * Host arguments the function reads beyond the caller's identity and conversation (__user__,
   * __metadata__, which every function gets): hosts that build per-function signatures (the Open
   * WebUI tool file) declare only these. Keep it true to the handler: `__event_emitter__` when it
   * sends status events, `__files__` when it reads attached files.
   */
  hostArgs?: readonly HostArg[];
  /**
   * What a client may assume about a call (MCP tool annotations). Unset fields derive from the rest
   * of the definition (see toolHints in specs.ts): read-only unless it mutates or writes a zone.
   */
  hints?: ToolHints;
  handler(args: z.output<z.ZodObject<Shape>>, ctx: CallContext): Promise<HandlerResult>;
}

/** Whether this call of `def` modifies files (see FunctionDef.mutates). */
export function mutatesCall(def: FunctionDef, args: Record<string, unknown>): boolean {
  return typeof def.mutates === 'function' ? def.mutates(args) : def.mutates === true;
}

/** Identity function that keeps the handler's argument types tied to the schema. */
export function defineFunction<Shape extends z.ZodRawShape>(def: FunctionDef<Shape>): FunctionDef<Shape> {
  return def;
}

