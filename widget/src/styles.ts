/**
 * The widget's only stylesheet, inside its shadow root. `:host` resets everything the page could
 * make it inherit (`all: initial`, with !important, which inside a shadow tree beats the page's own
 * !important rules), so host CSS cannot reach in and these rules cannot leak out. Colours and font
 * come from the project's WidgetConfig through custom properties set on the host.
 */
export const STYLES = `
:host {
  all: initial !important;
  display: block !important;
  position: fixed !important;
  z-index: 2147483000 !important;
  inset: auto !important;
  width: 0 !important;
  height: 0 !important;
  visibility: visible !important;
  opacity: 1 !important;
  transform: none !important;
  --ad-primary: #2563eb;
  --ad-on-primary: #ffffff;
  --ad-bg: #ffffff;
  --ad-text: #111827;
  --ad-card: #f3f4f6;
  --ad-font: system-ui, sans-serif;
  --ad-muted: color-mix(in srgb, var(--ad-text) 62%, var(--ad-bg));
  --ad-border: color-mix(in srgb, var(--ad-text) 14%, var(--ad-bg));
}
*, *::before, *::after { box-sizing: border-box; }
.root { font-family: var(--ad-font); font-size: 15px; line-height: 1.45; color: var(--ad-text); -webkit-font-smoothing: antialiased; }
[hidden] { display: none !important; }
button { font: inherit; color: inherit; cursor: pointer; }
:focus-visible { outline: 3px solid color-mix(in srgb, var(--ad-primary) 70%, #000); outline-offset: 2px; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }

.launcher {
  position: fixed; bottom: 20px; right: 20px; display: inline-flex; align-items: center; gap: 8px;
  min-width: 56px; height: 56px; padding: 0 16px; justify-content: center; border: 0; border-radius: 28px;
  background: var(--ad-primary); color: var(--ad-on-primary); box-shadow: 0 6px 24px rgba(0,0,0,.22);
  font-weight: 600; font-size: 15px; transition: transform .15s ease;
}
.launcher:hover { transform: translateY(-2px); }
.launcher img { width: 26px; height: 26px; object-fit: contain; display: block; }
.launcher .emoji { font-size: 24px; line-height: 1; }
.left .launcher { right: auto; left: 20px; }

.panel {
  position: fixed; bottom: 88px; right: 20px; width: 384px; height: min(660px, calc(100vh - 110px));
  display: flex; flex-direction: column; overflow: hidden; border-radius: 16px; background: var(--ad-bg);
  color: var(--ad-text); box-shadow: 0 12px 48px rgba(0,0,0,.25); border: 1px solid var(--ad-border);
  animation: ad-in .18s ease-out;
}
.left .panel { right: auto; left: 20px; }
@keyframes ad-in { from { opacity: 0; transform: translateY(12px); } to { opacity: 1; transform: none; } }

.header { display: flex; align-items: center; gap: 4px; padding: 10px 10px 10px 16px; background: var(--ad-primary); color: var(--ad-on-primary); }
.header h2 { flex: 1; margin: 0; font-size: 16px; font-weight: 650; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.icon-btn { display: inline-flex; align-items: center; justify-content: center; width: 36px; height: 36px; border: 0; border-radius: 8px; background: transparent; color: inherit; }
.icon-btn:hover { background: rgba(255,255,255,.18); }

.body { flex: 1; overflow-y: auto; padding: 16px; overscroll-behavior: contain; }
.home h3 { margin: 4px 0 4px; font-size: 20px; }
.home p { margin: 0 0 16px; color: var(--ad-muted); }
.section-title { margin: 16px 0 8px; font-size: 13px; font-weight: 650; text-transform: uppercase; letter-spacing: .04em; color: var(--ad-muted); }
.cards { display: grid; gap: 8px; margin: 0; padding: 0; list-style: none; }
.card {
  display: block; width: 100%; text-align: left; padding: 12px 14px; border-radius: 12px; border: 1px solid var(--ad-border);
  background: var(--ad-card); color: var(--ad-text);
}
.card:hover { border-color: var(--ad-primary); }
.card strong { display: block; font-weight: 650; }
.card span { display: block; margin-top: 2px; font-size: 13px; color: var(--ad-muted); }
.empty { color: var(--ad-muted); font-size: 14px; }

.messages { display: flex; flex-direction: column; gap: 12px; margin: 0; padding: 0; list-style: none; }
.msg { max-width: 88%; overflow-wrap: anywhere; }
.msg.user { align-self: flex-end; padding: 9px 13px; border-radius: 16px 16px 4px 16px; background: var(--ad-primary); color: var(--ad-on-primary); white-space: pre-wrap; }
.msg.assistant { align-self: flex-start; max-width: 96%; }
.bubble { padding: 10px 13px; border-radius: 16px 16px 16px 4px; background: var(--ad-card); }
.bubble > :first-child { margin-top: 0; }
.bubble > :last-child { margin-bottom: 0; }
.bubble p, .bubble ul, .bubble ol, .bubble pre, .bubble blockquote { margin: 0 0 8px; }
.bubble ul, .bubble ol { padding-left: 20px; }
.bubble h3, .bubble h4 { margin: 10px 0 6px; font-size: 15px; }
.bubble a { color: color-mix(in srgb, var(--ad-primary) 80%, var(--ad-text)); text-decoration: underline; }
.bubble code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; background: rgba(0,0,0,.06); padding: 1px 4px; border-radius: 4px; }
.bubble pre { overflow-x: auto; padding: 8px 10px; background: rgba(0,0,0,.06); border-radius: 8px; }
.bubble pre code { background: none; padding: 0; }
.bubble blockquote { padding-left: 10px; border-left: 3px solid var(--ad-border); color: var(--ad-muted); }
.bubble hr { border: 0; border-top: 1px solid var(--ad-border); }
.md-table { overflow-x: auto; }
.bubble table { border-collapse: collapse; font-size: 13px; }
.bubble th, .bubble td { border: 1px solid var(--ad-border); padding: 4px 6px; text-align: left; }
.typing { display: inline-flex; gap: 4px; padding: 4px 0; }
.typing i { width: 7px; height: 7px; border-radius: 50%; background: var(--ad-muted); animation: ad-blink 1.2s infinite ease-in-out; }
.typing i:nth-child(2) { animation-delay: .15s; }
.typing i:nth-child(3) { animation-delay: .3s; }
@keyframes ad-blink { 0%, 80%, 100% { opacity: .25; } 40% { opacity: 1; } }

.tools { display: flex; flex-direction: column; gap: 4px; margin: 0 0 6px; padding: 0; list-style: none; font-size: 13px; color: var(--ad-muted); }
.tool::before { content: "⏳ "; }
.tool.done::before { content: "✓ "; color: #15803d; }
.tool.error::before { content: "✗ "; color: #b91c1c; }
.sources { margin: 8px 0 0; padding: 0; list-style: none; display: flex; flex-wrap: wrap; gap: 6px; }
.sources a, .sources span { display: inline-flex; align-items: center; gap: 4px; max-width: 100%; padding: 3px 9px; border-radius: 999px; border: 1px solid var(--ad-border); font-size: 12px; color: var(--ad-text); text-decoration: none; background: var(--ad-bg); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.sources a:hover { border-color: var(--ad-primary); }
.error-note { margin-top: 6px; padding: 8px 10px; border-radius: 8px; background: #fef2f2; color: #991b1b; font-size: 14px; }
.error-note button, .link-btn { margin-left: 6px; border: 0; background: none; padding: 0; color: inherit; font-weight: 650; text-decoration: underline; }
.stopped { margin-top: 4px; font-size: 12px; color: var(--ad-muted); }

.feedback { display: flex; align-items: center; gap: 2px; margin-top: 4px; }
.feedback .icon-btn { width: 30px; height: 30px; color: var(--ad-muted); }
.feedback .icon-btn:hover { background: var(--ad-card); color: var(--ad-text); }
.feedback .icon-btn[aria-pressed="true"] { color: var(--ad-primary); }
.feedback-form { display: flex; flex-direction: column; gap: 6px; margin-top: 6px; }
.feedback-form textarea { font: inherit; font-size: 14px; padding: 6px 8px; border-radius: 8px; border: 1px solid var(--ad-border); background: var(--ad-bg); color: var(--ad-text); resize: vertical; min-height: 54px; }
.feedback-form .row { display: flex; gap: 8px; }
.thanks { font-size: 12px; color: var(--ad-muted); margin-left: 6px; }
.btn { padding: 6px 12px; border-radius: 8px; border: 1px solid var(--ad-border); background: var(--ad-bg); font-size: 14px; }
.btn.primary { background: var(--ad-primary); color: var(--ad-on-primary); border-color: transparent; }

.composer { display: flex; align-items: flex-end; gap: 8px; padding: 10px 12px; border-top: 1px solid var(--ad-border); background: var(--ad-bg); }
.composer textarea {
  flex: 1; min-height: 42px; max-height: 140px; resize: none; padding: 10px 12px; border-radius: 12px; border: 1px solid var(--ad-border);
  font: inherit; color: var(--ad-text); background: var(--ad-bg);
}
.composer textarea:focus-visible { outline: 2px solid var(--ad-primary); outline-offset: 0; }
.send { width: 42px; height: 42px; flex: none; border: 0; border-radius: 12px; background: var(--ad-primary); color: var(--ad-on-primary); display: inline-flex; align-items: center; justify-content: center; }
.send:disabled { opacity: .45; cursor: default; }
.branding { padding: 4px 0 8px; text-align: center; font-size: 11px; color: var(--ad-muted); background: var(--ad-bg); }
.branding a { color: inherit; }

.handoff { padding: 8px 12px 0; border-top: 1px solid var(--ad-border); background: var(--ad-bg); font-size: 13px; }
.handoff .note { margin: 0 0 2px; color: var(--ad-muted); }
.handoff .note strong { color: var(--ad-text); }
.ask-person, .starter { border: 1px solid var(--ad-border); border-radius: 999px; background: var(--ad-bg); color: var(--ad-text); padding: 4px 12px; font-size: 13px; }
.ask-person:hover, .starter:hover { border-color: var(--ad-primary); }
.starters { display: flex; flex-wrap: wrap; gap: 6px; margin: 0; padding: 0; list-style: none; }
.author { display: flex; align-items: center; gap: 6px; margin-bottom: 4px; font-size: 12px; font-weight: 650; }
.avatar { width: 24px; height: 24px; border-radius: 50%; display: inline-flex; align-items: center; justify-content: center; background: var(--ad-primary); color: var(--ad-on-primary); font-size: 11px; }
.cite { display: inline-block; min-width: 16px; padding: 0 4px; margin: 0 1px; border-radius: 6px; font-size: 11px; line-height: 16px; text-align: center; vertical-align: super; text-decoration: none !important; background: var(--ad-bg); border: 1px solid var(--ad-border); }
.sources .num { font-weight: 700; }

.history-item { display: block; width: 100%; text-align: left; padding: 10px 12px; border-radius: 10px; border: 1px solid var(--ad-border); background: var(--ad-bg); }
.history-item:hover { border-color: var(--ad-primary); }
.history-item .preview { display: block; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.history-item .when { display: block; font-size: 12px; color: var(--ad-muted); }

@media (max-width: 480px) {
  .panel, .left .panel { inset: 0; width: 100%; height: 100%; max-height: none; border-radius: 0; border: 0; }
  .open .launcher { display: none; }
  .launcher, .left .launcher { bottom: 16px; }
  .composer textarea { font-size: 16px; }
}
@media (prefers-reduced-motion: reduce) {
  *, *::before, *::after { animation: none !important; transition: none !important; scroll-behavior: auto !important; }
}
`;
