/**
 * A bounded text builder for converters: paragraphs and line breaks without runs of blank lines,
 * and a ceiling (DOC_LIMITS.textChars) past which further text is dropped and the result says so.
 */
import { DOC_LIMITS } from './limits.js';

export class TextOut {
  private parts: string[] = [];
  private size = 0;
  /** The text reached the ceiling: what follows in the document is not in it. */
  full = false;
  private pendingBreaks = 0;
  private lineStart = true;

  constructor(private readonly limit: number = DOC_LIMITS.textChars) {}

  /** Text inside the current paragraph (whitespace runs collapsed unless `keep`). */
  add(text: string, keep = false): void {
    if (text === '') return;
    let t = keep ? text : text.replace(/[ \t\r\n\f\v]+/g, ' ');
    if (this.pendingBreaks > 0) {
      const breaks = this.size === 0 ? 0 : this.pendingBreaks;
      this.pendingBreaks = 0;
      if (breaks > 0) {
        // No trailing spaces before a line break.
        const last = this.parts.length - 1;
        if (last >= 0 && / +$/.test(this.parts[last]!)) {
          const trimmed = this.parts[last]!.replace(/ +$/, '');
          this.size -= this.parts[last]!.length - trimmed.length;
          this.parts[last] = trimmed;
        }
        this.push('\n'.repeat(breaks));
      }
      this.lineStart = true;
    }
    if (!keep && (this.lineStart || this.parts[this.parts.length - 1]?.endsWith(' '))) t = this.lineStart ? t.trimStart() : t.replace(/^ +/, '');
    if (t === '') return;
    this.push(t);
    this.lineStart = t.endsWith('\n');
  }

  /** Ends the current line (`blank`: leaves one empty line after it, as between paragraphs). */
  br(blank = false): void {
    this.pendingBreaks = Math.max(this.pendingBreaks, blank ? 2 : 1);
  }

  private push(t: string): void {
    if (this.full) return;
    if (this.size + t.length > this.limit) {
      this.parts.push(t.slice(0, this.limit - this.size));
      this.size = this.limit;
      this.full = true;
      return;
    }
    this.parts.push(t);
    this.size += t.length;
  }

  get length(): number {
    return this.size;
  }

  toString(): string {
    const text = this.parts.join('').replace(/ +$/, '');
    return text === '' || text.endsWith('\n') ? text : `${text}\n`;
  }
}
