/**
 * The turn a call belongs to (SPEC 9.1): one assistant answer, i.e. every call carrying the same
 * assistant message id (`__metadata__.message_id`, HTTP `X-OpenWebUI-Message-Id`). A call without
 * one is a turn by itself. The dispatcher runs each modifying call inside `withTurn`; the few places
 * that record changes (the versioned-zone seam, the shadow step after the call) read the current
 * turn from here, so no handler needs to carry it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import crypto from 'node:crypto';
import { repoFor } from '../vcs/repo.js';
import { onCommitted } from '../vcs/seam.js';

/** A commit a call made in one repository: a versioned zone's own, or a shadow repository of Storage/Uploads. */
export interface TurnCommit {
  /** Which tree: 'documents', 'storage', 'uploads' or 'group:<id>'. */
  tree: string;
  /** What users see: Documents, Storage, Uploads, Group:<name>. */
  label: string;
  /** Real path of the tree the repository records. */
  root: string;
  gitdir: string;
  /** Full commit id; its first parent is the state before (none: the repository's first commit). */
  oid: string;
  /** True for Documents and group spaces (an undo there is a new commit). */
  versioned: boolean;
  /** A repository's first commit made on a zone seen empty just before the call: nothing was there before it. */
  fromEmpty?: boolean;
}

export interface TurnCall {
  turn: string;
  conv: string;
  fn: string;
  /** The caller's home (users/{id}): its capture store lives under it. */
  home: string;
  commits: TurnCommit[];
  /** Versioned trees seen empty and without history when the call began. */
  emptyBefore?: ReadonlySet<string>;
  /** Changes seen but not kept, with why (never silently lost). */
  lost: { tree: string; path: string; why: string }[];
}

const current = new AsyncLocalStorage<TurnCall>();

/** The turn id of a call: the host's message id, else a fresh id (the call is its own turn). */
export function turnIdOf(metadata: unknown): string {
  const meta = metadata !== null && typeof metadata === 'object' ? (metadata as Record<string, unknown>) : {};
  const raw = typeof meta.message_id === 'string' ? meta.message_id.trim() : '';
  const clean = raw.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 128);
  return clean !== '' ? clean : `call-${crypto.randomBytes(6).toString('hex')}`;
}

export function withTurn<T>(call: TurnCall, fn: () => Promise<T>): Promise<T> {
  return current.run(call, fn);
}

/** The modifying call being served, if any. */
export function currentTurn(): TurnCall | undefined {
  return current.getStore();
}

/** Records a commit of the current call (called by the versioned-zone seam and the shadow step). */
export function noteCommit(c: TurnCommit): void {
  current.getStore()?.commits.push(c);
}

// Every commit of a versioned zone passes the seam: the call being served records it.
onCommitted((zone, oid) => {
  const tree = zone.group ? `group:${zone.group.id}` : zone.name;
  const fromEmpty = current.getStore()?.emptyBefore?.has(tree) === true;
  noteCommit({ tree, label: zone.label, root: zone.root, gitdir: repoFor(zone).gitdir, oid, versioned: true, ...(fromEmpty ? { fromEmpty } : {}) });
});
