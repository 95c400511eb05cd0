/**
 * The Debian `chromium` driven by puppeteer-core for the browser tests: headless, a throw-away
 * profile folder, no background network. `close()` stops the browser and removes the profile.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';

export const CHROMIUM = '/usr/bin/chromium';

export interface Chromium {
  browser: Browser;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Chromium> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'shed-chromium-'));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: profile,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return {
    browser,
    close: async () => {
      await browser.close().catch(() => undefined);
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}
