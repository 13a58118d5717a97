/** What the demo page needs to know; `apiKey` null renders the "which key?" form instead of the widget. */
export interface DemoPageInput {
  apiKey: string | null;
  /** Base of the API for the widget; null: the page's own origin + /api/v1. */
  apiUrl: string | null;
  nonce: string;
  /** Shown above the form when a key was given but cannot be used. */
  problem: string | null;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON for an inline script: `<`, `>` and `&` escaped so the value cannot close the script element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

const STYLE = `
  :root { color-scheme: light; --ink: #0f172a; --muted: #475569; --line: #e2e8f0; --brand: #4f46e5; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.6 Georgia, "Times New Roman", serif; color: var(--ink); background: #f8fafc; }
  header.site { display: flex; align-items: center; justify-content: space-between; gap: 16px; padding: 14px 24px; background: #fff; border-bottom: 1px solid var(--line); font-family: system-ui, sans-serif; }
  header.site a { color: var(--ink); text-decoration: none; margin-left: 18px; font-size: 15px; }
  .logo { font-weight: 700; font-size: 19px; margin: 0 !important; }
  .logo span { color: var(--brand); }
  .hero { padding: 48px 24px 32px; text-align: center; background: linear-gradient(180deg, #eef2ff, #f8fafc); }
  .hero h1 { margin: 0 0 8px; font-size: 34px; }
  .hero p { margin: 0 auto 20px; max-width: 560px; color: var(--muted); }
  form.search { display: flex; gap: 8px; max-width: 520px; margin: 0 auto; }
  form.search input { flex: 1; padding: 10px 14px; border: 1px solid #cbd5e1; border-radius: 10px; font: inherit; }
  button, .button { padding: 10px 16px; border: 0; border-radius: 10px; background: var(--brand); color: #fff; font: 600 15px system-ui, sans-serif; cursor: pointer; }
  main { max-width: 960px; margin: 0 auto; padding: 24px; display: grid; gap: 20px; grid-template-columns: repeat(auto-fit, minmax(260px, 1fr)); }
  article { background: #fff; border: 1px solid var(--line); border-radius: 14px; padding: 20px 22px; }
  article h2 { margin: 0 0 8px; font-size: 20px; }
  article p, article li { color: var(--muted); font-size: 15px; }
  article a { color: var(--brand); }
  .wide { grid-column: 1 / -1; }
  .notice { max-width: 720px; margin: 24px auto; padding: 16px 20px; border-radius: 12px; background: #fff7ed; border: 1px solid #fed7aa; font-family: system-ui, sans-serif; }
  .notice code { background: #ffedd5; padding: 1px 5px; border-radius: 4px; }
  .notice form { display: flex; gap: 8px; margin-top: 10px; }
  .notice input { flex: 1; padding: 8px 10px; border: 1px solid #fdba74; border-radius: 8px; font: 14px ui-monospace, monospace; }
  label { display: block; font: 600 14px system-ui, sans-serif; margin: 10px 0 4px; }
  .contact input, .contact select, .contact textarea { width: 100%; padding: 8px 10px; border: 1px solid #cbd5e1; border-radius: 8px; font: inherit; }
  footer { padding: 32px 24px 96px; text-align: center; color: var(--muted); font: 14px system-ui, sans-serif; }
  /* Deliberately aggressive page rules: the widget lives in a shadow root and must look the same anyway. */
  button:not(.keep) { text-transform: uppercase; letter-spacing: .06em; }
  li { list-style: square; }
`;

/**
 * A realistic help-center page for the demo project: headings, links, a search box and a contact
 * form give the widget's page context something to report, and the page CSS deliberately styles
 * buttons and lists, which must not reach into the widget.
 */
export function renderDemoPage(input: DemoPageInput): string {
  const widget = input.apiKey
    ? `<script src="/widget.js" defer></script>
<script nonce="${input.nonce}">
  window.addEventListener('DOMContentLoaded', function () {
    AnswerDesk.initAsync({
      apiUrl: ${input.apiUrl ? scriptJson(input.apiUrl) : "location.origin + '/api/v1'"},
      apiKey: ${scriptJson(input.apiKey)}
    }).then(function () {
      var ask = document.getElementById('ask');
      ask.disabled = false;
      ask.addEventListener('click', function () { AnswerDesk.open(); });
    });
  });
</script>`
    : '';
  const notice = input.apiKey
    ? ''
    : `<div class="notice" role="note">
  <strong>This demo page needs the demo project's public key.</strong>
  ${input.problem ? `<p>${escapeHtml(input.problem)}</p>` : ''}
  <p>The first <code>npm start</code> printed a link ending in <code>/demo?key=ad_pk_…</code>. Keys are stored only as hashes, so the
  server cannot show it again; create another public key with <code>POST /api/v1/admin/projects/{id}/keys</code> if it is lost.</p>
  <form method="get" action="/demo"><input name="key" aria-label="Public key" placeholder="ad_pk_…" pattern="ad_pk_[0-9A-Za-z]{32}" required><button class="keep" type="submit">Open demo</button></form>
</div>`;

  // The page's forms are decoration for the page context; they must not navigate away (and drop the key).
  const pageScript = `<script nonce="${input.nonce}">
  document.querySelectorAll('form.search, form.contact').forEach(function (form) {
    form.addEventListener('submit', function (event) { event.preventDefault(); });
  });
</script>`;

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>AnswerDesk Help Center</title>
<meta name="description" content="Guides and answers for AnswerDesk: knowledge sources, actions, the chat widget and identity verification.">
<style nonce="${input.nonce}">${STYLE}</style>
</head>
<body>
<header class="site">
  <a class="logo" href="/demo${input.apiKey ? `?key=${encodeURIComponent(input.apiKey)}` : ''}">Answer<span>Desk</span> Help</a>
  <nav aria-label="Main"><a href="/docs">API reference</a><a href="#widget">Widget</a><a href="#contact">Contact</a></nav>
</header>
${notice}
<section class="hero">
  <h1>How can we help?</h1>
  <p>Search the guides, or ask the assistant in the corner: it answers from our documentation and cites its sources.</p>
  <form class="search" role="search"><input type="search" name="q" aria-label="Search help articles" placeholder="e.g. how do I verify users?"><button type="button" id="ask" ${input.apiKey ? 'disabled' : 'hidden'}>Ask the assistant</button></form>
</section>
<main>
  <article>
    <h2>Getting started</h2>
    <p>Create a project, add knowledge sources (pages, Markdown, FAQs, a sitemap) and put one script tag on your site.
    The assistant answers from what you loaded and says so when it does not know.</p>
  </article>
  <article id="widget">
    <h2>Embedding the chat widget</h2>
    <p>Load <code>/widget.js</code> and call <code>AnswerDesk.initAsync</code> with your public key. The widget lives in its own
    shadow root, so your site's styles never break it.</p>
  </article>
  <article>
    <h2>Identity verification</h2>
    <p>Sign the user id with your project's HMAC secret on your server and pass it as <code>user.hmac</code>; signed-in
    users see their earlier conversations.</p>
  </article>
  <article>
    <h2>Actions</h2>
    <p>Describe your own HTTP endpoints (order status, refunds, bookings) and the assistant calls them when a visitor asks,
    with the parameters it gathered in the conversation.</p>
  </article>
  <article class="wide" id="contact">
    <h2>Still stuck? Contact support</h2>
    <form class="contact">
      <label for="c-name">Your name</label><input id="c-name" name="name" autocomplete="name" placeholder="Ada Lovelace">
      <label for="c-email">Work e-mail</label><input id="c-email" name="email" type="email" autocomplete="email" placeholder="ada@example.com">
      <label for="c-topic">Topic</label><select id="c-topic" name="topic"><option>Billing</option><option>Widget</option><option>Knowledge</option></select>
      <label for="c-msg">Message</label><textarea id="c-msg" name="message" rows="3" placeholder="Tell us what happened"></textarea>
      <p><button type="button" class="keep">Send to support</button></p>
    </form>
  </article>
</main>
<footer>AnswerDesk demo · This page is served by your AnswerDesk server at <code>/demo</code>.</footer>
${pageScript}
${widget}
</body>
</html>
`;
}
