/**
 * Lines start..end of a converted document's text, cut to a character budget: the in-memory twin
 * of shed_read's file slicing, so a converted document answers exactly like a text file (which
 * lines of how many, where to continue).
 */
export interface LineSlice {
  content: string;
  totalLines: number;
  /** First line shown (0 when the text is empty; past the end: the line asked for, with nothing shown). */
  startLine: number;
  endLine: number;
  truncated: boolean;
  /** Where the next call should start when truncated. */
  nextStartLine?: number;
}

export function sliceText(text: string, start: number, end: number, budget: number): LineSlice {
  // Lines as a file has them: a final newline ends the last line rather than starting an empty one.
  let totalLines = 0;
  let from = -1;
  let to = text.length;
  let pos = 0;
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    const stop = nl === -1 ? text.length : nl + 1;
    totalLines++;
    if (totalLines === start) from = pos;
    if (totalLines === end) to = stop;
    pos = stop;
  }
  if (from === -1 || start > totalLines) {
    // Nothing from `start` on: the answer names the line asked for.
    return { content: '', totalLines, startLine: totalLines === 0 ? 0 : start, endLine: totalLines === 0 ? 0 : start - 1, truncated: false };
  }
  return cut(text.slice(from, to), start, totalLines, budget);
}

/** Cuts `content` (lines from `start` on) to `budget` characters at a line end when one fits. */
export function cut(content: string, start: number, totalLines: number, budget: number): LineSlice {
  const lineCount = (s: string) => {
    let k = 0;
    for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', i + 1)) k++;
    return s.length > 0 && !s.endsWith('\n') ? k + 1 : k;
  };
  if (content.length <= budget) {
    return { content, totalLines, startLine: start, endLine: start + Math.max(0, lineCount(content) - 1), truncated: false };
  }
  const at = content.lastIndexOf('\n', budget - 1);
  if (at >= 0) {
    const kept = content.slice(0, at + 1);
    const last = start + lineCount(kept) - 1;
    return { content: kept, totalLines, startLine: start, endLine: last, truncated: true, nextStartLine: last + 1 };
  }
  // One line longer than the budget: its start is shown, and the next call starts on the next line.
  return { content: content.slice(0, budget), totalLines, startLine: start, endLine: start, truncated: true, nextStartLine: start + 1 };
}
