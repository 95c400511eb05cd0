/**
 * HTML to readable text: what a person sees, in reading order. Script, style and other
 * non-content elements are dropped whole; block elements start new lines, list items get a dash,
 * table cells are separated by " | ", `<pre>` keeps its spacing, links keep their text. The title
 * comes first (it heads the page's head). Used for .html files, e-mail bodies and e-book chapters.
 */
import { TextOut } from './text.js';
import { tokenize } from '../../formats/xml/tokenize.js';

const DROP = new Set(['script', 'style', 'noscript', 'template', 'svg', 'math', 'iframe', 'object', 'embed', 'canvas', 'select', 'button', 'noembed', 'noframes']);
const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'body', 'caption', 'dd', 'details', 'dialog', 'div', 'dl', 'dt', 'fieldset', 'figcaption', 'figure',
  'footer', 'form', 'header', 'hgroup', 'hr', 'html', 'legend', 'li', 'main', 'nav', 'ol', 'p', 'pre', 'section', 'summary', 'table', 'tbody', 'thead',
  'tfoot', 'tr', 'ul', 'center', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6',
]);
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr', 'param']);

/** Converts `html` into `out`, or into a new text when none is given (`title`: false leaves the <title> out). */
export function htmlToText(html: string, out: TextOut = new TextOut(), opts: { title?: boolean } = {}): TextOut {
  let title = '';
  let inTitle = false;
  let drop = 0;
  let dropName = '';
  let pre = 0;
  const cellsInRow: number[] = [];
  tokenize(
    html,
    {
      open(name, attrs, selfClosing) {
        if (drop > 0) {
          if (name === dropName && !selfClosing && !VOID.has(name)) drop++;
          return;
        }
        if (name === 'title') {
          inTitle = true;
          return;
        }
        if (DROP.has(name) && !selfClosing && !VOID.has(name)) {
          drop = 1;
          dropName = name;
          return;
        }
        if (name === 'br') out.br();
        else if (name === 'img' && attrs.alt) out.add(`[image: ${attrs.alt}] `);
        else if (BLOCK.has(name)) out.br(/^(p|h[1-6]|table|ul|ol|blockquote|pre|hr)$/.test(name));
        if (/^h[1-6]$/.test(name)) out.add(`${'#'.repeat(Number(name[1]))} `);
        if (name === 'li') out.add('- ');
        if (name === 'tr') cellsInRow.push(0);
        if ((name === 'td' || name === 'th') && cellsInRow.length > 0) {
          if (cellsInRow[cellsInRow.length - 1]! > 0) out.add(' | ');
          cellsInRow[cellsInRow.length - 1]!++;
        }
        if (name === 'pre') pre++;
      },
      close(name) {
        if (drop > 0) {
          if (name === dropName) drop--;
          return;
        }
        if (name === 'title') {
          inTitle = false;
          const heading = title.replace(/\s+/g, ' ').trim();
          if (heading !== '' && opts.title !== false) {
            out.add(heading);
            out.br(true);
          }
          title = '';
        } else if (name === 'tr') cellsInRow.pop();
        else if (name === 'pre') pre = Math.max(0, pre - 1);
        if (BLOCK.has(name)) out.br(/^(p|h[1-6]|table|ul|ol|blockquote|pre)$/.test(name));
      },
      text(t) {
        if (inTitle) title += t;
        else if (drop === 0) out.add(t, pre > 0);
      },
    },
    { html: true },
  );
  return out;
}
