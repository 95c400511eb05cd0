// shed_read of what people keep, one table: format -> extractor, the median time of a
// typical file's shed_read through the built plugin (dist/fileshed.mjs, converters confined in the
// sandbox), beside the same file through the bare tools in the same run: pdftotext, pandoc (when
// installed), and the anchor's extractors (Open Terminal's read_file uses pypdf, python-docx and
// openpyxl: run when importable), convert for the photo; and each side's peak memory (the largest
// process, GNU time's %M: for ours, the Node process or the converter it started).
//
// Inputs (generated once into $TMPDIR/fileshed-bench/documents): a 30-page PDF, a ~1 MB DOCX, a
// ~5 MB XLSX, a 12 MP JPEG (4000 x 3000 of noise). BENCH_SMOKE=1: tiny files, one run, no anchors.
//   node bench/documents.mjs [--runs N]
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUNDLE, ensureBuilt, median, printTable, ROOT, SMOKE, sized } from './lib.mjs';
import { makeDocx, makePdf, makeXlsx } from '../test/helpers/documents.mjs';

const runsArg = process.argv.indexOf('--runs');
const RUNS = SMOKE ? 1 : runsArg > 0 ? Number(process.argv[runsArg + 1]) : 5;
const log = (t) => process.stderr.write(`${t}\n`);

if (process.argv[2] === '--child') {
  // One format read RUNS times in this process (the first run warms the sandbox probe and the worker).
  const [, , , file, runs] = process.argv;
  const { Tools } = await import(BUNDLE);
  const tools = new Tools();
  tools.valves = { ...tools.valves, storage_base_path: process.env.BENCH_BASE, max_output_default: 5_000_000 };
  const user = { id: 'bench', name: 'bench' };
  const times = [];
  for (let i = 0; i <= Number(runs); i++) {
    const t = performance.now();
    const r = JSON.parse(await tools.shed_read({ zone: 'storage', path: file, __user__: user }));
    if (!r.success) throw new Error(`${file}: ${JSON.stringify(r.error)}`);
    if (i > 0) times.push(performance.now() - t);
  }
  console.log(median(times));
  process.exit(0);
}

ensureBuilt();
const cache = path.join(os.tmpdir(), SMOKE ? 'fileshed-bench-smoke' : 'fileshed-bench', 'documents');
const base = path.join(cache, 'base');
const dir = path.join(base, 'users', 'bench', 'Storage', 'data');
fs.mkdirSync(dir, { recursive: true });
// Words of a pseudo-random generator (fixed seed): text that compresses like prose, not like a pattern.
let state = 2463534242;
const rand = () => ((state ^= state << 13), (state ^= state >>> 17), (state ^= state << 5), (state >>> 0) / 4294967296);
const syllables = 'ka lo mi ne ru sa ti vo we xa yu ze bra cli dro fen gor hul';
const word = () => Array.from({ length: 1 + Math.floor(rand() * 3) }, () => syllables.split(' ')[Math.floor(rand() * 18)]).join('');
const text = (n) => Array.from({ length: n }, word).join(' ');

const inputs = {
  'report.pdf': () => makePdf(Array.from({ length: sized(30, 3) }, (_v, p) => Array.from({ length: 40 }, (_w, l) => `${p + 1}.${l + 1} ${text(10)}`).join('\n'))),
  // Word's own structure when pandoc can write it (the anchors open it too), else the test writer's.
  'memo.docx': () => {
    const paragraphs = Array.from({ length: sized(12000, 100) }, (_v, i) => `${i}: ${text(40)} ${Math.floor(rand() * 1e9)}`);
    if (SMOKE || !fs.existsSync('/usr/bin/pandoc')) return makeDocx(paragraphs);
    const out = path.join(dir, 'memo.docx');
    execFileSync('/usr/bin/pandoc', ['-f', 'markdown', '-o', out], { input: paragraphs.join('\n\n') });
    return fs.readFileSync(out);
  },
  // Excel's structure when openpyxl can write it, else the test writer's.
  'sales.xlsx': () => {
    const rows = sized(180_000, 500);
    const out = path.join(dir, 'sales.xlsx');
    const made = SMOKE ? { status: 1 } : spawnSync('python3', ['-c', `import openpyxl,sys\nwb=openpyxl.Workbook();ws=wb.active;ws.title="Sales"\nfor r in range(${rows}): ws.append(["Region %d" % (r % 97), r, (r * 37.5) % 1000, "note %d" % r, r * 3])\nwb.save(sys.argv[1])`, out]);
    if (made.status === 0) return fs.readFileSync(out);
    return makeXlsx({ Sales: Array.from({ length: rows }, (_v, r) => [`Region ${r % 97}`, r, (r * 37.5) % 1000, `${text(3)} ${r}`, r * 3]) });
  },
  'photo.jpg': () => {
    const out = path.join(dir, 'photo.jpg');
    execFileSync('/usr/bin/convert', ['-size', sized('4000x3000', '400x300'), 'xc:gray', '+noise', 'Random', '-quality', '85', out]);
    return fs.readFileSync(out);
  },
};
for (const [name, make] of Object.entries(inputs)) {
  const p = path.join(dir, name);
  if (!fs.existsSync(p)) {
    log(`making ${name} ...`);
    fs.writeFileSync(p, make());
  }
}

/** Median ms and the peak RSS (MB) of a command, measured by GNU time, RUNS times after one warm-up. */
function bare(cmd, args) {
  const times = [];
  let peak = 0;
  for (let i = 0; i <= RUNS; i++) {
    const t = performance.now();
    const r = spawnSync('/usr/bin/time', ['-f', '%M', cmd, ...args], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    const ms = performance.now() - t;
    if (r.status !== 0) return 'failed';
    peak = Math.max(peak, Number(r.stderr.trim().split('\n').pop()) / 1024);
    if (i > 0) times.push(ms);
  }
  return { ms: median(times), mb: peak };
}

function ours(file) {
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, path.join(ROOT, 'bench', 'documents.mjs'), '--child', file, String(RUNS)], { env: { ...process.env, BENCH_BASE: base }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) throw new Error(`shed_read ${file} failed: ${r.stderr}`);
  return { ms: Number(r.stdout.trim()), mb: Number(r.stderr.trim().split('\n').pop()) / 1024 };
}

const have = (program) => fs.existsSync(program);
const py = (code) => (spawnSync('python3', ['-c', code.split(';')[0]]).status === 0 ? ['python3', ['-c', code]] : undefined);
const rows = [
  { format: 'PDF, 30 pages', file: 'report.pdf', extractor: 'pdftotext (poppler), confined', anchors: [['pdftotext', have('/usr/bin/pdftotext') ? ['/usr/bin/pdftotext', ['-q', 'report.pdf', '-']] : undefined], ['pypdf', py('import pypdf;r=pypdf.PdfReader("report.pdf");[p.extract_text() for p in r.pages]')]] },
  { format: 'DOCX, ~1 MB', file: 'memo.docx', extractor: 'zlib + own XML reader, worker', anchors: [['pandoc', have('/usr/bin/pandoc') ? ['/usr/bin/pandoc', ['-t', 'plain', 'memo.docx']] : undefined], ['python-docx', py('import docx;d=docx.Document("memo.docx");"\\n".join(p.text for p in d.paragraphs)')]] },
  { format: 'XLSX, ~5 MB', file: 'sales.xlsx', extractor: 'zlib + own XML reader, worker', anchors: [['openpyxl', py('import openpyxl;wb=openpyxl.load_workbook("sales.xlsx",read_only=True);[r for r in wb.active.iter_rows(values_only=True)]')]] },
  { format: 'JPEG, 12 MP', file: 'photo.jpg', extractor: 'ImageMagick convert, confined', anchors: [['convert (bare)', ['/usr/bin/convert', ['jpeg:photo.jpg[0]', '-auto-orient', '-resize', '1568x1568>', '-strip', '-quality', '85', 'jpeg:-']]]] },
];

const table = [];
for (const row of rows) {
  const size = fs.statSync(path.join(dir, row.file)).size;
  log(`${row.file} (${(size / 1048576).toFixed(2)} MB) ...`);
  const o = ours(row.file);
  // The smoke run proves the script and our side work; the anchors cost seconds and prove nothing more.
  for (const [name, cmd] of SMOKE ? row.anchors.slice(0, 1) : row.anchors) {
    const a = SMOKE ? 'skipped' : cmd ? bare(cmd[0], cmd[1]) : undefined;
    table.push({
      scenario: `${row.format} (${(size / 1048576).toFixed(1)} MB): ${row.extractor}`,
      ours: `${o.ms.toFixed(0)} ms, ${o.mb.toFixed(0)} MB`,
      anchor: name,
      anchorValue: a === undefined ? 'not installed' : a === 'failed' ? 'failed on this file' : a === 'skipped' ? 'skipped (smoke)' : `${a.ms.toFixed(0)} ms, ${a.mb.toFixed(0)} MB`,
      ratio: typeof a === 'object' ? `${(o.ms / a.ms).toFixed(2)}x` : '-',
      target: 'report',
      result: 'measured',
    });
  }
}
printTable(table);
