/**
 * One watch per command in a writable zone (or a locked edit's scratch folder), answering "which
 * folders changed during this command" (the quota module's folder watches, see quota/usage.ts). It
 * serves two needs:
 *
 * - Quota per call, not per file: while the command runs, the zone's quota scope is measured every
 *   QUOTA_POLL_MS and after change events (only folders that changed are read again); once usage
 *   passes the quota (or what was used at the start, if the scope was already over) the whole
 *   process group is killed. Each file is also capped by `ulimit -f` at what was left of the quota.
 *   A measurement takes a few turns of the event loop, long enough for a fast writer (an archive of
 *   many files, each under the cap) to write several more: so every event also updates a bound on
 *   the usage (GrowthBound, one lstat), and once that bound passes the quota the command is held
 *   (SIGSTOP) until an exact measurement decides. The overshoot is then what the command writes
 *   between its last write under the quota and our reading of that event, not one measurement later;
 *   and once one more file could pass the quota the command yields the CPU to this watch (nice 19).
 * - O(change) commits in versioned zones: the paths that changed are read off the changed folders
 *   only. When the watch cannot vouch for them (inotify unavailable, far too many events) the
 *   caller compares full stat snapshots (`exact` false at the start) or commits the whole zone.
 */
import { TimeSlice } from '../../../base/fs/slice.js';
import { lstatIfAny } from '../../../base/fs/stat.js';
import { scopeUsage } from '../../quota/quota.js';
import { chargedBytes, forgetTree, foundEntriesTooLong, invalidateTree, treeUsage, watchChanges, type Prior, type Usage } from '../../quota/usage.js';
import type { Zone } from '../../../base/zones/zones.js';
import type { RunRequest } from '../launcher/run-types.js';

/** Where one command may write and how much: the folder it writes in, and the usage its quota counts. */
export interface WriteScope {
  /** The folder tree watched (where the command can write). */
  root: string;
  limitBytes: number;
  used(): Promise<number>;
  /** Bytes and files in one measurement (the per-call watch bounds both). */
  usage(): Promise<Usage>;
  /** A folder removed after the command (a locked edit's scratch folder): its watches are dropped. */
  temporary?: boolean;
}

/** A writable zone: its quota scope (the user's zones, or the group space), measured whole. */
export function zoneWriteScope(zone: Zone): WriteScope | undefined {
  if (zone.readonly) return undefined;
  const usage = async (): Promise<Usage> => {
    const total = { bytes: 0, files: 0 };
    for (const u of Object.values(await scopeUsage(zone.scope))) {
      total.bytes += u.bytes;
      total.files += u.files;
    }
    return total;
  };
  return { root: zone.scope.trees[zone.label] ?? zone.root, limitBytes: zone.scope.limitBytes, used: async () => (await usage()).bytes, usage };
}

/** A folder made for one command, which may hold at most `limitBytes` when it ends. */
export function folderWriteScope(root: string, limitBytes: number): WriteScope {
  return { root, limitBytes, used: async () => (await treeUsage(root)).bytes, usage: () => treeUsage(root), temporary: true };
}

/** Bytes of quota per file a command may leave (an inode each, whatever its size): 409,600 files in 100 MB. */
export const BYTES_PER_FILE = 256;

/** How many files (and links) a scope of `limitBytes` may hold once a command has run. */
export function filesAllowed(limitBytes: number): number {
  return Math.floor(limitBytes / BYTES_PER_FILE);
}

/** How often usage is measured while a command runs. */
export const QUOTA_POLL_MS = 20;

export interface CallWatchEnd {
  /** Zone-relative paths the command changed; undefined when unknown (see `exact`). */
  changed: string[] | undefined;
  usedBytes: number;
  /** Bytes above the quota after the command (0 when within it). */
  overBytes: number;
  /** Files above what the quota allows (filesAllowed) after the command (0 when within it). */
  overFiles: number;
  /** What a tree-relative path was when the command started (undefined: nothing was there). */
  prior(rel: string): Prior | undefined;
}

export interface CallWatch {
  /** True when `changed` will be known at the end (no full snapshot needed). */
  exact: boolean;
  monitor: NonNullable<RunRequest['monitor']>;
  finish(): Promise<CallWatchEnd>;
}

/**
 * An upper bound of the scope's usage between exact measurements: the last measurement taken while
 * the command was held (or before it started), plus what each file an event named has grown since
 * then. A file not seen at that measurement counts whole, and shrinking is ignored: the bound only
 * errs high, which costs one more hold, never a missed overshoot.
 */
class GrowthBound {
  private readonly sizeThen = new Map<string, number>();
  private readonly growth = new Map<string, number>();
  private grown = 0;

  constructor(private measured: number) {}

  get value(): number {
    return this.measured + this.grown;
  }

  /** Counts a file, link or folder an event named, now counting `size` bytes (chargedBytes: reserved blocks too). */
  note(entry: string, size: number): void {
    const grew = Math.max(0, size - (this.sizeThen.get(entry) ?? 0));
    this.grown += grew - (this.growth.get(entry) ?? 0);
    this.growth.set(entry, grew);
  }

  /**
   * A new starting point: `total` was measured while the command was held (nothing was writing).
   * Each entry noted so far is measured again, in slices: thousands of folders nested thousands
   * deep cost a path walk each (tens of µs at depth 1,000), far past a slice in one go.
   */
  async restart(total: number): Promise<void> {
    const entries = [...this.growth.keys()];
    const sizes: number[] = [];
    const slice = new TimeSlice();
    for (const entry of entries) {
      await slice.tick();
      const st = lstatIfAny(entry);
      sizes.push(st === undefined ? 0 : chargedBytes(st, st.isDirectory()));
    }
    entries.forEach((entry, i) => this.sizeThen.set(entry, sizes[i]!));
    this.measured = total;
    this.growth.clear();
    this.grown = 0;
  }
}

/**
 * Change events arrive in batches: the runtime hands over every event the kernel queued, callback
 * after callback, before the event loop turns again, and a fast command queues thousands while the
 * loop waits for the CPU. So the callback only notes the entry; `look` (a path walk each) runs on
 * the noted entries in slices, then `after` once. `look` returning true ends the looking early (the
 * command is held, and the exact measurement that follows sees everything), and `after` is not run.
 */
function eventsDrainedInSlices(look: (entry: string) => boolean, after: () => void): (entry: string | undefined) => void {
  // An array, not a set: hashing a path thousands of characters long is left to the sliced drain.
  let noted: string[] = [];
  let draining = false;
  const drain = async () => {
    const slice = new TimeSlice();
    const looked = new Set<string>();
    let held = false;
    while (noted.length > 0 && !held) {
      const batch = noted;
      noted = [];
      for (const entry of batch) {
        await slice.tick();
        if (looked.has(entry)) continue;
        looked.add(entry);
        if ((held = look(entry))) break;
      }
    }
    noted = [];
    draining = false;
    if (!held) after();
  };
  return (entry) => {
    if (entry !== undefined) noted.push(entry);
    if (draining) return;
    draining = true;
    setImmediate(() => void drain().catch(() => (draining = false)));
  };
}

/** `fileCap`: the largest file the command may write (its RLIMIT_FSIZE). */
export async function watchCall(scope: WriteScope, fileCap: number): Promise<CallWatch> {
  const treeRoot = scope.root;
  // Every entry's signature is kept: what changed (versioned zones commit it) and what was there
  // before (a command that passes the quota is undone, over-quota.ts).
  const watch = await watchChanges(treeRoot, { entries: true });
  const atStart = await scope.usage();
  const usedAtStart = atStart.bytes;
  const ceiling = Math.max(scope.limitBytes, usedAtStart);
  // Inodes: files count by their size, and an empty file has none; their number is bounded instead.
  const fileCeiling = Math.max(filesAllowed(scope.limitBytes), atStart.files);
  const bound = new GrowthBound(usedAtStart);
  // Near the quota: one more file (at most fileCap) could pass it.
  const near = () => bound.value + fileCap >= ceiling;
  const risky = (entry: string): boolean => {
    // The entry may be gone by now, or its folder now a file (ENOTDIR).
    const st = lstatIfAny(entry);
    if (st === undefined) return false;
    // Folders count toward the quota too (usage.ts), so a burst of mkdir raises the bound like files do.
    bound.note(entry, chargedBytes(st, st.isDirectory()));
    // A new folder is watched from the next measurement on: near the quota, one file written in it meanwhile could pass unseen.
    return bound.value > ceiling || (st.isDirectory() && near());
  };
  return {
    exact: watch.exact,
    monitor: {
      everyMs: QUOTA_POLL_MS,
      check: async (held) => {
        const now = await scope.usage();
        if (held) await bound.restart(now.bytes);
        // Entries past the path limit hold what the quota cannot count: stopped at once (too-long.ts removes them).
        if (foundEntriesTooLong(treeRoot)) return 'path_too_long';
        return now.bytes > ceiling || now.files > fileCeiling ? 'quota' : undefined;
      },
      // Every batch of change events asks again at once; an event that may have passed the quota
      // holds the command first. Near the quota the command yields the CPU to this watch.
      wake: (run) => {
        if (near()) run.yieldCpu();
        const holdIfRisky = (entry: string): boolean => {
          if (!risky(entry)) return false;
          run.hold();
          return true;
        };
        watch.onChange(
          eventsDrainedInSlices(holdIfRisky, () => {
            run.now();
            if (near()) run.yieldCpu();
          }),
        );
      },
    },
    async finish() {
      const { paths, reliable, prior } = await watch.finish();
      // Events may have been lost: the usage cache is rebuilt by the next question.
      if (!reliable) invalidateTree(treeRoot);
      const used = await scope.usage();
      if (scope.temporary) forgetTree(treeRoot);
      return {
        changed: paths,
        usedBytes: used.bytes,
        overBytes: used.bytes > ceiling ? used.bytes - scope.limitBytes : 0,
        overFiles: used.files > fileCeiling ? used.files - fileCeiling : 0,
        prior,
      };
    },
  };
}
