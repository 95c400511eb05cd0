/**
 * What a command finds around it: a minimal environment, and a home folder and temp folder of its
 * own, empty for each call and outside every zone. No program reads configuration the user controls
 * (~/.sqliterc, ~/.jq, ~/.curlrc, ~/.magic, ~/.config/..., Python's user site with its .pth files),
 * and nothing one call leaves in its temp folder is seen by another call, of this user or any other.
 * Under bubblewrap both live in the sandbox's private /tmp; otherwise in a folder (0700) the
 * command's supervisor makes and, once every process of the command is gone, removes, or keeps for
 * the next call when it finds it exactly as made (two empty folders: most commands leave nothing),
 * checking that again before the next call uses it (launcher-script.ts); whatever is left of them when
 * this process is gone, however it ended, its launcher removes. No file system work for them
 * happens on the event loop. Both are named relative to the working folder, so that no variable holds
 * an absolute server path.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SANDBOX_HOME } from './bwrap.js';
import { magickPolicyDir, SANDBOX_MAGICK_DIR } from './magick.js';
import { SYSTEM_PATH } from './system.js';

export interface CallFolders {
  /** The folder holding both (0700, with home/ and tmp/ in it). */
  root: string;
  home: string;
  tmp: string;
  /** Left by an earlier call: the launcher uses it only if it is still exactly as made. */
  reused: boolean;
}

const PREFIX = 'shed-call-';
/** Call folders left by a process that was killed are removed by the next one after this long. */
const STALE_MS = 24 * 3600 * 1000;
/** Empty call folders kept for the next calls; more are removed. */
const SPARE_MAX = 16;
const spare: CallFolders[] = [];
let started = false;

/** The call's folders: a kept one, or a new name in the system temp folder (the launcher makes it). */
export function callFolders(): CallFolders {
  if (!started) {
    started = true;
    // What is kept at exit is removed then (a few empty folders); a killed process's, by its launcher.
    process.once('exit', () => spare.splice(0).forEach((f) => removeTree(f.root)));
    void removeStale();
  }
  const kept = spare.pop();
  if (kept) return kept;
  // This process's id in the name: the launcher removes what is left of them when this process is gone.
  const root = path.join(os.tmpdir(), `${PREFIX}${process.pid}-${crypto.randomBytes(9).toString('base64url')}`);
  return { root, home: path.join(root, 'home'), tmp: path.join(root, 'tmp'), reused: false };
}

/** After the call: `kept` when the launcher left the folders in place, empty, for another call. */
export function releaseCallFolders(f: CallFolders, kept: boolean): void {
  if (!kept) return;
  if (spare.length < SPARE_MAX) spare.push({ ...f, reused: true });
  else void fs.promises.rm(f.root, { recursive: true, force: true }).catch(() => undefined);
}

/** Removes a folder a command wrote in, even one it left without write permission (mkdir -m 0); never throws. */
function removeTree(root: string): void {
  const open = (dir: string) => {
    try {
      fs.chmodSync(dir, 0o700);
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) open(path.join(dir, e.name));
    } catch {
      // gone, or not ours
    }
  };
  for (const attempt of [0, 1]) {
    try {
      fs.rmSync(root, { recursive: true, force: true });
      return;
    } catch {
      if (attempt === 0) open(root);
    }
  }
}

/** Call folders of processes that ended without removing them (killed), once per process. */
async function removeStale(): Promise<void> {
  const dir = os.tmpdir();
  const names = await fs.promises.readdir(dir).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.startsWith(PREFIX))) {
    const full = path.join(dir, name);
    const st = await fs.promises.lstat(full).catch(() => undefined);
    if (st?.isDirectory() && Date.now() - st.mtimeMs > STALE_MS) removeTree(full);
  }
}

/**
 * git run as a program (outside Documents, where the in-process git serves) reads no system or
 * global configuration, and the repository's own keys that would start a program are overridden by
 * environment configuration, which outranks every file (a user may write `.git/config` of their
 * own repository). What no key can override (aliases with `!`, `diff.external`, filter, diff and
 * merge drivers named in `.gitattributes`) needs /bin/sh or another program, which the kernel
 * refuses in both kernel modes: only git's own programs are executable for git.
 */
const GIT_OVERRIDES: readonly [string, string][] = [
  ['core.fsmonitor', 'false'],
  ['core.hooksPath', '/dev/null'],
  ['core.pager', 'cat'],
  ['core.editor', ':'],
  ['sequence.editor', ':'],
  ['core.sshCommand', 'false'],
  ['core.gitProxy', ''],
  ['core.askPass', ''],
  ['core.alternateRefsCommand', ''],
  ['core.attributesFile', '/dev/null'],
  ['credential.helper', ''],
  ['gpg.program', 'false'],
  ['commit.gpgSign', 'false'],
  ['tag.gpgSign', 'false'],
  ['protocol.ext.allow', 'never'],
  ['gc.auto', '0'],
  ['maintenance.auto', 'false'],
];

export const GIT_ENVIRONMENT: Readonly<Record<string, string>> = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_ATTR_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_COUNT: String(GIT_OVERRIDES.length),
  ...Object.fromEntries(GIT_OVERRIDES.flatMap(([key, value], i) => [[`GIT_CONFIG_KEY_${i}`, key], [`GIT_CONFIG_VALUE_${i}`, value]])),
};

/**
 * The environment of a command: `folders` are the call's own (absent under bubblewrap, where they are
 * /tmp/home and /tmp); `cwd` is the command's working folder, from which they are named (by their
 * absolute paths when `absolute`: a script may change folder); `program` the program it runs (git
 * gets its configuration neutralised).
 */
export function commandEnvironment(cwd: string, folders: CallFolders | undefined, program: string, absolute = false): Record<string, string> {
  const name = (folder: string) => (absolute ? folder : path.relative(cwd, folder));
  const home = folders ? name(folders.home) : SANDBOX_HOME;
  const tmp = folders ? name(folders.tmp) : '/tmp';
  return {
    PATH: SYSTEM_PATH,
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TERM: 'dumb',
    PAGER: 'cat',
    GIT_PAGER: 'cat',
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local/share'),
    XDG_STATE_HOME: path.join(home, '.local/state'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    TMPDIR: tmp,
    // Python (yq): no user site folder (its .pth files run code), no cache written, no script folder on the path.
    PYTHONNOUSERSITE: '1',
    PYTHONDONTWRITEBYTECODE: '1',
    PYTHONSAFEPATH: '1',
    // less: no input preprocessor (a shell command) or key bindings from a file, no history.
    LESSSECURE: '1',
    LESSKEYIN: '/dev/null',
    LESSKEY: '/dev/null',
    LESSHISTFILE: '-',
    // libldap (linked into curl) reads `ldaprc` from the working folder at start: no LDAP configuration file at all.
    LDAPNOINIT: '1',
    // tar run as uid 0 with no capability (a server run as root; bubblewrap's namespace) would try to
    // give extracted files the archive's owners and modes: it behaves as for an ordinary user instead.
    TAR_OPTIONS: '--no-same-owner --no-same-permissions',
    // ImageMagick (convert, identify, magick; also when a script runs it): our restrictive policy first (magick.ts).
    MAGICK_CONFIGURE_PATH: folders ? name(magickPolicyDir()) : SANDBOX_MAGICK_DIR,
    ...(path.basename(program) === 'git' ? GIT_ENVIRONMENT : {}),
  };
}
