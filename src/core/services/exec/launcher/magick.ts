/**
 * ImageMagick's security policy of our own, for every program a command or a document converter
 * runs (convert in shed_exec, shed_read's image scaling, a script that calls ImageMagick): only the
 * coders shed_read needs (PNG, JPEG, GIF, WebP) may be read or written, no other module is loaded,
 * no delegate program is started, no `@file` indirection is followed, and its resources are capped
 * (memory, map, disk, area, width, height, time, one thread). What this closes: SVG, MVG and MSL
 * (which draw from or write to other files), `text:`/`@file` (which read any file as text),
 * `ephemeral:` (which deletes its input), PostScript/PDF through Ghostscript, URL fetches.
 *
 * ImageMagick reads policy.xml from MAGICK_CONFIGURE_PATH before the system's: the file is written
 * once per process into a fresh folder of the system temp folder (0755, the file 0644: the command's
 * own uid reads it, nobody else writes it; named as a call folder, so the launcher cleans it up), named by MAGICK_CONFIGURE_PATH in every command's
 * environment (callenv.ts), readable under Landlock (landlock.ts) and bound read-only at
 * SANDBOX_MAGICK_DIR under bubblewrap (bwrap.ts), whose /tmp is the sandbox's own. The system's
 * policy still applies after ours (Debian's only refuses more).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeBytes } from '../../../base/fs/read.js';

/** Where the policy folder appears inside a bubblewrap sandbox (outside /tmp, which is private there). */
export const SANDBOX_MAGICK_DIR = '/etc/fileshed-imagemagick';

export const MAGICK_POLICY = `<?xml version="1.0" encoding="UTF-8"?>
<!-- Fileshed's ImageMagick policy (src/core/services/exec/launcher/magick.ts): untrusted pictures, four coders. -->
<policymap>
  <policy domain="resource" name="memory" value="256MiB"/>
  <policy domain="resource" name="map" value="512MiB"/>
  <policy domain="resource" name="disk" value="1GiB"/>
  <policy domain="resource" name="area" value="128MP"/>
  <policy domain="resource" name="width" value="32KP"/>
  <policy domain="resource" name="height" value="32KP"/>
  <policy domain="resource" name="time" value="300"/>
  <policy domain="resource" name="thread" value="1"/>
  <policy domain="delegate" rights="none" pattern="*"/>
  <policy domain="filter" rights="none" pattern="*"/>
  <policy domain="path" rights="none" pattern="@*"/>
  <policy domain="module" rights="none" pattern="*"/>
  <policy domain="module" rights="read|write" pattern="{PNG,JPEG,GIF,WEBP}"/>
  <policy domain="coder" rights="none" pattern="*"/>
  <policy domain="coder" rights="read|write" pattern="{PNG,PNG8,PNG24,PNG32,PNG48,PNG64,PNG00,JPEG,JPG,JPE,PJPEG,GIF,GIF87,WEBP}"/>
</policymap>
`;

/**
 * Named like this process's call folders (callenv.ts), so that the launcher, which removes those
 * once this process is gone however it ended (a kill included), removes this folder too.
 */
const prefix = () => `shed-call-${process.pid}-magick-`;
/** Other processes remove call folders untouched for a day (callenv.ts): touched well before that. */
const TOUCH_MS = 3600_000;
let dir: string | undefined;
let touched = 0;

/** The host folder holding policy.xml, made on first use (once per process) and removed at exit. */
export function magickPolicyDir(): string {
  if (dir !== undefined && fs.existsSync(path.join(dir, 'policy.xml'))) {
    if (Date.now() - touched > TOUCH_MS) {
      touched = Date.now();
      fs.utimesSync(dir, new Date(), new Date());
    }
    return dir;
  }
  const made = fs.mkdtempSync(path.join(os.tmpdir(), prefix()));
  fs.chmodSync(made, 0o755);
  const file = path.join(made, 'policy.xml');
  writeBytes(file, MAGICK_POLICY, { mode: 0o644, exclusive: true });
  fs.chmodSync(file, 0o644); // whatever the umask
  if (dir === undefined) process.once('exit', () => fs.rmSync(dir!, { recursive: true, force: true }));
  dir = made;
  touched = Date.now();
  return made;
}
