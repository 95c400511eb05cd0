/**
 * The one way sizes are written for people (messages, tree lines, folder pages, the admin page):
 * binary units with one decimal, "512 B", "8.0 KiB", "1.5 MiB", "2.0 GiB".
 */
const UNITS = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

export function formatSize(bytes: number): string {
  if (!Number.isFinite(bytes) || Math.abs(bytes) < 1024) return `${Math.round(bytes)} B`;
  let value = bytes / 1024;
  let i = 0;
  while (Math.abs(value) >= 1024 && i < UNITS.length - 1) {
    value /= 1024;
    i++;
  }
  // 1023.96 KiB would round to "1024.0 KiB": that is the next unit's 1.0.
  if (Math.abs(value) >= 1023.95 && i < UNITS.length - 1) {
    value /= 1024;
    i++;
  }
  return `${value.toFixed(1)} ${UNITS[i]}`;
}
