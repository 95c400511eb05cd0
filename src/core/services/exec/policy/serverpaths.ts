/**
 * Without the sandbox a command's working folder is the zone's real place on the server, and a few
 * commands exist only to print where that is (pwd, realpath, readlink -f, the mount point of df and
 * stat %m, sqlite3's database list is caught by its scanner). Their output can be written to a file
 * and read back encoded, past the output scrubber, so in validated mode they are refused with a way
 * to get the same answer relative to the zone. Under bubblewrap they print /zone paths and run.
 */

/** The reason this call would print an absolute server path in validated mode, or undefined. */
export function serverPathReason(cmd: string, args: readonly string[]): string | undefined {
  switch (cmd) {
    case 'pwd':
      return 'pwd prints the absolute server folder of the zone; the working folder is always the zone root, "."';
    case 'realpath':
      // Only --relative-to makes every answer relative (--relative-base still prints absolute paths for anything not below it).
      return args.some((a) => /^--relative-t/.test(a)) ? undefined : 'realpath prints absolute server paths unless --relative-to is given';
    case 'readlink':
      return args.some((a) => /^--can/.test(a) || /^-[A-Za-z]*[fem]/.test(a)) ? 'readlink -f/-e/-m prints absolute server paths' : undefined;
    case 'df':
      return 'df prints the server\'s mount points';
    case 'stat':
      return args.some((a) => /%m/.test(a)) ? 'stat %m prints the server mount point' : undefined;
    default:
      return undefined;
  }
}

/** What to do instead, for the error's hint. */
export function serverPathHint(cmd: string): string {
  switch (cmd) {
    case 'realpath':
      return 'Give a base folder: shed_exec(zone="storage", cmd="realpath", args=["--relative-to=.", "some/link"]).';
    case 'readlink':
      return 'Plain readlink shows where a link points: args=["some/link"]; or realpath with --relative-to=. resolves it relative to the zone.';
    case 'df':
      return 'shed_stats() shows the space used and the quota left.';
    default:
      return 'Paths are relative to the zone root ("."); shed_tree() shows where things are.';
  }
}
