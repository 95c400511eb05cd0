// Real documents made by the tests and the bench (bench/documents.mjs): PDFs written by hand (text
// pages, an image-only page, many pages), office files and e-books zipped with fflate from their
// real XML parts, e-mails, HTML, and images (PNG written by hand; JPEG, GIF and WebP made by
// ImageMagick's convert). Plain JS so the bench runs it too; types in documents.d.mts.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { strToU8, zipSync } from "fflate";
function makePdf(pages) {
  const objects = [];
  const add = (body) => objects.push(body) - 1 + 1;
  const catalog = add("");
  const tree = add("");
  const font = add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
  const kids = [];
  for (const text of pages) {
    const lines = text.split("\n");
    const ops = lines.map((l, i) => `BT /F1 12 Tf 72 ${720 - i * 16} Td (${l.replace(/([()\\])/g, "\\$1")}) Tj ET`).join("\n");
    const stream = text === "" ? "0 0 1 rg 72 72 200 200 re f" : ops;
    const content = add(`<< /Length ${Buffer.byteLength(stream, "latin1")} >>
stream
${stream}
endstream`);
    kids.push(add(`<< /Type /Page /Parent ${tree} 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 ${font} 0 R >> >> /Contents ${content} 0 R >>`));
  }
  objects[catalog - 1] = `<< /Type /Catalog /Pages ${tree} 0 R >>`;
  objects[tree - 1] = `<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(" ")}] /Count ${kids.length} >>`;
  let out = "%PDF-1.4\n%\xE2\xE3\xCF\xD3\n";
  const offsets = [];
  objects.forEach((body, i) => {
    offsets.push(Buffer.byteLength(out, "latin1"));
    out += `${i + 1} 0 obj
${body}
endobj
`;
  });
  const xref = Buffer.byteLength(out, "latin1");
  out += `xref
0 ${objects.length + 1}
0000000000 65535 f 
${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n 
`).join("")}`;
  out += `trailer
<< /Size ${objects.length + 1} /Root ${catalog} 0 R >>
startxref
${xref}
%%EOF
`;
  return Buffer.from(out, "latin1");
}
const zip = (files, storedFirst) => {
  const entries = {};
  if (storedFirst !== void 0) entries[storedFirst] = [strToU8(files[storedFirst]), { level: 0 }];
  for (const [name, data] of Object.entries(files)) if (name !== storedFirst) entries[name] = typeof data === "string" ? strToU8(data) : data;
  return Buffer.from(zipSync(entries));
};
const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"';
function makeDocx(paragraphs, extraDocument = "") {
  const body = paragraphs.map((p) => {
    if (typeof p === "string") return `<w:p><w:r><w:t xml:space="preserve">${esc(p)}</w:t></w:r></w:p>`;
    if ("heading" in p) return `<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>${esc(p.heading)}</w:t></w:r></w:p>`;
    return `<w:tbl>${p.table.map((row) => `<w:tr>${row.map((c) => `<w:tc><w:p><w:r><w:t>${esc(c)}</w:t></w:r></w:p></w:tc>`).join("")}</w:tr>`).join("")}</w:tbl>`;
  }).join("");
  return zip({
    "[Content_Types].xml": '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
    "word/document.xml": `<?xml version="1.0" encoding="UTF-8"?>${extraDocument}<w:document ${W}><w:body>${body}</w:body></w:document>`
  });
}
function makeXlsx(sheets) {
  const strings = [];
  const files = {
    "[Content_Types].xml": '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'
  };
  const names = Object.keys(sheets);
  files["xl/workbook.xml"] = `<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>${names.map((n, i) => `<sheet name="${esc(n)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`).join("")}</sheets></workbook>`;
  files["xl/_rels/workbook.xml.rels"] = `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${names.map((_n, i) => `<Relationship Id="rId${i + 1}" Type="worksheet" Target="worksheets/sheet${i + 1}.xml"/>`).join("")}</Relationships>`;
  names.forEach((n, i) => {
    const rows = sheets[n].map((row, r) => `<row r="${r + 1}">${row.map((v, c) => {
      const ref = `${String.fromCharCode(65 + c)}${r + 1}`;
      if (typeof v === "number") return `<c r="${ref}"><v>${v}</v></c>`;
      strings.push(v);
      return `<c r="${ref}" t="s"><v>${strings.length - 1}</v></c>`;
    }).join("")}</row>`).join("");
    files[`xl/worksheets/sheet${i + 1}.xml`] = `<?xml version="1.0"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>${rows}</sheetData></worksheet>`;
  });
  files["xl/sharedStrings.xml"] = `<?xml version="1.0"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">${strings.map((s) => `<si><t>${esc(s)}</t></si>`).join("")}</sst>`;
  return zip(files);
}
function makePptx(slides) {
  const files = {
    "[Content_Types].xml": '<?xml version="1.0"?><Types/>',
    // Slide 2 is listed first: the presentation order wins over the file names.
    "ppt/presentation.xml": `<?xml version="1.0"?><p:presentation xmlns:p="p" xmlns:r="r"><p:sldIdLst>${slides.map((_s, i) => `<p:sldId id="${256 + i}" r:id="rId${i + 1}"/>`).join("")}</p:sldIdLst></p:presentation>`,
    "ppt/_rels/presentation.xml.rels": `<?xml version="1.0"?><Relationships>${slides.map((_s, i) => `<Relationship Id="rId${i + 1}" Target="slides/slide${slides.length - i}.xml"/>`).join("")}</Relationships>`
  };
  slides.forEach((text, i) => {
    files[`ppt/slides/slide${slides.length - i}.xml`] = `<?xml version="1.0"?><p:sld xmlns:p="p" xmlns:a="a"><p:cSld><p:spTree><p:sp><p:txBody>${text.split("\n").map((l) => `<a:p><a:r><a:t>${esc(l)}</a:t></a:r></a:p>`).join("")}</p:txBody></p:sp></p:spTree></p:cSld></p:sld>`;
  });
  return zip(files);
}
const ODF_NS = 'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"';
function odf(mime, body) {
  return zip({ mimetype: mime, "META-INF/manifest.xml": '<?xml version="1.0"?><manifest/>', "content.xml": `<?xml version="1.0" encoding="UTF-8"?><office:document-content ${ODF_NS}><office:body>${body}</office:body></office:document-content>` }, "mimetype");
}
function makeOdt(paragraphs, heading = "Title") {
  return odf("application/vnd.oasis.opendocument.text", `<office:text><text:h text:outline-level="1">${esc(heading)}</text:h>${paragraphs.map((p) => `<text:p>${esc(p)}</text:p>`).join("")}</office:text>`);
}
function makeOds(sheets) {
  const tables = Object.entries(sheets).map(([name, rows]) => `<table:table table:name="${esc(name)}">${rows.map((r) => `<table:table-row>${r.map((c) => `<table:table-cell office:value-type="string"><text:p>${esc(c)}</text:p></table:table-cell>`).join("")}<table:table-cell table:number-columns-repeated="16000"/></table:table-row>`).join("")}<table:table-row table:number-rows-repeated="1048000"><table:table-cell table:number-columns-repeated="1024"/></table:table-row></table:table>`).join("");
  return odf("application/vnd.oasis.opendocument.spreadsheet", `<office:spreadsheet>${tables}</office:spreadsheet>`);
}
function makeOdp(slides) {
  return odf("application/vnd.oasis.opendocument.presentation", `<office:presentation>${slides.map((s, i) => `<draw:page draw:name="p${i + 1}"><draw:frame><draw:text-box><text:p>${esc(s)}</text:p></draw:text-box></draw:frame></draw:page>`).join("")}</office:presentation>`);
}
function makeEpub(chapters) {
  const files = {
    mimetype: "application/epub+zip",
    "META-INF/container.xml": '<?xml version="1.0"?><container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
    "OEBPS/content.opf": `<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf"><manifest>${chapters.map((_c, i) => `<item id="c${i}" href="text/ch${i + 1}.xhtml" media-type="application/xhtml+xml"/>`).join("")}</manifest><spine>${chapters.map((_c, i) => `<itemref idref="c${chapters.length - 1 - i}"/>`).join("")}</spine></package>`
  };
  chapters.forEach((c, i) => {
    files[`OEBPS/text/ch${i + 1}.xhtml`] = `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>${esc(c.title)}</title><style>p{color:red}</style></head><body><h1>${esc(c.title)}</h1><p>${esc(c.text)}</p><script>alert(1)</script></body></html>`;
  });
  return zip(files, "mimetype");
}
function makeEml() {
  return [
    "From: =?UTF-8?B?SsO8cmdlbiBNw7xsbGVy?= <jm@example.com>",
    "To: team@example.com",
    "Subject: =?UTF-8?Q?Quarterly_r=C3=A9sum=C3=A9?=",
    "Date: Tue, 3 Mar 2026 10:00:00 +0100",
    "MIME-Version: 1.0",
    'Content-Type: multipart/mixed; boundary="outer"',
    "",
    "--outer",
    'Content-Type: multipart/alternative; boundary="alt"',
    "",
    "--alt",
    "Content-Type: text/plain; charset=utf-8",
    "Content-Transfer-Encoding: quoted-printable",
    "",
    "Hello team,=0AThe numbers are attached. Caf=C3=A9 at 10.",
    "--alt",
    "Content-Type: text/html; charset=utf-8",
    "",
    "<p>Hello team</p><script>steal()</script>",
    "--alt--",
    "--outer",
    'Content-Type: application/pdf; name="q3.pdf"',
    'Content-Disposition: attachment; filename="q3.pdf"',
    "Content-Transfer-Encoding: base64",
    "",
    Buffer.from("%PDF-1.4 fake").toString("base64"),
    "--outer--",
    ""
  ].join("\r\n");
}
function makePng(width, height) {
  const row = Buffer.alloc(1 + width * 3);
  const raw = Buffer.alloc(row.length * height);
  for (let y = 0; y < height; y++) {
    raw[y * row.length] = 0;
    for (let x = 0; x < width; x++) {
      const o = y * row.length + 1 + x * 3;
      raw[o] = x * 255 / width;
      raw[o + 1] = y * 255 / height;
      raw[o + 2] = 128;
    }
  }
  const chunk = (type, data) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlib.crc32(body) >>> 0);
    return Buffer.concat([len, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", ihdr), chunk("IDAT", zlib.deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]);
}
function pngHeaderOnly(width, height) {
  const full = makePng(1, 1);
  full.writeUInt32BE(width, 16);
  full.writeUInt32BE(height, 20);
  return full;
}
function convertImage(width, height, format) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "shed-img-"));
  try {
    fs.writeFileSync(path.join(dir, "in.png"), makePng(width, height));
    execFileSync("/usr/bin/convert", [path.join(dir, "in.png"), path.join(dir, `out.${format}`)]);
    return fs.readFileSync(path.join(dir, `out.${format}`));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
function esc(s) {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
export {
  convertImage,
  makeDocx,
  makeEml,
  makeEpub,
  makeOdp,
  makeOds,
  makeOdt,
  makePdf,
  makePng,
  makePptx,
  makeXlsx,
  pngHeaderOnly
};
