// The playground page: HTML and CSS, served by the bridge (nothing from outside the machine).
// The script is page-script.ts (with page-replies.ts and page-highlight.ts); its libraries come
// from /playground/vendor/ (vendor.ts). Names for tests and assistive tools are fixed by
// CONTRACT.md §7. Under 700 px the conversation list is a drawer behind a "Show conversations"
// button, so the messages keep the whole width. Icons are inline SVG (no emoji font needed);
// colours follow the system's light or dark scheme.

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>assistant-bridge playground</title>
<link rel="icon" href="/playground/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/playground/app.css">
<script type="module" src="/playground/app.js"></script>
<link rel="modulepreload" href="/playground/vendor/marked.esm.js">
<link rel="modulepreload" href="/playground/vendor/purify.es.mjs">
</head>
<body>
<div id="backdrop" hidden></div>
<aside id="sidebar">
  <div class="side-head"><h1><img src="/playground/icon.svg" alt="" width="22" height="22"> Playground</h1>
  <button type="button" id="close-menu" class="icon-btn narrow-only" aria-label="Hide conversations" data-icon="close"></button></div>
  <button type="button" id="new" class="btn btn-new" aria-label="New conversation" data-icon="plus">New conversation</button>
  <nav aria-label="Conversations"><ul id="conversations"></ul></nav>
  <p class="hint" id="emulator-hint" hidden>The built-in emulator answers: replies echo what you write.
  Try <code>[long 6000]</code>, <code>[table 5]</code> or <code>[delay 200]</code> in a message (see docs/emulator.md).</p>
</aside>
<main>
  <header>
    <button type="button" id="menu" class="icon-btn narrow-only" aria-label="Show conversations" aria-controls="sidebar" aria-expanded="false" data-icon="menu"></button>
    <span id="title"></span>
    <label id="bot-pick" class="bot-pick" hidden>Bot <select id="bot" aria-label="Bot"></select></label>
    <button type="button" id="reset" class="btn btn-ghost" aria-label="Reset conversation" data-icon="reset">Reset</button>
  </header>
  <p id="connection" role="status" hidden></p>
  <section id="log" aria-live="polite"></section>
  <section id="welcome" hidden aria-labelledby="welcome-title">
    <img src="/playground/icon.svg" alt="" width="48" height="48">
    <h2 id="welcome-title">What can I help with?</h2>
    <p id="welcome-text">Replies arrive here edit by edit, as Slack or Discord would get them.</p>
    <div id="prompts" role="list" aria-label="Suggested prompts"></div>
  </section>
  <form id="composer">
    <div class="composer-box">
      <textarea id="message" aria-label="Message" rows="1" placeholder="Message the assistant"></textarea>
      <button type="submit" id="send" class="send-btn" aria-label="Send" data-icon="send"></button>
    </div>
    <p class="composer-hint">Enter sends, Shift+Enter adds a line, Esc stops a reply</p>
  </form>
  <p id="status" role="status"></p>
</main>
</body>
</html>
`;

export const PAGE_CSS = `:root {
  color-scheme: light dark;
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
  --bg: #ffffff; --bg-side: #f7f7f8; --bg-soft: #f0f0f2; --bg-user: #ececf1; --bg-code: #f6f8fa; --code-head: #e9ebef;
  --fg: #1f2328; --fg-soft: #5d6470; --border: #d9dbe0; --accent: #10a37f; --accent-fg: #ffffff;
  --focus: #2563eb; --link: #1d64d8; --warn: #b45309; --warn-bg: #fef3c7; --err: #c62828; --err-bg: #fde8e8;
  --tok-k: #8839c6; --tok-s: #0a7a36; --tok-c: #6e7781; --tok-n: #b35900; --tok-f: #1d5fc7;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #212121; --bg-side: #171717; --bg-soft: #2c2c2c; --bg-user: #303030; --bg-code: #0d0d0d; --code-head: #2f2f2f;
    --fg: #ececec; --fg-soft: #a3a3a3; --border: #3c3c3c; --accent: #19c37d; --accent-fg: #0b0b0b;
    --focus: #60a5fa; --link: #7ab7ff; --warn: #fbbf24; --warn-bg: #422d06; --err: #f87171; --err-bg: #3f1518;
    --tok-k: #d2a8ff; --tok-s: #7ee787; --tok-c: #8b949e; --tok-n: #ffa657; --tok-f: #79c0ff;
  }
}
*, *::before, *::after { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; display: flex; height: 100vh; height: 100dvh; overflow: hidden; background: var(--bg); color: var(--fg); font-size: 15px; line-height: 1.55; }
button { font: inherit; color: inherit; cursor: pointer; }
button:focus-visible, textarea:focus-visible, a:focus-visible { outline: 2px solid var(--focus); outline-offset: 2px; }
button:disabled { cursor: default; opacity: .5; }
svg.icon { width: 18px; height: 18px; flex: none; fill: none; stroke: currentColor; stroke-width: 2; stroke-linecap: round; stroke-linejoin: round; }
.btn { display: inline-flex; align-items: center; gap: .4rem; border: 1px solid var(--border); background: var(--bg); border-radius: 999px; padding: .35rem .8rem; font-size: .875rem; line-height: 1.2; }
.btn:hover { background: var(--bg-soft); }
.btn-ghost { border-color: transparent; background: transparent; color: var(--fg-soft); }
.icon-btn { display: inline-flex; align-items: center; justify-content: center; width: 32px; height: 32px; padding: 0; border: 0; border-radius: 8px; background: transparent; color: var(--fg-soft); }
.icon-btn:hover { background: var(--bg-soft); color: var(--fg); }
.icon-btn[aria-pressed="true"] { color: var(--fg); background: var(--bg-soft); }
.icon-btn[aria-pressed="true"] svg { fill: currentColor; fill-opacity: .25; }
aside { flex: 0 0 16.5rem; width: 16.5rem; padding: .75rem; border-right: 1px solid var(--border); overflow-y: auto; background: var(--bg-side); display: flex; flex-direction: column; }
.side-head { display: flex; align-items: center; justify-content: space-between; gap: .5rem; margin: .25rem .25rem 1rem; }
aside h1 { font-size: 1.05rem; margin: 0; display: flex; align-items: center; gap: .5rem; }
.btn-new { width: 100%; justify-content: flex-start; border-radius: 10px; padding: .55rem .75rem; background: var(--bg); }
aside ul { list-style: none; padding: 0; margin: .75rem 0; }
aside li button { width: 100%; text-align: left; background: none; border: 0; padding: .45rem .6rem; border-radius: 8px;
  overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-size: .9rem; }
aside li button:hover { background: var(--bg-soft); }
aside li button[aria-current="true"] { background: var(--bg-user); font-weight: 600; }
.hint { margin-top: auto; font-size: .8rem; color: var(--fg-soft); padding: .5rem; border-top: 1px solid var(--border); }
.hint code { font-size: .75rem; }
main { flex: 1 1 auto; display: flex; flex-direction: column; min-width: 0; }
main header { display: flex; align-items: center; gap: .5rem; padding: .5rem 1rem; min-height: 52px; border-bottom: 1px solid var(--border); }
#title { flex: 1 1 auto; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-weight: 600; }
#connection { margin: 0; padding: .45rem 1rem; background: var(--warn-bg); color: var(--fg); font-size: .875rem; display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
#log { flex: 1 1 auto; overflow-y: auto; overflow-x: hidden; padding: 1.5rem max(1rem, calc((100% - 48rem) / 2)); }
body.empty #log { display: none; }
#welcome { flex: 1 1 auto; display: flex; flex-direction: column; align-items: center; justify-content: center; gap: .5rem; padding: 1rem; text-align: center; overflow-y: auto; }
#welcome[hidden] { display: none; }
#welcome h2 { margin: .25rem 0 0; font-size: 1.6rem; font-weight: 600; }
#welcome p { margin: 0 0 .75rem; color: var(--fg-soft); max-width: 32rem; }
#prompts { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: .6rem; width: min(40rem, 100%); }
.prompt { min-width: 0; text-align: left; border: 1px solid var(--border); background: var(--bg); border-radius: 14px; padding: .7rem .9rem; display: flex; flex-direction: column; gap: .15rem; }
.prompt:hover { background: var(--bg-soft); }
.prompt strong { font-size: .9rem; }
.prompt span { font-size: .8rem; color: var(--fg-soft); overflow: hidden; text-overflow: ellipsis; white-space: nowrap; max-width: 100%; }
.msg { max-width: 100%; margin: 0 0 1.5rem; overflow-wrap: anywhere; }
.msg.user { display: flex; flex-direction: column; align-items: flex-end; margin-bottom: .75rem; }
.msg.user .controls { margin: .1rem -6px 0 0; }
.msg.user .icon-btn { width: 28px; height: 28px; }
.msg.user .text { white-space: pre-wrap; background: var(--bg-user); padding: .6rem 1rem; border-radius: 18px; max-width: min(36rem, 85%); }
.msg.user[data-state="sending"] .text { opacity: .65; }
.msg.user[data-state="unsent"] .text { outline: 2px solid var(--err); }
.msg.user .controls { opacity: 0; transition: opacity .15s; }
.msg.user:hover .controls, .msg.user:focus-within .controls { opacity: 1; }
.msg.assistant { display: grid; grid-template-columns: 28px minmax(0, 1fr); column-gap: .75rem; }
.msg.assistant::before { content: ""; width: 28px; height: 28px; border-radius: 50%; grid-row: 1 / span 6; background: var(--accent) url("/playground/icon.svg") center / 28px 28px no-repeat; }
.msg.assistant > * { grid-column: 2; min-width: 0; }
.msg.assistant[data-notice] .body { color: var(--warn); }
.msg[data-state="error"] .body { color: var(--err); }
.msg .body > :first-child { margin-top: 0; }
.msg .body > :last-child { margin-bottom: 0; }
.msg p { margin: .5rem 0; }
.msg ul, .msg ol { padding-left: 1.5rem; }
.msg h1, .msg h2, .msg h3 { line-height: 1.3; margin: 1rem 0 .5rem; }
.msg code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .875em; }
.msg :not(pre) > code { background: var(--bg-soft); padding: .1em .35em; border-radius: 5px; }
.code-block { margin: .75rem 0; border-radius: 10px; overflow: hidden; background: var(--bg-code); border: 1px solid var(--border); }
.code-head { display: flex; align-items: center; justify-content: space-between; padding: .2rem .3rem .2rem .8rem; background: var(--code-head); font-size: .75rem; color: var(--fg-soft); }
.code-head::before { content: attr(data-lang); }
.code-head .icon-btn { width: auto; height: 26px; padding: 0 .5rem; gap: .3rem; font-size: .75rem; }
.code-head .icon-btn::after { content: "Copy"; }
.code-head .icon-btn[data-copied]::after { content: "Copied"; }
.msg pre { margin: 0; overflow-x: auto; max-width: 100%; padding: .8rem 1rem; overflow-wrap: normal; line-height: 1.45; }
.tok-k { color: var(--tok-k); } .tok-s { color: var(--tok-s); } .tok-c { color: var(--tok-c); font-style: italic; }
.tok-n { color: var(--tok-n); } .tok-f { color: var(--tok-f); }
.msg table { display: block; max-width: 100%; overflow-x: auto; border-collapse: collapse; margin: .6rem 0; }
.msg th, .msg td { border: 1px solid var(--border); padding: .3rem .6rem; overflow-wrap: normal; }
.msg th { background: var(--bg-soft); }
.msg blockquote { margin: .5rem 0; padding-left: .8rem; border-left: 3px solid var(--border); color: var(--fg-soft); }
.msg a { color: var(--link); }
.badge { justify-self: start; margin-top: .4rem; font-size: .75rem; font-weight: 600; padding: .1rem .55rem; border-radius: 999px; }
.badge:empty { display: none; }
.msg[data-state="error"] .badge { color: var(--err); background: var(--err-bg); }
.msg[data-state="stopped"] .badge, .msg[data-state="interrupted"] .badge { color: var(--warn); background: var(--warn-bg); }
.controls { margin-top: .3rem; display: flex; flex-wrap: wrap; align-items: center; gap: .15rem; margin-left: -6px; }
.controls:empty { display: none; }
.stop-btn { display: inline-flex; align-items: center; gap: .35rem; border: 1px solid var(--border); background: var(--bg); border-radius: 999px; padding: .25rem .75rem .25rem .55rem; font-size: .8rem; margin-left: 6px; }
.stop-btn:hover { background: var(--bg-soft); }
.stop-btn svg { width: 14px; height: 14px; fill: currentColor; stroke: none; }
.retry-btn { margin-left: 6px; }
.note { margin-top: .4rem; font-size: .85rem; color: var(--err); display: flex; flex-wrap: wrap; align-items: center; gap: .4rem; }
.notice { margin: 0 0 1rem; padding: .7rem .9rem; border: 1px solid var(--warn); background: var(--warn-bg); border-radius: 12px; }
.notice button { margin-top: .5rem; display: flex; }
.typing { display: inline-flex; gap: 4px; align-items: center; height: 28px; }
.typing i { width: 7px; height: 7px; border-radius: 50%; background: var(--fg-soft); animation: blink 1.2s infinite ease-in-out; }
.typing i:nth-child(2) { animation-delay: .2s; } .typing i:nth-child(3) { animation-delay: .4s; }
@keyframes blink { 0%, 80%, 100% { opacity: .25; transform: scale(.8); } 40% { opacity: 1; transform: scale(1); } }
.step-line { display: flex; align-items: center; gap: .5rem; font-size: .875rem; color: var(--fg-soft); margin-top: .3rem; }
.step-line:empty { display: none; }
.step-line::before { content: ""; width: 12px; height: 12px; border: 2px solid var(--border); border-top-color: var(--accent); border-radius: 50%; animation: spin .8s linear infinite; flex: none; }
@keyframes spin { to { transform: rotate(360deg); } }
@media (prefers-reduced-motion: reduce) { .typing i, .step-line::before { animation: none; } }
.sources, .files, .steps { margin-top: .6rem; font-size: .85rem; }
.steps summary { cursor: pointer; color: var(--fg-soft); width: max-content; }
.steps ol { margin: .25rem 0 0; padding-left: 1.4rem; color: var(--fg-soft); }
.steps li[data-step="failed"] { color: var(--err); }
.sources h3, .files h3 { margin: 0 0 .25rem; font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: var(--fg-soft); }
.sources ol { margin: 0; padding-left: 1.4rem; }
.files ul { margin: 0; padding-left: 1.2rem; }
form { padding: .5rem max(1rem, calc((100% - 48rem) / 2)) .25rem; }
.composer-box { display: flex; align-items: flex-end; gap: .5rem; border: 1px solid var(--border); background: var(--bg); border-radius: 24px; padding: .45rem .45rem .45rem 1rem; box-shadow: 0 1px 6px #0000000f; }
.composer-box:focus-within { border-color: var(--fg-soft); }
textarea { flex: 1 1 auto; min-width: 0; width: 100%; font: inherit; resize: none; border: 0; outline: none; background: transparent; color: inherit; padding: .35rem 0; max-height: 12rem; line-height: 1.45; }
textarea:focus-visible { outline: none; }
.send-btn { flex: none; display: inline-flex; align-items: center; justify-content: center; width: 36px; height: 36px; border-radius: 50%; border: 0; background: var(--fg); color: var(--bg); }
.send-btn:hover { opacity: .85; }
.composer-hint { margin: .3rem 0 0; text-align: center; font-size: .75rem; color: var(--fg-soft); }
#status { margin: 0 1rem .4rem; font-size: .8rem; color: var(--fg-soft); min-height: 1em; text-align: center; }
.bot-pick { display: inline-flex; align-items: center; gap: .35rem; font-size: .8rem; color: var(--fg-soft); }
.bot-pick select { font: inherit; font-size: .875rem; color: var(--fg); background: var(--bg); border: 1px solid var(--border); border-radius: 8px; padding: .25rem .4rem; max-width: 10rem; }
.narrow-only { display: none; }
.offscreen { position: fixed; left: -9999px; top: 0; }
@media (max-width: 700px) {
  .narrow-only { display: inline-flex; }
  aside { position: fixed; top: 0; bottom: 0; left: 0; z-index: 10; width: min(18rem, 85vw); transform: translateX(-100%);
    visibility: hidden; transition: transform .15s, visibility .15s; }
  body.menu-open aside { transform: none; visibility: visible; }
  #backdrop { position: fixed; inset: 0; z-index: 5; background: #0006; }
  main header { padding: .4rem .5rem; }
  #log { padding: 1rem .75rem; }
  .msg.assistant { grid-template-columns: minmax(0, 1fr); }
  .msg.assistant::before { display: none; }
  .msg.assistant > * { grid-column: 1; }
  .msg.user .text { max-width: 90%; }
  .msg.user .controls { opacity: 1; }
  form { padding: .4rem .5rem .2rem; }
  .composer-hint { display: none; }
  #prompts { grid-template-columns: minmax(0, 1fr); }
  #welcome h2 { font-size: 1.35rem; }
  #status { margin: 0 .5rem .3rem; }
}
`;
