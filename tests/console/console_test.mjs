#!/usr/bin/env node
// Browser test of the Eagle web console (src/eagle/server/console/) against a running
// `eagle serve`. Drives Debian's Chromium through playwright-core (tests/js/node_modules).
//
//   node tests/console/console_test.mjs <base-url> <artifact-dir> [upload-file]
//
// <upload-file> is ingested into a fresh knowledge base and deleted again; without it
// the test writes a one-record JSONL file of its own. Use a file whose document ids are
// not already in the store: re-ingesting an id moves that document to the test KB, and
// the test deletes what it uploaded. EAGLE_TOKEN, when set, answers the sign-in dialog
// of a server with auth tokens. Each step saves <artifact-dir>/NN-step.png and prints
// one line; exit code 0 on success, 1 on the first failure.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);

function loadPlaywright() {
  // tests/js/node_modules is where tests/js/package.json installs it; NODE_PATH also works.
  for (const name of ['../js/node_modules/playwright-core', 'playwright-core']) {
    try { return require(name); } catch (err) { if (err.code !== 'MODULE_NOT_FOUND') throw err; }
  }
  throw new Error('playwright-core is not installed: run npm ci in tests/js');
}

const [baseArg, artifactDir, uploadArg] = process.argv.slice(2);
if (!baseArg || !artifactDir) {
  console.error('usage: node tests/console/console_test.mjs <base-url> <artifact-dir> [upload-file]');
  process.exit(2);
}
const BASE = baseArg.replace(/\/+$/, '');
const QUERY = 'PD-1 blockade adverse events';
// The document step: a drug label's warnings in the biomed namespace when the build
// has that plugin (EAGLE_TEST_NAMESPACE=biomed, set by console_test.cpp), else a
// passage of the sample in core.
const DOC_NAMESPACE = process.env.EAGLE_TEST_NAMESPACE || 'core';
const DOC_QUERY = DOC_NAMESPACE === 'biomed' ? 'warnings on the Humira label' : QUERY;
const TOKEN = process.env.EAGLE_TOKEN || '';
const KB = `console-test-${Date.now()}`;
const WAIT = 20_000;

fs.mkdirSync(artifactDir, { recursive: true });
let uploadFile = uploadArg;
if (!uploadFile) {
  uploadFile = path.join(artifactDir, 'console-upload.jsonl');
  fs.writeFileSync(uploadFile, JSON.stringify({
    _id: `console-upload-${Date.now()}`, title: 'Console upload check',
    text: 'Checkpoint inhibitor colitis managed with corticosteroids in a small cohort.',
    metadata: { year: 2024, source_type: 'abstract' },
  }) + '\n');
}
if (!fs.existsSync(uploadFile)) {
  console.error(`FAIL: upload file ${uploadFile} does not exist`);
  process.exit(1);
}

class StepFailure extends Error {}
function check(condition, message) {
  if (!condition) throw new StepFailure(message);
}

const problems = []; // uncaught page errors and CSP violations: each fails the run

async function main() {
  const { chromium } = loadPlaywright();
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  let stepNo = 0;
  let stepName = 'start';
  let page;
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    // Runs before the page's own script, so a violation is seen even if app.js is blocked.
    await context.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (e) => {
        console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline code'}`);
      });
    });
    page = await context.newPage();
    page.setDefaultTimeout(WAIT);
    page.on('pageerror', (err) => problems.push(`uncaught page error: ${err.message}`));
    page.on('console', (msg) => {
      if (msg.type() !== 'error') return;
      const text = msg.text();
      console.log(`  page console error: ${text}`);
      if (/Content Security Policy|CSP violation/i.test(text)) problems.push(text);
    });
    page.on('dialog', (d) => { problems.push(`unexpected native dialog: ${d.message()}`); d.dismiss(); });

    // fullPage for short pages only: the document view can be thousands of pixels tall.
    const step = async (name, body, { fullPage = false } = {}) => {
      stepNo += 1;
      stepName = name;
      const started = Date.now();
      const detail = await body();
      await signInIfAsked(page);
      check(problems.length === 0, problems.join('; '));
      const shot = path.join(artifactDir, `${String(stepNo).padStart(2, '0')}-${name}.png`);
      await page.screenshot({ path: shot, fullPage });
      console.log(`ok ${stepNo} ${name} (${Date.now() - started} ms)${detail ? ` — ${detail}` : ''}`);
    };

    await step('open', async () => {
      // networkidle: the start-up calls have been answered, so a 401 has opened the sign-in.
      await page.goto(`${BASE}/`, { waitUntil: 'networkidle' });
      await signInIfAsked(page);
      await page.locator('#q').waitFor({ state: 'visible' });
      check((await page.title()).includes('Eagle'), `page title is "${await page.title()}"`);
      await page.waitForFunction(() => /ok/.test(document.getElementById('server-status').textContent));
      check(await page.locator('#hits [data-testid="hit"]').count() === 0, 'hits shown before any search');
      return `status "${await page.locator('#server-status').textContent()}"`;
    });

    await step('search', async () => {
      await page.fill('#q', QUERY);
      await Promise.all([waitForSearch(page), page.press('#q', 'Enter')]);
      const hits = page.locator('#hits [data-testid="hit"]');
      await expectSearchSettled(page);
      const n = await hits.count();
      check(n >= 1, `no hits for "${QUERY}"`);
      const marks = await page.locator('#hits [data-testid="hit-text"] mark').allTextContents();
      check(marks.length >= 1, 'no <mark> highlight in the hit texts');
      const terms = ['pd-1', 'blockade', 'adverse', 'event'];
      check(marks.every((m) => terms.some((t) => m.toLowerCase().startsWith(t))), `unexpected marks: ${marks.join(', ')}`);
      return `${n} hits, ${marks.length} marks`;
    }, { fullPage: true });

    await step('explain', async () => {
      const first = page.locator('#hits [data-testid="hit"]').first();
      await first.locator('[data-testid="explain-toggle"]').click();
      const panel = first.locator('[data-testid="explain"]');
      await panel.waitFor({ state: 'visible' });
      const legs = panel.locator('[data-testid="explain-leg"]');
      const n = await legs.count();
      check(n >= 1, 'the explanation shows no retrieval leg');
      const widths = await panel.locator('.bar-fill').evaluateAll((bars) => bars.map((b) => b.getBoundingClientRect().width));
      check(widths.length >= n && widths.some((w) => w > 0), `the leg bars are not drawn (widths ${widths.join(', ')})`);
      check(/rank \d+/.test(await legs.first().textContent()), 'the first leg shows no rank');
      await page.locator('#query-details summary').click();
      const source = (await page.locator('[data-testid="route-source"] code').textContent()).trim();
      check(source.length > 0 && source !== '?', 'the route decision is not shown');
      await page.locator('#hits [data-testid="hit"]').first().scrollIntoViewIfNeeded();
      return `${n} legs, route ${source}`;
    });

    await step('facet', async () => {
      const first = page.locator('#hits [data-testid="hit"]').first();
      const sourceType = await first.getAttribute('data-source-type');
      check(sourceType, 'the first hit has no source_type to filter by');
      const before = await page.locator('#hits [data-testid="hit"]').evaluateAll((hs) => hs.map((h) => h.dataset.sourceType));
      await page.fill('#facet-source-type', sourceType);
      const [request] = await Promise.all([waitForSearch(page), page.press('#q', 'Enter')]);
      const sent = request.request().postDataJSON();
      check(sent.facets && sent.facets.source_type === sourceType, `the request's facets are ${JSON.stringify(sent.facets)}`);
      await expectSearchSettled(page);
      const after = await page.locator('#hits [data-testid="hit"]').evaluateAll((hs) => hs.map((h) => h.dataset.sourceType));
      check(after.length >= 1, `no hits with source_type=${sourceType}`);
      check(after.every((t) => t === sourceType), `hits outside the facet: ${after.join(', ')}`);
      const filteredOut = before.filter((t) => t !== sourceType).length;
      return `source_type=${sourceType}: ${after.length} hits (before: ${before.length}, ${filteredOut} of another type)`;
    });

    let taskId = '';
    await step('upload', async () => {
      await page.click('[data-testid="tab-documents"]');
      await page.locator('#view-documents').waitFor({ state: 'visible' });
      // The form offers every format the server reads (POST /ingest 'format').
      const formats = await page.$$eval('#upload-format option', (os) => os.map((o) => o.value));
      const served = ['auto', 'beir', 'jsonl', 'folder', 'spl', 'jats', 'pubmed', 'pdf', 'html', 'markdown', 'compounds'];
      check(served.every((f) => formats.includes(f)) && formats.length === served.length,
        `upload formats ${JSON.stringify(formats)}, want ${JSON.stringify(served)}`);
      await page.setInputFiles('#upload-files', uploadFile);
      await page.fill('#upload-kb', KB);
      const [resp] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/ingest') && r.request().method() === 'POST'),
        page.click('#upload-button'),
      ]);
      check(resp.status() === 202, `POST /ingest answered ${resp.status()}: ${await resp.text()}`);
      taskId = (await resp.json()).task_id;
      const task = page.locator(`#tasks [data-task-id="${taskId}"]`);
      await task.waitFor({ state: 'visible' });
      await page.waitForFunction((id) => {
        const li = document.querySelector(`#tasks [data-task-id="${id}"]`);
        return li && (li.dataset.state === 'succeeded' || li.dataset.state === 'failed');
      }, taskId, { timeout: 120_000 });
      const shown = (await task.locator('[data-testid="task-state"]').textContent()).trim();
      const detail = (await task.locator('[data-testid="task-detail"]').innerText()).replace(/\s+/g, ' ').trim();
      check(shown === 'succeeded', `task ${taskId} ended "${shown}": ${detail}`);
      check(await task.locator('progress').evaluate((p) => p.value === p.max), 'the progress bar is not full');
      check(/added [1-9]\d* document/i.test(detail), `the task result says "${detail}"`);
      return `task ${taskId}: ${detail}`;
    });

    await step('delete', async () => {
      // The KB filter learns the new KB when the task succeeds.
      await page.waitForFunction((kb) => [...document.querySelectorAll('#docs-kb option')].some((o) => o.value === kb), KB);
      await page.selectOption('#docs-kb', KB);
      const rows = page.locator('#docs-body [data-testid="doc-row"]');
      await page.waitForFunction(() => {
        const rs = document.querySelectorAll('#docs-body [data-testid="doc-row"]');
        return rs.length >= 1 && !document.getElementById('docs-body').hasAttribute('aria-busy');
      });
      const ids = await rows.evaluateAll((rs) => rs.map((r) => r.dataset.documentId));
      const kbs = await rows.locator('td:nth-child(3)').allTextContents();
      check(kbs.every((k) => k === KB), `rows from other knowledge bases: ${kbs.join(', ')}`);
      const id = ids[0];
      const row = page.locator(`#docs-body tr[data-document-id="${cssEscape(id)}"]`);
      await row.locator('[data-testid="doc-delete"]').click();
      const dialog = page.locator('#confirm-dialog');
      await dialog.waitFor({ state: 'visible' });
      check((await dialog.textContent()).includes(id), 'the confirm dialog does not name the document');
      await page.screenshot({ path: path.join(artifactDir, `${String(stepNo).padStart(2, '0')}-delete-confirm.png`) });
      const [del] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'DELETE'),
        page.click('[data-testid="confirm-ok"]'),
      ]);
      check(del.status() === 200, `DELETE answered ${del.status()}: ${await del.text()}`);
      await row.waitFor({ state: 'detached' });
      // Asked from here, not from the page, so the expected 404 is not a page console error.
      const status = (await fetch(`${BASE}/documents/${encodeURIComponent(id)}`, { headers: authHeaders() })).status;
      check(status === 404, `GET /documents/${id} after the delete answered ${status}, not 404`);
      const notice = await page.locator('#docs-notice').textContent();
      check(notice.includes(id), `no deletion notice (got "${notice}")`);
      // Leave the store as it was: an upload of several documents leaves the rest.
      const rest = await cleanUp(ids.slice(1));
      return `deleted ${id}${rest ? `, cleaned up ${rest} more` : ''}`;
    });

    await step('image hits', async () => {
      // The visual route: page tiles, each shown with its picture (fetched with the token).
      await page.click('[data-testid="tab-search"]');
      await page.fill('#facet-source-type', '');
      await page.selectOption('#route-mode', 'visual');
      await page.fill('#q', 'iron deficiency anaemia');
      await Promise.all([waitForSearch(page), page.click('#search-button')]);
      await expectSearchSettled(page);
      const img = page.locator('#hits [data-testid="hit-image"]').first();
      await img.waitFor({ state: 'attached' });
      await page.waitForFunction(() => {
        const i = document.querySelector('#hits [data-testid="hit-image"]');
        return i && i.src.startsWith('data:image/') && i.naturalWidth > 0;
      }, null, { timeout: 10000 });
      const width = await img.evaluate((i) => i.naturalWidth);
      // A tile is read by its page's words: the question is on its pages, so not none.
      const status = await page.locator('#search-status').textContent();
      check(!status.includes('evidence none'), `page tiles holding the question marked none: "${status}"`);
      await page.selectOption('#route-mode', 'auto');
      return `a page tile shown, ${width} px wide`;
    });

    await step('document', async () => {
      await page.click('[data-testid="tab-search"]');
      await page.fill('#facet-source-type', '');
      await page.selectOption('#ns', DOC_NAMESPACE);
      await page.fill('#q', DOC_QUERY);
      await Promise.all([waitForSearch(page), page.click('#search-button')]);
      await expectSearchSettled(page);
      const first = page.locator('#hits [data-testid="hit"]').first();
      check(await first.count() === 1, `no ${DOC_NAMESPACE} hits for "${DOC_QUERY}"`);
      const chunkId = await first.evaluate((li) => li.querySelector('[data-testid="hit-doc"]').getAttribute('href'));
      await first.locator('[data-testid="hit-doc"]').click();
      await page.locator('#view-document').waitFor({ state: 'visible' });
      const chunks = page.locator('#doc-chunks [data-testid="chunk"]');
      await chunks.first().waitFor({ state: 'visible' });
      const n = await chunks.count();
      check(n >= 1, 'the document view shows no chunk');
      check(await page.locator('#doc-meta dt').count() >= 3, 'the document metadata is missing');
      const target = page.locator('#doc-chunks .chunk.target');
      check(await target.count() === 1, `the hit's chunk (${chunkId}) is not marked in the document`);
      await target.screenshot({ path: path.join(artifactDir, `${String(stepNo).padStart(2, '0')}-document-hit-chunk.png`) });
      return `"${(await page.locator('#doc-title').textContent()).slice(0, 60)}…", ${n} chunks`;
    });

    await step('mobile', async () => {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.click('#doc-back');
      await page.locator('#view-search').waitFor({ state: 'visible' });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      check(overflow <= 1, `the page scrolls sideways by ${overflow}px at 390px wide`);
      return 'search view at 390x844';
    });
  } catch (err) {
    const message = err instanceof StepFailure ? err.message : (err.stack || String(err));
    console.log(`FAIL ${stepNo} ${stepName}: ${message}`);
    if (page) {
      const shot = path.join(artifactDir, `${String(stepNo).padStart(2, '0')}-${stepName}-failed.png`);
      await page.screenshot({ path: shot, fullPage: true }).catch(() => {});
      console.log(`  screenshot: ${shot}`);
    }
    await browser.close();
    return 1;
  }
  await browser.close();
  console.log(`PASS console test (${stepNo} steps; screenshots in ${artifactDir})`);
  return 0;
}

// Resolves with the POST /search response that the page's next search receives.
function waitForSearch(page) {
  return page.waitForResponse((r) => r.url().endsWith('/search') && r.request().method() === 'POST');
}

// After the response: the page has rendered hits, "no hits" or an error.
async function expectSearchSettled(page) {
  await page.waitForFunction(() => !document.getElementById('hits').hasAttribute('aria-busy'));
  const error = page.locator('#search-error');
  if (await error.isVisible()) throw new StepFailure(`the page shows an error: ${await error.textContent()}`);
}

// A server with auth tokens asks for one: answer with EAGLE_TOKEN.
async function signInIfAsked(page) {
  if (!(await page.locator('#auth-dialog').evaluate((d) => d.open))) return;
  check(TOKEN, 'the server asks for a token: set EAGLE_TOKEN');
  await page.fill('#auth-token', TOKEN);
  await page.press('#auth-token', 'Enter');
  await page.locator('#auth-dialog').waitFor({ state: 'hidden' });
}

const authHeaders = () => (TOKEN ? { Authorization: `Bearer ${TOKEN}` } : {});

async function cleanUp(ids) {
  let n = 0;
  for (const id of ids) {
    const res = await fetch(`${BASE}/documents/${encodeURIComponent(id)}`, { method: 'DELETE', headers: authHeaders() });
    if (res.ok) n += 1;
  }
  return n;
}

// Document ids may hold '#', '"' or other characters that a CSS selector must escape.
function cssEscape(value) {
  return value.replace(/["\\]/g, '\\$&');
}

process.exitCode = await main();
