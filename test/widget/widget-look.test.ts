import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { adminAuth, createProject, dialects } from '../helper.js';
import { ask, browserAvailable, expectWidgetAccessible, hostPage, lastAnswer, launchBrowser, openHostPage, screenshot, startStack, type Stack } from './harness.js';

/** Host-page rules written to break any widget that is not isolated. */
const HOSTILE_CSS = `<style>
  * { color: rgb(255, 0, 0) !important; font-family: "Comic Sans MS", cursive !important; font-size: 31px !important; }
  button { display: none !important; }
  div, ul, li, textarea { visibility: hidden !important; background: rgb(0, 255, 0) !important; }
  answerdesk-widget { display: none !important; opacity: 0 !important; }
  [class*="launcher"], .panel, .bubble { display: none !important; }
</style>`;

/** Computed styles of the widget's parts, for comparing a plain page with a hostile one. */
async function widgetStyles(page: Page) {
  return page.evaluate(() => {
    const root = document.querySelector('answerdesk-widget')!.shadowRoot!;
    const pick = (selector: string) => {
      const el = root.querySelector(selector)!;
      const cs = getComputedStyle(el);
      const box = el.getBoundingClientRect();
      return { display: cs.display, visibility: cs.visibility, color: cs.color, background: cs.backgroundColor, font: cs.fontFamily, size: cs.fontSize, w: Math.round(box.width), h: Math.round(box.height) };
    };
    return { launcher: pick('.launcher'), panel: pick('.panel'), input: pick('textarea'), header: pick('.header') };
  });
}

describe.skipIf(!browserAvailable()).each(dialects)('widget look, keyboard and mobile in chromium ($name)', (dialect) => {
  let stack: Stack;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    stack = await startStack(dialect);
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });
  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  });
  afterEach(async () => {
    await context.close();
  });

  it('applies every WidgetConfig field and starts a conversation from a skill card', async () => {
    const project = await createProject(stack.t, {
      widget: {
        position: 'bottom-left',
        primaryColor: 'rgb(15, 118, 110)',
        bgColor: 'rgb(255, 251, 235)',
        textColor: 'rgb(30, 41, 59)',
        navigationCardColor: 'rgb(224, 242, 254)',
        fontFamily: 'Georgia, serif',
        fabIcon: '🛟',
        fabText: 'Need help?',
        showBranding: false,
      },
    });
    const skill = await stack.t.app.inject({
      method: 'POST',
      url: `/api/v1/admin/projects/${project.project.id}/skills`,
      headers: adminAuth(),
      payload: { name: 'Track my order', description: 'Where is my parcel?', instructions: 'Ask for the order number.', enabled: true },
    });
    expect(skill.statusCode).toBe(201);
    const page = await openHostPage(context, stack.page(`config-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: project.publicKey })));
    const launcher = page.locator('answerdesk-widget .launcher');
    expect(await launcher.textContent()).toBe('🛟Need help?');
    const box = (await launcher.boundingBox())!;
    expect(box.x).toBeLessThan(100); // bottom-left
    expect(box.y + box.height).toBeGreaterThan(700);
    await launcher.click();
    const styles = await widgetStyles(page);
    expect(styles.launcher.background).toBe('rgb(15, 118, 110)');
    expect(styles.launcher.color).toBe('rgb(255, 255, 255)'); // readable on the dark primary colour
    expect(await page.locator('answerdesk-widget .fab-text').evaluate((el) => getComputedStyle(el).color)).toBe('rgb(255, 255, 255)');
    expect(styles.panel.background).toBe('rgb(255, 251, 235)');
    expect(styles.panel.color).toBe('rgb(30, 41, 59)');
    expect(styles.panel.font).toBe('Georgia, serif');
    expect(await page.locator('answerdesk-widget .branding').isVisible()).toBe(false);
    const card = page.locator('answerdesk-widget .card', { hasText: 'Track my order' });
    expect(await card.evaluate((el) => getComputedStyle(el).backgroundColor)).toBe('rgb(224, 242, 254)');
    expect(await card.textContent()).toContain('Where is my parcel?');
    await screenshot(page, `config-${dialect.name}`);

    await card.click();
    expect((await lastAnswer(page)).status).toBe('complete');
    expect(await page.locator('answerdesk-widget li.msg.user').first().textContent()).toContain('Track my order');
    const convs = await stack.t.deps.store.db.selectFrom('conversations').select(['id', 'message_count']).where('project_id', '=', project.project.id).execute();
    expect(convs).toHaveLength(1);
    expect(convs[0].message_count).toBe(2);
  });

  it('looks and works the same under hostile host-page CSS', async () => {
    const project = await createProject(stack.t);
    const plain = await openHostPage(context, stack.page(`plain-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: project.publicKey })));
    await plain.locator('answerdesk-widget .launcher').click();
    const expected = await widgetStyles(plain);
    const hostile = await openHostPage(context, stack.page(`hostile-css-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: project.publicKey, head: HOSTILE_CSS })));
    // The page's own button is hidden by its CSS; the widget's is not.
    expect(await hostile.locator('body > button').isVisible()).toBe(false);
    await hostile.locator('answerdesk-widget .launcher').click();
    expect(await widgetStyles(hostile)).toEqual(expected);
    expect(expected.launcher.display).not.toBe('none');
    expect(expected.input.visibility).toBe('visible');
    await ask(hostile, 'Hello');
    expect((await lastAnswer(hostile)).status).toBe('complete');
    await screenshot(hostile, `hostile-css-${dialect.name}`);
    // Nor does the widget's CSS leak out: the page's heading keeps the page's rules.
    expect(await hostile.locator('h1').evaluate((el) => getComputedStyle(el).fontSize)).toBe('31px');
  });

  it('can be used with the keyboard alone', async () => {
    const project = await createProject(stack.t);
    const page = await openHostPage(context, stack.page(`keyboard-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: project.publicKey })));
    const focused = () =>
      page.evaluate(() => {
        const active = document.activeElement;
        if (active?.tagName.toLowerCase() !== 'answerdesk-widget') return active?.tagName.toLowerCase() ?? null;
        const inner = active.shadowRoot!.activeElement;
        return inner ? `${inner.tagName.toLowerCase()}.${inner.className || inner.id}` : 'host';
      });
    // Tab through the page until the launcher has focus (it is the last focusable element).
    for (let i = 0; i < 20 && (await focused()) !== 'button.launcher'; i++) await page.keyboard.press('Tab');
    expect(await focused()).toBe('button.launcher');
    await page.keyboard.press('Enter');
    expect(await page.locator('answerdesk-widget .panel').isVisible()).toBe(true);
    expect(await page.evaluate(() => document.querySelector('answerdesk-widget')!.shadowRoot!.activeElement!.id)).toBe('ad-input');
    await page.keyboard.type('Hello there');
    await page.keyboard.press('Enter');
    const answer = await lastAnswer(page);
    expect(answer.status).toBe('complete');
    expect(await page.locator('answerdesk-widget li.msg.user').textContent()).toContain('Hello there');
    // The answer was announced to assistive technology.
    expect(await page.locator('answerdesk-widget [role="status"][aria-live="polite"]').textContent()).not.toBe('');

    // Rate it with the keyboard: Tab moves from the composer… backwards to the feedback buttons.
    let reached = false;
    for (let i = 0; i < 15 && !reached; i++) {
      await page.keyboard.press('Shift+Tab');
      reached = (await focused()) === 'button.icon-btn' && (await page.evaluate(() => document.querySelector('answerdesk-widget')!.shadowRoot!.activeElement!.getAttribute('data-rating'))) !== null;
    }
    expect(reached).toBe(true);
    await page.keyboard.press('Enter');
    await page.locator('answerdesk-widget .thanks', { hasText: 'Thanks for your feedback!' }).waitFor();
    const rows = await stack.t.deps.store.db.selectFrom('feedback').select('message_id').where('project_id', '=', project.project.id).execute();
    expect(rows.map((r) => r.message_id)).toEqual([answer.messageId]);

    // Escape closes the panel and gives focus back to the launcher.
    await page.keyboard.press('Escape');
    expect(await page.locator('answerdesk-widget .panel').isVisible()).toBe(false);
    expect(await focused()).toBe('button.launcher');
    expect(await page.locator('answerdesk-widget .launcher').getAttribute('aria-expanded')).toBe('false');
  });

  it('names the launcher by the text it shows, and axe finds nothing serious, closed and open', async () => {
    const project = await createProject(stack.t, { widget: { fabText: 'Ask us' } });
    // Reduced motion: axe reads colours, and a panel still fading in has none of its own yet.
    const still = await browser.newContext({ viewport: { width: 1280, height: 800 }, reducedMotion: 'reduce' });
    try {
      const page = await openHostPage(still, stack.page(`launcher-name-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: project.publicKey })));
      const launcher = page.locator('answerdesk-widget .launcher');
      // Voice control users say what they see ("click Ask us"): the name must hold the visible text.
      expect(await launcher.getAttribute('aria-label')).toBe('Ask us (open support chat)');
      expect(await page.getByRole('button', { name: 'Ask us' }).count()).toBe(1);
      await expectWidgetAccessible(page, 'the closed widget with a launcher text');
      await launcher.click();
      expect(await launcher.getAttribute('aria-label')).toBe('Close support chat');
      await ask(page, 'Hello');
      expect((await lastAnswer(page)).status).toBe('complete');
      await expectWidgetAccessible(page, 'the open widget with an answer');
      await page.keyboard.press('Escape');
      expect(await launcher.getAttribute('aria-label')).toBe('Ask us (open support chat)');
    } finally {
      await still.close();
    }
  });

  it('goes full screen on a 360 px wide phone and respects reduced motion', async () => {
    const project = await createProject(stack.t);
    const phone = await browser.newContext({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true, reducedMotion: 'reduce' });
    try {
      const page = await openHostPage(phone, stack.page(`mobile-${dialect.name}`, hostPage({ apiOrigin: stack.apiOrigin, apiKey: project.publicKey })));
      await screenshot(page, `mobile-closed-${dialect.name}`);
      await page.locator('answerdesk-widget .launcher').tap();
      const panel = (await page.locator('answerdesk-widget .panel').boundingBox())!;
      expect(panel).toEqual({ x: 0, y: 0, width: 360, height: 740 });
      expect(await page.locator('answerdesk-widget .launcher').isVisible()).toBe(false);
      expect(await page.locator('answerdesk-widget .panel').evaluate((el) => getComputedStyle(el).animationName)).toBe('none');
      await ask(page, 'Hi from my phone');
      expect((await lastAnswer(page)).status).toBe('complete');
      await screenshot(page, `mobile-open-${dialect.name}`);
      await page.locator('answerdesk-widget button.close').tap();
      expect(await page.locator('answerdesk-widget .launcher').isVisible()).toBe(true);
    } finally {
      await phone.close();
    }
  });

  it('serves the demo page with the widget for a public key, under a strict CSP', async () => {
    const project = await createProject(stack.t, {}, 'Demo');
    const page = await context.newPage();
    const errors: string[] = [];
    // CSP violations and script errors show as console errors; failed requests are checked by URL
    // (the browser's own favicon request is not the page's business).
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
    });
    page.on('pageerror', (err) => errors.push(err.message));
    page.on('response', (r) => {
      if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) errors.push(`${r.status()} ${r.url()}`);
    });
    await page.goto(`${stack.apiOrigin}/demo?key=${project.publicKey}`);
    await page.locator('#ask:not([disabled])').click();
    expect(await page.locator('answerdesk-widget .panel').isVisible()).toBe(true);
    await ask(page, 'What is AnswerDesk?');
    expect((await lastAnswer(page)).status).toBe('complete');
    // The widget's styles apply although the page forbids inline styles.
    expect(await page.locator('answerdesk-widget .launcher').evaluate((el) => getComputedStyle(el).position)).toBe('fixed');
    expect(errors).toEqual([]);
    await screenshot(page, `demo-${dialect.name}`);

    await page.goto(`${stack.apiOrigin}/demo?key=${project.secretKey}`);
    expect(await page.locator('.notice').textContent()).toContain('That is a secret key');
    expect(await page.locator('answerdesk-widget').count()).toBe(0);
    expect(await page.content()).not.toContain(project.secretKey.slice(7));
  });
}, 120_000);
