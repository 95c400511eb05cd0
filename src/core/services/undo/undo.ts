/**
 * The undo of one turn, as the functions serve it: pick the turn, plan it, answer the preview, or
 * apply what is not in conflict (plus what the caller forces, path by path). Group ownership rules
 * and membership apply to the undo as to any write; the group spaces it writes are locked too.
 */
import path from 'node:path';
import { shedError } from '../../base/errors.js';
import type { CallScope } from '../call.js';
import { resolveGroup } from '../groups/access.js';
import { forgetEntry, guardDiskPath, recordWritten } from '../groups/enforce.js';
import { withCallLock } from '../../base/locks/call-lock.js';
import { recoverAfterTakeover } from '../recovery/recover.js';
import { groupHome, groupScope, userHome, userScope, type Zone } from '../../base/zones/zones.js';
import { ensureQuota } from '../quota/quota.js';
import { readUndoBlob } from './deltas.js';
import { applyUndo, finishPendingUndo, type JournalItem } from './apply.js';
import { actionOf, planTurn, shownPath, type Plan, type PlanItem } from './plan.js';
import { agedOut, listTurns, readTurn, type TurnRecord } from './store.js';

export interface UndoRequest {
  turn: string | undefined;
  apply: boolean;
  force: readonly string[];
}

const SHOWN_MAX = 100;

export function itemPath(i: Pick<PlanItem, 'label' | 'shown'>): string {
  return `${i.label}/${i.shown}`;
}

/** The user's turns still within the retention by age (the next modifying call drops the others), newest first. */
function keptTurns(ctx: CallScope, home: string): TurnRecord[] {
  return listTurns(home).filter((rec) => !agedOut(rec, ctx.valves.undo_max_age_days));
}

/** The turn asked for, or the conversation's last turn that changed something. */
async function pickTurn(ctx: CallScope, home: string, wanted: string | undefined): Promise<{ rec: TurnRecord; plan: Plan }> {
  if (wanted !== undefined) {
    const rec = readTurn(home, wanted);
    if (rec === undefined || agedOut(rec, ctx.valves.undo_max_age_days)) {
      throw shedError('FILE_NOT_FOUND', `No turn '${wanted}' is kept for you (it never changed anything, or it is older than the retention).`, {
        details: { parameter: 'turn', value: wanted },
        hint: 'List the turns that can be undone: shed_undo() (no apply), then shed_undo(turn="<id from the list>", apply=true).',
      });
    }
    return { rec, plan: await planTurn(rec, true) };
  }
  for (const rec of keptTurns(ctx, home)) {
    if (rec.conv !== ctx.convId) continue;
    const plan = await planTurn(rec, true);
    if (plan.items.length > 0) return { rec, plan };
  }
  throw shedError('FILE_NOT_FOUND', 'Nothing to undo: no turn of this conversation changed a file (that is still kept).', {
    hint: 'shed_undo() lists your turns in other conversations when this one has none; undo one with shed_undo(turn="<id>", apply=true).',
  });
}

export async function undoTurn(ctx: CallScope, req: UndoRequest): Promise<{ data: Record<string, unknown>; message: string }> {
  const home = userHome(ctx.valves, ctx.user.id);
  // A killed undo is finished before anything is read (a preview must not show a half state).
  if (req.apply) await finishPendingUndo(home, ctx.user);
  const { rec, plan } = await pickTurn(ctx, home, req.turn);
  const forced = new Set(req.force.map((f) => f.replace(/^\/+/, '')));
  const unknownForce = [...forced].filter((f) => !plan.items.some((i) => itemPath(i) === f));
  if (unknownForce.length > 0) {
    throw shedError('INVALID_PARAMETER', `force names ${unknownForce.map((f) => `'${f}'`).join(', ')}, which turn ${rec.turn} did not change.`, {
      details: { parameter: 'force', value: unknownForce, turn: rec.turn },
      hint: `force takes paths exactly as the preview lists them, e.g. shed_undo(turn="${rec.turn}", apply=true, force=["${plan.items[0] ? itemPath(plan.items[0]) : 'Storage/a.txt'}"]).`,
    });
  }
  const groupDenied = new Map<string, string>();
  const groupZones = new Map<string, Zone>();
  const groupInfo = new Map<string, { id: string; name: string }>();
  const groupIds = new Set(plan.items.filter((i) => i.tree.startsWith('group:')).map((i) => i.tree.slice(6)));
  for (const id of groupIds) {
    let group;
    try {
      group = await resolveGroup(ctx.groups(), id, ctx.user, 'shed_undo');
    } catch (err) {
      for (const i of plan.items) if (i.tree === `group:${id}`) groupDenied.set(itemPath(i), err instanceof Error ? err.message : 'not a member');
      continue;
    }
    for (const i of plan.items) {
      if (i.tree !== `group:${id}`) continue;
      // Only what the guard reads: the group, its root and label (guardDiskPath, deniedError).
      const zone = { root: i.root, label: i.label, group: { id: group.id, name: group.name, base: path.resolve(ctx.valves.storage_base_path) } } as unknown as Zone;
      groupZones.set(i.tree, zone);
      groupInfo.set(i.tree, { id: group.id, name: group.name });
      try {
        await guardDiskPath(ctx.user.id, zone, i.rel, 'undo changes to');
      } catch (err) {
        groupDenied.set(itemPath(i), err instanceof Error ? err.message : 'refused');
      }
    }
  }
  const todo = plan.items.filter((i) => !groupDenied.has(itemPath(i)) && (!i.conflict || forced.has(itemPath(i))));
  const conflicts = plan.items.filter((i) => i.conflict && !forced.has(itemPath(i)) && !groupDenied.has(itemPath(i)));
  const show = (i: PlanItem) => ({ path: itemPath(i), turn_did: actionOf(i), undo_will: i.before === undefined ? 'remove' : i.now === undefined ? 'recreate' : 'restore' });
  const data: Record<string, unknown> = {
    undoes: rec.turn,
    turn_started: new Date(rec.started).toISOString(),
    applied: false,
    changes: todo.slice(0, SHOWN_MAX).map(show),
    conflicts: conflicts.slice(0, SHOWN_MAX).map((i) => ({ path: itemPath(i), why: 'changed after the turn (a later turn, another conversation or another member); left alone unless forced' })),
    refused: [...groupDenied].slice(0, SHOWN_MAX).map(([p, why]) => ({ path: p, why })),
    not_undoable: plan.lost.slice(0, SHOWN_MAX),
  };
  if (todo.length > SHOWN_MAX) data.changes_not_shown = todo.length - SHOWN_MAX;
  const tail = [
    conflicts.length > 0 ? `${conflicts.length} path(s) changed since and are left alone (force=[...] per path to take them back anyway)` : '',
    groupDenied.size > 0 ? `${groupDenied.size} path(s) refused by group rules` : '',
    plan.lost.length > 0 ? `${plan.lost.length} change(s) not undoable (see not_undoable)` : '',
  ].filter(Boolean).join('; ');
  if (!req.apply) {
    return { data, message: `Preview of undoing turn ${rec.turn}: ${todo.length} path(s) would change${tail ? `; ${tail}` : ''}. Nothing changed yet: call shed_undo(turn="${rec.turn}", apply=true) to do it.` };
  }
  // Quota, as for any write: what the undo adds (files put back, grown back) per space, before anything changes.
  const growth = new Map<string, number>();
  for (const i of todo) {
    const now = i.nowBytes; // read by the plan, by descriptor (no link a command made is followed)
    const back = i.before === undefined ? 0 : (await readUndoBlob(i.gitdir, i.before.oid)).length;
    const key = i.tree.startsWith('group:') ? i.tree : 'user';
    growth.set(key, (growth.get(key) ?? 0) + back - now);
  }
  for (const [key, bytes] of growth) {
    const info = groupInfo.get(key);
    await ensureQuota(info !== undefined ? groupScope(ctx.valves, info) : userScope(ctx.valves, ctx.user.id), bytes);
  }
  const items: JournalItem[] = todo.map((i) => ({ tree: i.tree, label: i.label, root: i.root, gitdir: i.gitdir, versioned: i.versioned, rel: i.rel, target: i.before }));
  const homes = [...groupIds].filter((id) => todo.some((i) => i.tree === `group:${id}`)).map((id) => groupHome(ctx.valves, id));
  const run = () => applyUndo(home, { v: 1, turn: rec.turn, items }, ctx.user);
  const { commits, moved } = homes.length > 0 ? await withCallLock(homes, run, recoverAfterTakeover) : await run();
  // Group bookkeeping, as after any write: a removed file's record goes, a file put back without one becomes the caller's.
  for (const i of todo) {
    const zone = groupZones.get(i.tree);
    if (zone === undefined) continue;
    if (i.before === undefined) await forgetEntry(zone, i.rel);
    else await recordWritten(ctx, zone, [i.rel]);
  }
  data.applied = true;
  if (commits.length > 0) data.commits = commits;
  // What a later command left where a folder of the turn belongs: kept, renamed beside it.
  if (moved.length > 0) data.moved_aside = moved.slice(0, SHOWN_MAX).map((m) => ({ from: shownAt(todo, m.root, m.from), to: shownAt(todo, m.root, m.to) }));
  return { data, message: `Undid turn ${rec.turn}: ${todo.length} path(s) put back${commits.length > 0 ? ` (history commit ${commits.join(', ')})` : ''}${tail ? `; ${tail}` : ''}. This undo is a turn itself: undoing it redoes.` };
}

/** A zone-relative path of one of the undo's zones, as the preview shows paths. */
function shownAt(items: readonly PlanItem[], root: string, rel: string): string {
  const item = items.find((i) => i.root === root);
  return item === undefined ? rel : itemPath({ label: item.label, shown: shownPath(item.tree, rel) });
}

/** The turns of the conversation (or all the user's), newest first, with what each changed. */
export async function describeTurns(ctx: CallScope, all: boolean, limit: number): Promise<{ data: Record<string, unknown>; message: string }> {
  const home = userHome(ctx.valves, ctx.user.id);
  const turns: Record<string, unknown>[] = [];
  for (const rec of keptTurns(ctx, home)) {
    if (!all && rec.conv !== ctx.convId) continue;
    const plan = await planTurn(rec, false);
    if (plan.items.length === 0 && plan.lost.length === 0) continue;
    const counts = { created: 0, changed: 0, deleted: 0 };
    for (const i of plan.items) counts[actionOf(i)]++;
    turns.push({
      turn: rec.turn,
      when: new Date(rec.updated).toISOString(),
      ...(all ? { conversation: rec.conv } : {}),
      functions: [...new Set(rec.calls.map((c) => c.fn))],
      zones: [...new Set(plan.items.map((i) => i.label))],
      ...counts,
      renamed: renames(plan.items),
      paths: plan.items.slice(0, 20).map((i) => `${actionOf(i)} ${itemPath(i)}`),
      ...(plan.items.length > 20 ? { paths_not_shown: plan.items.length - 20 } : {}),
      not_undoable: plan.lost,
    });
    if (turns.length >= limit) break;
  }
  const msg = turns.length === 0
    ? `No turn ${all ? 'of yours' : 'of this conversation'} changed files (that is still kept).`
    : `${turns.length} turn(s), newest first. Undo one with shed_undo(turn="${String(turns[0]!.turn)}") (preview first, then apply=true).`;
  return { data: { turns }, message: msg };
}

/** A deleted and a created path with the same content in one turn: shown as a rename. */
function renames(items: PlanItem[]): string[] {
  const gone = new Map<string, PlanItem>();
  for (const i of items) if (i.after === undefined && i.before !== undefined) gone.set(`${i.tree}\0${i.before.oid}`, i);
  const out: string[] = [];
  for (const i of items) {
    if (i.before !== undefined || i.after === undefined) continue;
    const from = gone.get(`${i.tree}\0${i.after.oid}`);
    if (from !== undefined) out.push(`${itemPath(from)} -> ${itemPath(i)}`);
  }
  return out;
}
