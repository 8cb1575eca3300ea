// The playground page: HTML and CSS, served by the bridge (nothing from outside the machine).
// The script is page-script.ts. Names for tests and assistive tools are fixed by CONTRACT.md §7.

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>assistant-bridge playground</title>
<link rel="stylesheet" href="/playground/app.css">
<script type="module" src="/playground/app.js"></script>
</head>
<body>
<aside>
  <h1>Playground</h1>
  <button type="button" id="new" aria-label="New conversation">+ New conversation</button>
  <nav aria-label="Conversations"><ul id="conversations"></ul></nav>
  <p class="hint">Replies arrive here edit by edit, as Slack or Discord would get them.
  Try <code>[long 6000]</code> or <code>[delay 200]</code> with the built-in emulator.</p>
</aside>
<main>
  <header><span id="title"></span><button type="button" id="reset" aria-label="Reset conversation">Reset</button></header>
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
body { margin: 0; display: flex; height: 100vh; }
aside { width: 16rem; padding: 1rem; border-right: 1px solid #8884; overflow-y: auto; }
aside h1 { font-size: 1.1rem; margin: 0 0 1rem; }
aside ul { list-style: none; padding: 0; }
aside li button { width: 100%; text-align: left; background: none; border: 0; padding: .4rem; cursor: pointer; border-radius: 4px; }
aside li button[aria-current="true"] { background: #8883; font-weight: 600; }
.hint { font-size: .8rem; opacity: .7; }
main { flex: 1; display: flex; flex-direction: column; min-width: 0; }
main header { display: flex; justify-content: space-between; padding: .5rem 1rem; border-bottom: 1px solid #8884; }
#log { flex: 1; overflow-y: auto; padding: 1rem; }
.msg { max-width: 48rem; margin: 0 0 1rem; padding: .6rem .8rem; border-radius: 8px; overflow-wrap: anywhere; }
.msg.user { background: #3b82f622; margin-left: auto; white-space: pre-wrap; }
.msg.assistant { background: #8881; }
.msg[data-state="streaming"] { border-left: 3px solid #3b82f6; }
.msg[data-state="stopped"], .msg[data-state="interrupted"] { border-left: 3px solid #f59e0b; }
.msg[data-state="error"] { border-left: 3px solid #ef4444; }
.msg p { margin: .3rem 0; }
.msg pre { overflow-x: auto; background: #8882; padding: .5rem; border-radius: 4px; }
.msg code { font-family: ui-monospace, monospace; }
.controls { margin-top: .4rem; display: flex; gap: .4rem; }
.controls button[aria-pressed="true"] { outline: 2px solid #3b82f6; }
form { display: flex; gap: .5rem; padding: 1rem; border-top: 1px solid #8884; }
textarea { flex: 1; font: inherit; }
#status { margin: 0 1rem .5rem; font-size: .8rem; opacity: .7; min-height: 1em; }
`;
