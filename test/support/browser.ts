import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const SCREENSHOTS = path.resolve(import.meta.dirname, '../../test-results/screenshots');

/**
 * A real headless Chromium: CHROMIUM_PATH, else the machine's own, else the one shipped inside
 * the @sparticuz/chromium package (so `npm install && npm test` needs nothing else).
 */
export async function chromiumPath(): Promise<string> {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  for (const p of ['/usr/bin/chromium', '/usr/bin/chromium-browser']) if (fs.existsSync(p)) return p;
  const { default: packaged } = await import('@sparticuz/chromium');
  return packaged.executablePath();
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: await chromiumPath(),
    headless: true,
    // Web security stays on (unlike @sparticuz/chromium's own defaults): the tests rely on CORS,
    // SameSite cookies and CSP behaving as in a user's browser. Nothing reaches the internet.
    args: ['--no-sandbox', '--no-zygote', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-quic', '--use-gl=angle', '--use-angle=swiftshader'],
  });
}

export interface Tab {
  context: BrowserContext;
  page: Page;
  /** Requests the page tried to send anywhere but our server (all refused): must stay empty. */
  outside: string[];
  /** Console errors and CSP violations the page reported. */
  problems: string[];
  close: () => Promise<void>;
}

/** A fresh browser profile on our origin only: every request elsewhere is refused and recorded. */
export async function openTab(browser: Browser, origin: string, opts: { colorScheme?: 'light' | 'dark'; width?: number; height?: number } = {}): Promise<Tab> {
  const context = await browser.newContext({
    ignoreHTTPSErrors: true,
    colorScheme: opts.colorScheme ?? 'light',
    viewport: { width: opts.width ?? 1280, height: opts.height ?? 860 },
  });
  const outside: string[] = [];
  const problems: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(origin) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
    outside.push(url);
    return route.abort('internetdisconnected');
  });
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  // A 4xx the app expects (not signed in yet, a refused form) is logged by Chromium too: not a problem.
  page.on('console', (m) => {
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  return { context, page, outside, problems, close: () => context.close() };
}

/** A welcome (one-time) link opened in `tab`: choose the password, land on the gallery. */
export async function choosePasswordThroughLink(tab: Tab, url: string, password: string): Promise<void> {
  await tab.page.goto(url);
  await tab.page.getByLabel('New password').fill(password);
  await tab.page.getByLabel('The same again').fill(password);
  await tab.page.getByRole('button', { name: 'Set password and sign in' }).click();
  await tab.page.getByRole('heading', { name: 'Generations', exact: true }).waitFor();
}

export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}
