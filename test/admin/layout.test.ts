/**
 * The admin page's layout in a real headless Chromium at phone (390 px) and desktop (1280 px)
 * width: the settings are grouped in sections with a table of contents whose anchors land on
 * them (no script: the CSP allows none), nothing overflows sideways, the storage base shown is
 * the one in force, local mode offers no sign-out (there is no sign-in), and every form control
 * of every admin page has a visible label. Screenshots go to /tmp/admin-layout/.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'puppeteer-core';
import { launchChromium, type Chromium } from '../helpers/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, serve, tempBase, type Served } from '../hosts/helpers.js';

const SHOTS = '/tmp/admin-layout';
const KEY = 'fs_layout-admin-key-0123456789';
const WIDTHS = [390, 1280] as const;
const PAGES = ['/admin', '/admin/usage', '/admin/groups', '/admin/links', '/admin/sandbox', '/admin/audit', '/admin/maintenance'];
const schema = JSON.parse(fs.readFileSync(path.resolve('valves.schema.json'), 'utf8')) as { properties: Record<string, unknown> };

let local: Served;
let keyed: Served;
let browser: Browser;
let page: Page;
let chromium: Chromium | undefined;

beforeAll(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  local = await serve(['--access-log', 'off'], { base: tempBase() });
  keyed = await serve(['--auth', 'api-key', '--api-key', KEY, '--access-log', 'off'], { base: tempBase() });
  // Something on every page: a group with a member (its forms), a link, an audit entry.
  expect((await json(await local.post('shed_create_file', { zone: 'storage', path: 'a.txt', content: 'a' }))).success).toBe(true);
  expect((await json(await local.post('shed_link_create', { zone: 'storage', path: 'a.txt' }))).success).toBe(true);
  chromium = await launchChromium();
  browser = chromium.browser;
  page = await browser.newPage();
}, 60_000);

afterAll(async () => {
  await chromium?.close();
  await local?.stop();
  await keyed?.stop();
});

const viewport = (width: number) => page.setViewport({ width, height: width < 500 ? 844 : 900 });

describe.each(WIDTHS)('settings at %i px', (width) => {
  beforeAll(async () => {
    await viewport(width);
    await page.goto(`${local.url}/admin`);
  });

  it('groups every valve into a section listed in the table of contents', async () => {
    const sections = await page.$$eval('form[action="/admin/valves"] fieldset', (fs) =>
      fs.map((f) => ({ id: f.id, title: f.querySelector('legend')!.textContent, valves: [...f.querySelectorAll('[data-valve]')].map((d) => d.getAttribute('data-valve')) })),
    );
    expect(sections.map((s) => s.title)).toEqual(['Storage & quotas', 'Commands, code & sandbox', 'SQLite', 'Archives', 'Links', 'Functions & files', 'Undo by turn', 'Audit & maintenance', 'Open WebUI']);
    expect(sections.flatMap((s) => s.valves).sort()).toEqual(Object.keys(schema.properties).sort());
    const toc = await page.$$eval('nav.toc a', (as) => as.map((a) => a.getAttribute('href')));
    expect(toc).toEqual(sections.map((s) => `#${s.id}`));
  });

  it('a table-of-contents link lands on its section, and the way back to the contents is one tap', async () => {
    await page.goto(`${local.url}/admin`);
    await page.click('nav.toc a[href="#s-audit"]');
    await page.waitForFunction(() => location.hash === '#s-audit');
    const top = await page.$eval('#s-audit', (f) => f.getBoundingClientRect().top);
    expect(top).toBeGreaterThanOrEqual(0);
    expect(top).toBeLessThan(80);
    await page.screenshot({ path: path.join(SHOTS, `settings-jump-${width}.png`) });
    if (width < 500) {
      await page.click('#s-audit > a.top');
      await page.waitForFunction(() => location.hash === '#sections');
      expect(await page.$eval('nav.toc', (n) => n.getBoundingClientRect().top)).toBeLessThan(80);
    } else {
      // On a desktop the contents stay in view beside the form.
      const toc = await page.$eval('nav.toc', (n) => { const r = n.getBoundingClientRect(); return { top: r.top, bottom: r.bottom }; });
      expect(toc.top).toBeGreaterThanOrEqual(0);
      expect(toc.bottom).toBeLessThanOrEqual(900);
    }
  });

  it('fits the width (no sideways scrolling) and shows the storage base in force, with no default that does not apply', async () => {
    await page.goto(`${local.url}/admin`);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    const basePath = await page.$eval('[data-valve="storage_base_path"]', (d) => ({ value: (d.querySelector('input') as HTMLInputElement).value, readOnly: (d.querySelector('input') as HTMLInputElement).readOnly, text: d.textContent ?? '' }));
    expect(basePath.value).toBe(local.base);
    expect(basePath.readOnly).toBe(true);
    expect(basePath.text).not.toContain('Default');
    expect(basePath.text).not.toContain('/app/backend');
    await page.screenshot({ path: path.join(SHOTS, `settings-${width}.png`) });
  });

  it('local mode: no sign-out (there is no sign-in), the header says so', async () => {
    expect(await page.$('form[action="/admin/logout"]')).toBeNull();
    expect(await page.$eval('header', (h) => h.textContent)).toContain('Local mode');
  });
});

describe('labels and sign-in', () => {
  it('every form control of every admin page has a visible label', async () => {
    await viewport(390);
    await page.goto(`${local.url}/admin/groups`);
    await Promise.all([page.waitForNavigation(), page.evaluate(() => {
      (document.querySelector('input[name="group"]:not([type=hidden])') as HTMLInputElement).value = 'team';
      (document.querySelector('form input[name="action"][value="create"]')!.closest('form') as HTMLFormElement).submit();
    })]);
    expect(await page.$$eval('input[name="user"]:not([type=hidden])', (els) => els.length), 'the member form of the new group').toBe(1);
    for (const p of PAGES) {
      await page.goto(`${local.url}${p}`);
      const unlabeled = await page.$$eval('input:not([type=hidden]), select, textarea', (els) =>
        els.filter((e) => [...(e as HTMLInputElement).labels!].every((l) => (l.textContent ?? '').trim() === '')).map((e) => e.outerHTML.slice(0, 120)),
      );
      expect(unlabeled, p).toEqual([]);
    }
  });

  it('the sign-in field is labelled, and a signed-in admin can sign out', async () => {
    for (const width of WIDTHS) {
      await viewport(width);
      await page.goto(`${keyed.url}/admin`);
      expect(await page.$eval('#key', (e) => [...(e as HTMLInputElement).labels!].map((l) => l.textContent))).toEqual(['API key']);
      await page.screenshot({ path: path.join(SHOTS, `signin-${width}.png`) });
    }
    await page.type('#key', KEY);
    await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
    expect(await page.$('form[action="/admin/logout"] button')).not.toBeNull();
  });
});
