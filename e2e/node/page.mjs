// Opens wasmcp's status page in Debian's chromium, through playwright-core,
// as a person would: first without the token, then with it once in the
// address. Prints what the browser saw as one JSON object on stdout and
// saves a screenshot of the whole page; the Go test (e2e/page_test.go)
// judges both.
// Usage: node page.mjs PAGE_URL TOKEN SCREENSHOT
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const [pageURL, token, screenshot] = process.argv.slice(2);
const userDataDir = mkdtempSync(join(tmpdir(), 'wasmcp-chromium-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 900 },
});
try {
  const page = context.pages()[0] ?? await context.newPage();
  const seen = { requests: [], console: [], dialogs: [] };
  page.on('request', (r) => seen.requests.push(r.url()));
  page.on('console', (m) => seen.console.push(m.text()));
  page.on('dialog', (d) => { seen.dialogs.push(d.message()); d.dismiss(); });

  const without = await page.goto(pageURL);
  seen.withoutToken = { status: without.status(), text: await page.innerText('body') };

  const url = new URL(pageURL);
  url.searchParams.set('token', token);
  const withToken = await page.goto(url.href);
  seen.status = withToken.status();
  seen.url = page.url();
  seen.cookies = (await context.cookies()).map(({ name, httpOnly, sameSite, value }) => ({ name, httpOnly, sameSite, holdsToken: value.includes(token) }));
  // What the page's own scripts would see of the cookie: nothing, as it is HttpOnly.
  seen.documentCookie = await page.evaluate(() => document.cookie);

  seen.title = await page.title();
  seen.summary = await page.innerText('#summary');
  seen.calls = await page.$$eval('#calls tbody tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.innerText)));
  seen.tools = await page.$$eval('#tools .tool-name', (els) => els.map((e) => e.textContent));
  seen.errors = await page.$$eval('#errors tbody tr', (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));
  seen.injected = await page.$$eval('img, script, iframe, object, embed', (els) => els.map((e) => e.outerHTML));
  seen.charts = {};
  for (const id of ['latency-chart', 'error-chart']) {
    const chart = page.locator(`#${id} svg`);
    seen.charts[id] = {
      ok: await chart.locator('rect.bar.ok').count(),
      failed: await chart.locator('rect.bar.failed').count(),
      box: await chart.boundingBox(),
    };
  }
  // One tool opened, so that the screenshot shows a schema and limits.
  await page.locator('#tools details').first().locator('summary').click();
  seen.firstSchema = await page.locator('#tools details').first().locator('pre.schema').first().innerText();
  await page.screenshot({ path: screenshot, fullPage: true });
  seen.viewport = page.viewportSize();
  process.stdout.write(JSON.stringify(seen) + '\n');
} finally {
  await context.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
