// The playground page: HTML and CSS, served by the bridge (nothing from outside the machine).
// The script is page-script.ts; its libraries come from /playground/vendor/ (vendor.ts). Names for
// tests and assistive tools are fixed by CONTRACT.md §7. Under 700 px the conversation list is a
// drawer behind a "Show conversations" button, so the messages keep the whole width.

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>assistant-bridge playground</title>
<link rel="stylesheet" href="/playground/app.css">
<script type="module" src="/playground/app.js"></script>
<link rel="modulepreload" href="/playground/vendor/marked.esm.js">
<link rel="modulepreload" href="/playground/vendor/purify.es.mjs">
</head>
<body>
<div id="backdrop" hidden></div>
<aside id="sidebar">
  <div class="side-head"><h1>Playground</h1>
  <button type="button" id="close-menu" class="narrow-only" aria-label="Hide conversations">&times;</button></div>
  <button type="button" id="new" aria-label="New conversation">+ New conversation</button>
  <nav aria-label="Conversations"><ul id="conversations"></ul></nav>
  <p class="hint">Replies arrive here edit by edit, as Slack or Discord would get them.
  Try <code>[long 6000]</code> or <code>[delay 200]</code> with the built-in emulator.</p>
</aside>
<main>
  <header>
    <button type="button" id="menu" class="narrow-only" aria-label="Show conversations" aria-controls="sidebar" aria-expanded="false">&#9776;</button>
    <span id="title"></span>
    <button type="button" id="reset" aria-label="Reset conversation">Reset</button>
  </header>
  <p id="connection" role="status" hidden></p>
  <section id="log" aria-live="polite"></section>
  <form id="composer">
    <textarea id="message" aria-label="Message" rows="3" placeholder="Write a message (Enter sends, Shift+Enter a new line)"></textarea>
    <button type="submit" id="send" aria-label="Send">Send</button>
  </form>
  <p id="status" role="status"></p>
</main>
</body>
</html>
`;

export const PAGE_CSS = `:root { color-scheme: light dark; font-family: system-ui, sans-serif; }
*, *::before, *::after { box-sizing: border-box; }
body { margin: 0; display: flex; height: 100vh; height: 100dvh; overflow: hidden; background: Canvas; color: CanvasText; }
button { font: inherit; cursor: pointer; }
aside { flex: 0 0 16rem; width: 16rem; padding: 1rem; border-right: 1px solid #8884; overflow-y: auto; background: Canvas; }
.side-head { display: flex; align-items: center; justify-content: space-between; gap: .5rem; margin-bottom: 1rem; }
aside h1 { font-size: 1.1rem; margin: 0; }
aside ul { list-style: none; padding: 0; }
aside li button { width: 100%; text-align: left; background: none; border: 0; padding: .4rem; border-radius: 4px; color: inherit;
  overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
aside li button[aria-current="true"] { background: #8883; font-weight: 600; }
.hint { font-size: .8rem; opacity: .7; }
main { flex: 1 1 auto; display: flex; flex-direction: column; min-width: 0; }
main header { display: flex; align-items: center; gap: .5rem; padding: .5rem 1rem; border-bottom: 1px solid #8884; }
#title { flex: 1 1 auto; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
#connection { margin: 0; padding: .4rem 1rem; background: #f59e0b33; font-size: .9rem; }
#log { flex: 1 1 auto; overflow-y: auto; overflow-x: hidden; padding: 1rem; }
.msg { max-width: min(48rem, 100%); margin: 0 0 1rem; padding: .6rem .8rem; border-radius: 8px; overflow-wrap: anywhere; }
.msg.user { background: #3b82f622; margin-left: auto; width: fit-content; }
.msg.user .text { white-space: pre-wrap; }
.msg.user[data-state="sending"] { opacity: .7; }
.msg.user[data-state="unsent"] { border: 2px solid #ef4444; }
.msg.assistant { background: #8881; }
.msg[data-state="streaming"] { border-left: 3px solid #3b82f6; }
.msg[data-state="stopped"], .msg[data-state="interrupted"] { border-left: 3px solid #f59e0b; }
.msg[data-state="error"] { border-left: 3px solid #ef4444; }
.msg .body > :first-child { margin-top: 0; }
.msg .body > :last-child { margin-bottom: 0; }
.msg p { margin: .4rem 0; }
.msg ul, .msg ol { padding-left: 1.5rem; }
.msg pre { overflow-x: auto; max-width: 100%; background: #8882; padding: .5rem; border-radius: 4px; overflow-wrap: normal; }
.msg code { font-family: ui-monospace, monospace; }
.msg table { display: block; max-width: 100%; overflow-x: auto; border-collapse: collapse; margin: .4rem 0; }
.msg th, .msg td { border: 1px solid #8886; padding: .25rem .5rem; overflow-wrap: normal; }
.msg blockquote { margin: .4rem 0; padding-left: .8rem; border-left: 3px solid #8886; }
.msg a { color: #2563eb; }
.badge { font-size: .75rem; font-weight: 600; text-transform: uppercase; letter-spacing: .03em; }
.badge:empty { display: none; }
.msg[data-state="error"] .badge, .note { color: #dc2626; }
.msg[data-state="stopped"] .badge, .msg[data-state="interrupted"] .badge { color: #b45309; }
.controls { margin-top: .4rem; display: flex; flex-wrap: wrap; align-items: center; gap: .4rem; }
.controls:empty { display: none; }
.controls button[aria-pressed="true"] { outline: 2px solid #3b82f6; }
.note { margin-top: .4rem; font-size: .85rem; display: flex; flex-wrap: wrap; align-items: center; gap: .4rem; }
.notice { margin: 0 0 1rem; padding: .6rem .8rem; border: 1px solid #f59e0b; background: #f59e0b22; border-radius: 8px; }
.notice button { margin-top: .4rem; display: block; }
form { display: flex; gap: .5rem; padding: .75rem 1rem; border-top: 1px solid #8884; }
textarea { flex: 1 1 auto; min-width: 0; width: 100%; font: inherit; resize: vertical; }
#status { margin: 0 1rem .5rem; font-size: .8rem; opacity: .8; min-height: 1em; }
.narrow-only { display: none; }
@media (max-width: 700px) {
  .narrow-only { display: inline-block; }
  aside { position: fixed; top: 0; bottom: 0; left: 0; z-index: 10; width: min(18rem, 85vw); transform: translateX(-100%);
    visibility: hidden; transition: transform .15s, visibility .15s; }
  body.menu-open aside { transform: none; visibility: visible; }
  #backdrop { position: fixed; inset: 0; z-index: 5; background: #0006; }
  main header { padding: .4rem .5rem; }
  #log { padding: .6rem .5rem; }
  .msg { padding: .5rem .6rem; }
  form { padding: .5rem; }
  #status { margin: 0 .5rem .4rem; }
}
`;
