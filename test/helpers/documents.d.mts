// Types of documents.mjs for the TypeScript tests (the module is plain JS: the bench runs it too).
export function makePdf(pages: string[]): Buffer;
export function makeDocx(paragraphs: Array<string | { heading: string } | { table: string[][] }>, extraDocument?: string): Buffer;
export function makeXlsx(sheets: Record<string, Array<Array<string | number>>>): Buffer;
export function makePptx(slides: string[]): Buffer;
export function makeOdt(paragraphs: string[], heading?: string): Buffer;
export function makeOds(sheets: Record<string, string[][]>): Buffer;
export function makeOdp(slides: string[]): Buffer;
export function makeEpub(chapters: Array<{ title: string; text: string }>): Buffer;
export function makeEml(): string;
export function makePng(width: number, height: number): Buffer;
export function pngHeaderOnly(width: number, height: number): Buffer;
export function convertImage(width: number, height: number, format: 'jpg' | 'gif' | 'webp'): Buffer;
