/**
 * Text of word-processor files, presentations and e-books, from the XML inside their zip:
 * DOCX (word/document.xml), ODT (content.xml), PPTX slides (in presentation order), ODP pages, and
 * EPUB chapters (in spine order, each XHTML file through htmlToText). Headings become "# ",
 * list paragraphs "- ", table cells are separated by " | ".
 */
import path from 'node:path';
import { htmlToText } from './html.js';
import { DOC_LIMITS } from './limits.js';
import { TextOut } from './text.js';
import { local, tokenize } from '../../formats/xml/tokenize.js';
import { damaged, type DocumentZip } from './zip.js';

function need(zip: DocumentZip, name: string, shown: string): string {
  const text = zip.text(name);
  if (text === undefined) throw damaged(shown, `it has no ${name}`);
  return text;
}

/** DOCX body text. */
export function docxText(zip: DocumentZip, shown: string): TextOut {
  const out = new TextOut();
  let inText = false;
  const cells: number[] = [];
  tokenize(need(zip, 'word/document.xml', shown), {
    open(name, attrs) {
      switch (local(name)) {
        case 't':
          inText = true;
          break;
        case 'tab':
          out.add('\t', true);
          break;
        case 'br':
        case 'cr':
          out.br();
          break;
        case 'pStyle': {
          const level = /^(?:heading|berschrift|titre|titolo|encabezado)\s*(\d)$/i.exec(attrs['w:val'] ?? '');
          if (level) out.add(`${'#'.repeat(Number(level[1]))} `);
          else if (/^title$/i.test(attrs['w:val'] ?? '')) out.add('# ');
          break;
        }
        case 'numPr':
          out.add('- ');
          break;
        case 'tr':
          cells.push(0);
          break;
        case 'tc':
          if (cells.length > 0 && cells[cells.length - 1]!++ > 0) out.add(' | ');
          break;
      }
    },
    close(name) {
      const n = local(name);
      if (n === 't') inText = false;
      else if (n === 'p') {
        if (cells.length > 0) out.add(' ');
        else out.br(true);
      }
      else if (n === 'tr') {
        cells.pop();
        out.br();
      } else if (n === 'tbl') out.br(true);
    },
    text(t) {
      if (inText) out.add(t, true);
    },
  });
  return out;
}

/** One text per slide (PPTX), in the order the presentation shows them. */
export function pptxSlides(zip: DocumentZip, shown: string): string[] {
  const order: string[] = [];
  const rels = relationships(zip, 'ppt/_rels/presentation.xml.rels', 'ppt');
  tokenize(need(zip, 'ppt/presentation.xml', shown), {
    open(name, attrs) {
      if (local(name) === 'sldId') {
        const target = rels.get(attrs['r:id'] ?? '');
        if (target !== undefined && order.length < DOC_LIMITS.parts) order.push(target);
      }
    },
  });
  // A file without a slide list (damaged, or hand-made) still shows its slides in name order.
  const slides = order.length > 0 ? order : zip.names.filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n)).sort((a, b) => slideNumber(a) - slideNumber(b)).slice(0, DOC_LIMITS.parts);
  return slides.map((slide) => {
    const out = new TextOut();
    let inText = false;
    tokenize(zip.text(slide) ?? '', {
      open(name) {
        const n = local(name);
        if (n === 't') inText = true;
        else if (n === 'br') out.br();
      },
      close(name) {
        const n = local(name);
        if (n === 't') inText = false;
        else if (n === 'p') out.br();
      },
      text(t) {
        if (inText) out.add(t, true);
      },
    });
    return out.toString();
  });
}

function slideNumber(name: string): number {
  return Number(/(\d+)\.xml$/.exec(name)?.[1] ?? 0);
}

/** Relationship id → member path, from a .rels part (targets resolved against `base`). */
export function relationships(zip: DocumentZip, relsName: string, base: string): Map<string, string> {
  const map = new Map<string, string>();
  tokenize(zip.text(relsName) ?? '', {
    open(name, attrs) {
      if (local(name) !== 'Relationship' || attrs.Id === undefined || attrs.Target === undefined) return;
      const target = attrs.Target.startsWith('/') ? attrs.Target.slice(1) : path.posix.normalize(`${base}/${attrs.Target}`);
      map.set(attrs.Id, target);
    },
  });
  return map;
}

/** ODF text (ODT), or one text per page (ODP: `pages` = true). */
export function odfText(zip: DocumentZip, shown: string): TextOut;
export function odfText(zip: DocumentZip, shown: string, pages: true): string[];
export function odfText(zip: DocumentZip, shown: string, pages = false): TextOut | string[] {
  const texts: string[] = [];
  let out = new TextOut();
  let skip = 0;
  const cells: number[] = [];
  tokenize(need(zip, 'content.xml', shown), {
    open(name, attrs, selfClosing) {
      if (skip > 0) {
        if (!selfClosing) skip++;
        return;
      }
      switch (name) {
        case 'text:h':
          out.add(`${'#'.repeat(Math.min(6, Number(attrs['text:outline-level'] ?? 1) || 1))} `);
          break;
        case 'text:list-item':
          out.add('- ');
          break;
        case 'text:tab':
          out.add('\t', true);
          break;
        case 'text:line-break':
          out.br();
          break;
        case 'text:s':
          out.add(' '.repeat(Math.min(1000, Number(attrs['text:c'] ?? 1) || 1)), true);
          break;
        case 'table:table-row':
          cells.push(0);
          break;
        case 'table:table-cell':
          if (cells.length > 0 && cells[cells.length - 1]!++ > 0) out.add(' | ');
          break;
        case 'draw:page':
          if (pages) out = new TextOut();
          break;
        // Notes, annotations and change-tracking records are not the document's text.
        case 'presentation:notes':
        case 'office:annotation':
        case 'text:tracked-changes':
          if (!selfClosing) skip = 1;
          break;
      }
    },
    close(name) {
      if (skip > 0) {
        skip--;
        return;
      }
      if (name === 'text:p' || name === 'text:h') {
        if (cells.length > 0) out.add(' ');
        else out.br(!pages);
      }
      else if (name === 'table:table-row') {
        cells.pop();
        out.br();
      } else if (name === 'draw:page' && pages && texts.length < DOC_LIMITS.parts) texts.push(out.toString());
    },
    text(t) {
      if (skip === 0) out.add(t, true);
    },
  });
  return pages ? texts : out;
}

/** EPUB chapters in reading order (the spine of the package document). */
export function epubText(zip: DocumentZip, shown: string): TextOut {
  let opf = '';
  tokenize(need(zip, 'META-INF/container.xml', shown), {
    open(name, attrs) {
      if (local(name) === 'rootfile' && opf === '' && attrs['full-path']) opf = attrs['full-path'];
    },
  });
  if (opf === '') throw damaged(shown, 'its container.xml names no package document');
  const base = path.posix.dirname(opf);
  const manifest = new Map<string, string>();
  const spine: string[] = [];
  tokenize(need(zip, opf, shown), {
    open(name, attrs) {
      const n = local(name);
      if (n === 'item' && attrs.id && attrs.href) manifest.set(attrs.id, path.posix.normalize(`${base === '.' ? '' : `${base}/`}${decodeURIComponent(attrs.href.split('#')[0]!)}`));
      else if (n === 'itemref' && attrs.idref && spine.length < DOC_LIMITS.parts) spine.push(attrs.idref);
    },
  });
  const out = new TextOut();
  let chapter = 0;
  for (const id of spine) {
    const member = manifest.get(id);
    if (member === undefined || !zip.has(member) || out.full) continue;
    chapter++;
    out.br(true);
    out.add(`=== ${chapter}. ${path.posix.basename(member)} ===`);
    out.br(true);
    htmlToText(zip.text(member) ?? '', out, { title: false }); // a chapter's <title> repeats its heading
  }
  return out;
}
