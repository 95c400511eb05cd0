/** The admin page's one stylesheet (same origin, so the CSP allows it by 'self'): phone-first, dark-mode aware. */
export const ADMIN_CSS = `
:root{--bg:#fff;--fg:#1b1f23;--muted:#57606a;--line:#d0d7de;--card:#f6f8fa;--accent:#0969da;--ok:#1a7f37;--err:#cf222e;--warn:#9a6700}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#8d96a0;--line:#30363d;--card:#161b22;--accent:#4493f8;--ok:#3fb950;--err:#f85149;--warn:#d29922}}
*{box-sizing:border-box}body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;background:var(--bg);color:var(--fg)}
header{display:flex;justify-content:space-between;align-items:center;gap:.5rem;padding:.6rem 1rem;border-bottom:1px solid var(--line);flex-wrap:wrap}
.brand{font-size:1.05rem}.account{display:flex;gap:.5rem;align-items:center;margin:0;color:var(--muted)}
body>nav{display:flex;gap:.25rem;overflow-x:auto;padding:.4rem 1rem;border-bottom:1px solid var(--line)}
body>nav a{padding:.35rem .7rem;border-radius:6px;color:var(--fg);text-decoration:none;white-space:nowrap}body>nav a[aria-current]{background:var(--card);font-weight:600;box-shadow:inset 0 -2px var(--accent)}
main{max-width:1100px;margin:0 auto;padding:1rem}h1{font-size:1.4rem;margin:.2rem 0 1rem}h2{font-size:1.1rem;margin:1.5rem 0 .5rem;padding-bottom:.3rem;border-bottom:1px solid var(--line)}
a{color:var(--accent)}.muted,small{color:var(--muted)}
.notice{padding:.6rem .8rem;border-radius:6px;border:1px solid var(--line);background:var(--card)}.notice.ok{border-color:var(--ok)}.notice.error{border-color:var(--err);color:var(--err)}.notice.warn{border-color:var(--warn)}
.toc h2{font-size:.95rem;margin:0 0 .4rem;border:0;padding:0}.toc ol{list-style:none;margin:0 0 1rem;padding:0;display:flex;flex-wrap:wrap;gap:.35rem}
.toc a{display:inline-block;padding:.25rem .65rem;border:1px solid var(--line);border-radius:999px;text-decoration:none;white-space:nowrap}.toc small{margin-left:.2rem}
fieldset{border:1px solid var(--line);border-radius:8px;margin:0 0 1rem;padding:.3rem 1rem .6rem;position:relative;scroll-margin-top:.5rem;min-width:0}legend{font-weight:600;padding:0 .4rem;font-size:1.05rem}
fieldset>.top{position:absolute;right:.8rem;top:-.1rem;font-size:.85rem;background:var(--bg);padding:0 .3rem}
.field{display:grid;grid-template-columns:minmax(0,2fr) minmax(0,3fr);gap:.15rem 1rem;padding:.55rem 0;border-top:1px solid var(--line)}.field:first-of-type{border-top:0}
.field label{font-weight:600}.field .desc{grid-column:1;color:var(--muted);font-size:.87rem;margin:0}.field .control{grid-column:2;grid-row:1/span 3;display:flex;flex-direction:column;gap:.25rem}
@media (min-width:960px){.settings{display:grid;grid-template-columns:12.5rem minmax(0,1fr);gap:1.5rem;align-items:start}.toc{position:sticky;top:1rem}.toc ol{flex-direction:column;flex-wrap:nowrap}.toc a{display:flex;justify-content:space-between;border:0;border-left:3px solid var(--line);border-radius:0;padding:.2rem .6rem}fieldset>.top{display:none}}
.field .row{display:flex;gap:.5rem;align-items:center;flex-wrap:wrap}
.field.invalid input,.field.invalid select{border-color:var(--err);outline:1px solid var(--err)}.error{color:var(--err);font-size:.9rem;margin:0}
input[type=text],input[type=number],input[type=password],input[type=search],select{font:inherit;color:var(--fg);background:var(--bg);border:1px solid var(--line);border-radius:6px;padding:.4rem .5rem;width:100%;max-width:28rem}
button{font:inherit;color:var(--fg);background:var(--card);border:1px solid var(--line);border-radius:6px;padding:.35rem .8rem;cursor:pointer}
button.primary{background:var(--accent);border-color:var(--accent);color:#fff}button.link{background:none;border:0;color:var(--accent);padding:.2rem;text-decoration:underline;font-size:.85rem}
.switch{position:relative;display:inline-block;width:2.6rem;height:1.5rem}.switch input{opacity:0;width:100%;height:100%;margin:0;position:absolute;cursor:pointer;z-index:1}
.switch span{position:absolute;inset:0;border-radius:1rem;background:var(--line);transition:.15s}.switch span::after{content:"";position:absolute;left:.2rem;top:.2rem;width:1.1rem;height:1.1rem;border-radius:50%;background:#fff;transition:.15s}
.switch input:checked+span{background:var(--accent)}.switch input:checked+span::after{transform:translateX(1.1rem)}.switch input:focus-visible+span{outline:2px solid var(--accent);outline-offset:2px}
.actions{position:sticky;bottom:0;background:var(--bg);padding:.7rem 0;border-top:1px solid var(--line);display:flex;gap:.5rem;align-items:center;flex-wrap:wrap}
.table{overflow-x:auto}table{border-collapse:collapse;width:100%;font-size:.92rem}th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}th a{color:var(--fg)}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
meter{width:8rem;max-width:30vw;height:.8rem;vertical-align:middle}
.inline{display:inline-flex;gap:.4rem;align-items:center;margin:0;flex-wrap:wrap}.inline label{display:inline-flex;gap:.3rem;align-items:center}.inline input[type=text],.inline input[type=search]{width:auto;min-width:8rem}
.signin{display:flex;flex-direction:column;gap:.4rem;max-width:28rem}.signin label{font-weight:600}.signin p{margin:0}.signin button{align-self:flex-start}.grid{display:grid;gap:.5rem;grid-template-columns:repeat(auto-fit,minmax(14rem,1fr))}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.7rem 1rem}code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.88rem}pre{background:var(--card);padding:.7rem;border-radius:6px;overflow-x:auto}
.tag{display:inline-block;padding:0 .4rem;border-radius:4px;border:1px solid var(--line);font-size:.8rem}.tag.flag{border-color:var(--err);color:var(--err)}
@media (max-width:640px){.actions .muted{display:none}.field{grid-template-columns:1fr}.field .control{grid-column:1;grid-row:auto}main{padding:.7rem}th,td{padding:.35rem}}
`;
