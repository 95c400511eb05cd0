/**
 * The layers point down: hosts → the plugin's entry (index.ts, host-api.ts, tools.ts) → functions →
 * registry → core. Every relative import of every source file is resolved and judged by the layer of
 * the file it names; an import that climbs fails here with the file and the line. The core has three
 * doors: services stand on the base, and both may read the pure formats, which import nothing of
 * either and touch no disk, process or network. Inside any folder of the core, two of its parts (a
 * subfolder, or a file directly in it) never import each other: one sits below.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve('src');
const ENTRY = new Set(['index.ts', 'host-api.ts', 'tools.ts']);

/** Higher numbers sit higher: a file may import only its own layer or lower ones. */
function layerOf(rel: string): number {
  if (rel.startsWith('hosts/')) return 4;
  if (ENTRY.has(rel)) return 3;
  if (rel.startsWith('functions/')) return 2;
  if (rel.startsWith('registry/')) return 1;
  if (rel.startsWith('core/')) return 0;
  throw new Error(`src/${rel} belongs to no layer`);
}

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sources(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

/** Relative specifiers of static imports, exports-from and dynamic imports, with their line numbers. */
function imports(file: string): { spec: string; line: number }[] {
  const out: { spec: string; line: number }[] = [];
  fs.readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      for (const m of text.matchAll(/(?:^\s*(?:import|export)\b[^'"]*?from\s*|import\(\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) out.push({ spec: m[1]!, line: i + 1 });
      const bare = /^\s*import\s+['"](\.{1,2}\/[^'"]+)['"]/.exec(text);
      if (bare) out.push({ spec: bare[1]!, line: i + 1 });
    });
  return out;
}

/** Every relative import of every source file: importer and imported, relative to src/. */
function importPairs(): { from: string; target: string; line: number }[] {
  return sources(SRC).flatMap((file) => {
    const from = path.relative(SRC, file).split(path.sep).join('/');
    return imports(file).map(({ spec, line }) => ({ from, line, target: path.relative(SRC, path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts'))).split(path.sep).join('/') }));
  });
}

/** The core's three doors, lowest first. */
const DOORS = ['formats', 'base', 'services'] as const;
const doorOf = (rel: string) => DOORS.indexOf(rel.split('/')[1] as (typeof DOORS)[number]);

/** Node modules that reach the disk, processes, threads or the network: never in a pure format. */
const IMPURE = /^(node:)?(fs|fs\/promises|child_process|net|tls|dgram|http|https|http2|os|worker_threads|cluster|process|module)$/;

/** The part of `folder` (core/..., ending in '/') that holds `rel`: its subfolder or the file itself. */
const partIn = (folder: string, rel: string) => folder + rel.slice(folder.length).split('/')[0]!;

describe('the core has three doors', () => {
  it('every file of the core is in base/, formats/ or services/', () => {
    expect(fs.readdirSync(path.join(SRC, 'core')).sort()).toEqual([...DOORS].sort());
  });

  it('formats import nothing of base or services, base nothing of services', () => {
    const climbs = importPairs()
      .filter(({ from, target }) => from.startsWith('core/') && target.startsWith('core/') && doorOf(target) > doorOf(from))
      .map(({ from, target, line }) => `src/${from}:${line} imports src/${target}`);
    expect(climbs).toEqual([]);
  });

  it('a format touches no disk, process, thread or network', () => {
    const impure = sources(path.join(SRC, 'core', 'formats')).flatMap((file) =>
      [...fs.readFileSync(file, 'utf8').matchAll(/(?:from\s*|import\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm)]
        .filter((m) => IMPURE.test(m[1]!))
        .map((m) => `src/${path.relative(SRC, file)} imports ${m[1]}`),
    );
    expect(impure).toEqual([]);
  });
});

describe('the layers point down', () => {
  it('no two parts of a folder of the core import each other', () => {
    const between = new Map<string, string>();
    for (const { from, target, line } of importPairs()) {
      if (!from.startsWith('core/') || !target.startsWith('core/')) continue;
      // Every folder holding both files: the two parts it sees them in must not import each other.
      const a = from.split('/');
      const b = target.split('/');
      for (let depth = 1; depth < Math.min(a.length, b.length) && a[depth - 1] === b[depth - 1]; depth++) {
        const folder = `${a.slice(0, depth).join('/')}/`;
        const [pa, pb] = [partIn(folder, from), partIn(folder, target)];
        if (pa !== pb) between.set(`${pa} -> ${pb}`, `src/${from}:${line} imports src/${target}`);
      }
    }
    const both = [...between].filter(([edge]) => between.has(edge.split(' -> ').reverse().join(' -> '))).map(([, where]) => where);
    expect(both).toEqual([]);
  });

  it('no import circle, type imports included (a file that names another sits above it)', () => {
    const graph = new Map<string, string[]>();
    for (const { from, target } of importPairs()) if (!target.startsWith('..')) graph.set(from, [...(graph.get(from) ?? []), target]);
    const state = new Map<string, 'open' | 'done'>();
    const circles: string[] = [];
    const visit = (file: string, trail: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        circles.push([...trail.slice(trail.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) visit(next, [...trail, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    expect(circles).toEqual([]);
  });

  it('no source file imports a file of a higher layer', () => {
    const climbs: string[] = [];
    for (const file of sources(SRC)) {
      const from = path.relative(SRC, file).split(path.sep).join('/');
      for (const { spec, line } of imports(file)) {
        const target = path.relative(SRC, path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts'))).split(path.sep).join('/');
        if (target.startsWith('..')) continue; // outside src (package.json, build helpers)
        if (layerOf(target) > layerOf(from)) climbs.push(`src/${from}:${line} imports src/${target}`);
      }
    }
    expect(climbs).toEqual([]);
  });

  it('the core names no registry, function or host, even in a comment-free import', () => {
    const named = sources(path.join(SRC, 'core')).filter((f) => /from\s+['"][^'"]*\/(registry|functions|hosts)\//.test(fs.readFileSync(f, 'utf8')));
    expect(named.map((f) => path.relative(SRC, f))).toEqual([]);
  });
});

describe('the map of the sources', () => {
  it('docs/development.md names every source folder', () => {
    const doc = fs.readFileSync(path.resolve('docs/development.md'), 'utf8');
    const folders = (dir: string): string[] =>
      fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? [path.join(dir, e.name), ...folders(path.join(dir, e.name))] : []));
    const unnamed = folders(SRC)
      .map((d) => `src/${path.relative(SRC, d).split(path.sep).join('/')}/`)
      .filter((d) => !doc.includes(d));
    expect(unnamed).toEqual([]);
  });
});
