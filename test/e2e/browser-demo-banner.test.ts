import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/app.ts';
import { choosePasswordThroughLink, launchBrowser, openTab, screenshot, type Tab } from '../support/browser.ts';
import { startFalFake, type FalFake } from '../support/fal-fake.ts';
import { testVideo } from '../support/media-probe.ts';

// The dashboard says plainly when the built-in demo renderer (not AI) draws what a page makes, and
// says nothing when a provider (here a fake fal, started by the test) makes it.

let browser: Browser;
let fal: FalFake;
let demo: TestService;
let real: TestService;

beforeAll(async () => {
  fal = await startFalFake({ key: 'fal-banner', video: await testVideo({ width: 160, height: 90, seconds: 1 }) });
  [demo, real] = await Promise.all([
    startTestService({}),
    startTestService({ FAL_KEY: 'fal-banner', FAL_QUEUE_URL: fal.url, ENGINE_ROUTES: '*=fal' }),
  ]);
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await Promise.all([demo?.close(), real?.close()]);
  await fal?.close();
});

async function signedIn(svc: TestService): Promise<Tab> {
  const team = await svc.team({ credits: 100 });
  const tab = await openTab(browser, svc.baseUrl);
  const link = await svc.app.services.members.createUser(team.teamId, { email: `owner-${Math.random().toString(36).slice(2)}@example.com`, role: 'owner' });
  await choosePasswordThroughLink(tab, link.url, 'owner password 1');
  return tab;
}

/** Loads a page afresh and waits until the dashboard has its answer to "who makes what". */
async function open(page: Page, url: string, heading: string): Promise<void> {
  const answered = page.waitForResponse((r) => r.url().endsWith('/graphql') && (r.request().postData() ?? '').includes('query Engines'));
  await page.goto(url);
  await page.getByRole('heading', { name: heading, exact: true }).waitFor();
  expect((await answered).status()).toBe(200);
  // One frame for React to draw what the answer says.
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(null))));
}

describe('the demo renderer banner', () => {
  it('with no provider: the gallery and each create form say the pictures are a demo render, not AI, and how to connect one', async () => {
    const tab = await signedIn(demo);
    try {
      await open(tab.page, `${demo.baseUrl}/`, 'Generations');
      const banner = tab.page.getByTestId('demo-banner');
      await banner.waitFor();
      const text = (await banner.textContent()) ?? '';
      expect(text).toContain('Demo renderer, not AI.');
      expect(text).toContain('No AI provider is connected to this server');
      expect(text).toContain('docs/providers.md');
      expect(text).toContain('docs/gpu.md');
      await screenshot(tab.page, 'demo-banner-gallery');

      await open(tab.page, `${demo.baseUrl}/create/text-to-image`, 'Create');
      expect(await tab.page.getByTestId('demo-banner').textContent()).toContain('these images are drawn by the built-in demo renderer');
      await open(tab.page, `${demo.baseUrl}/create/ai-video`, 'Create');
      expect(await tab.page.getByTestId('demo-banner').textContent()).toContain('these videos are drawn by the built-in demo renderer');
      // The voiceover tab is no image or video: no banner there.
      await open(tab.page, `${demo.baseUrl}/create/voiceover`, 'Create');
      expect(await tab.page.getByTestId('demo-banner').count()).toBe(0);
      expect(tab.problems).toEqual([]);
      expect(tab.outside).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);

  it('with every route on a provider: no banner on the gallery or the forms, and /healthz says no demo', async () => {
    expect((await demo.api('GET', '/healthz')).body).toMatchObject({ status: 'ok', demo: true });
    const health = await real.api('GET', '/healthz');
    expect(health.body).toMatchObject({ status: 'ok', demo: false });
    expect(health.body).not.toHaveProperty('demo_note');
    expect(JSON.stringify(health.body)).not.toContain('fal-banner');
    const tab = await signedIn(real);
    try {
      await open(tab.page, `${real.baseUrl}/`, 'Generations');
      expect(await tab.page.getByTestId('demo-banner').count()).toBe(0);
      await open(tab.page, `${real.baseUrl}/create/text-to-image`, 'Create');
      expect(await tab.page.getByTestId('demo-banner').count()).toBe(0);
      await open(tab.page, `${real.baseUrl}/create/ai-video`, 'Create');
      expect(await tab.page.getByTestId('demo-banner').count()).toBe(0);
      expect(tab.problems).toEqual([]);
    } finally {
      await tab.close();
    }
  }, 60_000);
});
