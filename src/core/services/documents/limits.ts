/**
 * Bounds of document reading. Every file shed_read converts may be hostile (a zip bomb, an XML
 * entity bomb, a spreadsheet declaring a million rows), so each step has a ceiling far above what
 * a real document needs and far below what would hurt the server; past one, the read stops with
 * a clear error (or, for sizes that only cost time, the part already read is shown).
 */
const MIB = 1024 * 1024;

export const DOC_LIMITS = {
  /** Bytes one zip member may inflate to (a DOCX's document.xml, an XLSX sheet). */
  memberBytes: 128 * MIB,
  /** Bytes all members read for one document may inflate to together. */
  totalBytes: 256 * MIB,
  /** Expansion ratio beyond which a member is a bomb, not a document (real XML compresses ~10-30×). */
  memberRatio: 1000,
  /** Zip entries an office file may list (a real one has tens to a few thousand). */
  zipEntries: 20_000,
  /** Characters of text one document may produce; beyond, the text is cut and says so. */
  textChars: 32 * MIB,
  /** Sheets, slides or chapters read from one file. */
  parts: 5_000,
  /** Columns shown per spreadsheet row. */
  columns: 1_024,
  /** Cells a repeated ODF cell or row may stand for when it holds a value. */
  repeat: 10_000,
  /** MIME parts of an e-mail, and how deep multiparts may nest. */
  mailParts: 1_000,
  mailDepth: 12,
  /** PDF pages converted in one call when `pages` names no range (whole pages are shown while they fit). */
  pdfPagesPerCall: 50,
  /** Pixels of an image before it is even decoded (100 MP: a 12 MP photo is far below). */
  imagePixels: 100_000_000,
  /** Longest side of an image shown to a model (what vision models use at most without resampling). */
  imageSide: 1568,
} as const;
