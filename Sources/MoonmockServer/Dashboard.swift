/// The dashboard at `GET /__moonmock/`: one self-contained page (no framework, no build step,
/// nothing fetched but the admin API) that follows the server through `GET /__moonmock/events`.
/// Its parts live in `Dashboard+*.swift`: the style, the markup, and the script in three pieces
/// (the core and live feed, the request list and inspector, the rules and state panels).
enum Dashboard {
    static let html = "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        + "<title>Moonmock</title>\n<link rel=\"icon\" href=\"data:,\">\n<style>\n" + style + "</style>\n</head>\n"
        + markup + "<script>\n'use strict';\n" + core + requests + panels + "start();\n</script>\n</body>\n</html>\n"

    static let markup = #"""
<body>
<header>
  <h1>Moonmock</h1>
  <span id="script-status" aria-live="polite">loading…</span>
  <span id="live" class="live" title="how the page follows the server">connecting</span>
  <span class="grow"></span>
  <button id="reload" title="read the script again">Reload script</button>
  <span id="reload-outcome" role="status"></span>
  <button id="reset" title="runtime rules, journal, state and variants back to the start">Reset</button>
  <button id="signout" hidden>Sign out</button>
</header>
<div id="banner" role="alert" hidden></div>
<div id="toast" role="status" hidden></div>
<form id="login" hidden>
  <p>This server's admin API needs its token (<code>--admin-token</code>). Signed in, this tab stays signed in.</p>
  <input id="token" type="password" autocomplete="current-password" placeholder="admin token" aria-label="admin token">
  <button type="submit">Sign in</button> <span id="login-error" class="bad"></span>
</form>
<main id="app" hidden>
<nav role="tablist" aria-label="views">
  <button role="tab" id="tab-requests" aria-controls="view-requests" aria-selected="true">Requests <kbd>1</kbd></button>
  <button role="tab" id="tab-rules" aria-controls="view-rules" aria-selected="false">Rules <kbd>2</kbd></button>
  <button role="tab" id="tab-state" aria-controls="view-state" aria-selected="false">State <kbd>3</kbd></button>
  <span class="grow"></span>
  <span class="keys">keys: <kbd>/</kbd> search · <kbd>j</kbd>/<kbd>k</kbd> or arrows move · <kbd>p</kbd> pause · <kbd>Esc</kbd> close</span>
</nav>
<section id="view-requests" role="tabpanel" aria-labelledby="tab-requests">
  <div class="filters">
    <select id="f-method" aria-label="method"><option value="">any method</option></select>
    <select id="f-status" aria-label="status class">
      <option value="">any status</option><option value="2">2xx</option><option value="3">3xx</option>
      <option value="4">4xx</option><option value="5">5xx</option><option value="fault">faults</option>
    </select>
    <select id="f-rule" aria-label="rule"><option value="">any rule</option></select>
    <select id="f-match" aria-label="matched or not">
      <option value="">matched or not</option><option value="matched">matched</option><option value="unmatched">unmatched</option>
    </select>
    <input id="f-text" type="search" placeholder="search URL and body" aria-label="search URL and body">
    <button id="pause" aria-pressed="false">Pause</button>
    <button id="clear" title="empty the server's journal">Clear</button>
    <span id="count" aria-live="polite"></span>
  </div>
  <div class="split">
    <div id="list" tabindex="0" role="listbox" aria-label="requests, newest first">
      <div id="spacer"><div id="rows"></div></div>
      <p id="empty" class="hint">No requests yet. Send one to this server and it shows here at once.</p>
    </div>
    <aside id="inspector" aria-label="request inspector" tabindex="-1"><p class="hint">Select a request to see it whole.</p></aside>
  </div>
</section>
<section id="view-rules" role="tabpanel" aria-labelledby="tab-rules" hidden>
  <h2>Rules <small>in the order they are tried</small></h2>
  <table><thead><tr><th>rule</th><th>where</th><th>matches</th><th>hits</th><th>conditions</th><th></th></tr></thead>
    <tbody id="rules"></tbody></table>
  <h2>Variants and stub endpoints</h2>
  <table><thead><tr><th>rule or endpoint</th><th>answers with</th></tr></thead><tbody id="variants"></tbody></table>
  <div id="bundles"></div>
  <h2>Add a runtime rule</h2>
  <form id="add-rule" class="grid">
    <label>method <select id="r-method"><option>GET</option><option>POST</option><option>PUT</option><option>PATCH</option>
      <option>DELETE</option><option value="">any</option></select></label>
    <label>path <input id="r-path" required placeholder="/users/:id"></label>
    <label>status <input id="r-status" type="number" min="100" max="599" value="200"></label>
    <label>delay (ms) <input id="r-delay" type="number" min="0" placeholder="0"></label>
    <label class="wide">JSON body <textarea id="r-json" rows="4" placeholder='{"ok": true}'></textarea></label>
    <div class="wide"><button type="submit">Add rule</button> <span id="r-outcome" role="status"></span></div>
  </form>
</section>
<section id="view-state" role="tabpanel" aria-labelledby="tab-state" hidden>
  <h2>mock.state</h2>
  <table><thead><tr><th>key</th><th>value (JSON)</th><th></th></tr></thead><tbody id="state"></tbody></table>
  <form id="add-state" class="row-form">
    <input id="s-key" required placeholder="key" aria-label="new key">
    <input id="s-value" required placeholder="value: 3, &quot;text&quot;, true" aria-label="new value">
    <button type="submit">Set</button>
    <span class="grow"></span>
    <button type="button" id="flush">Flush all</button>
    <span id="s-outcome" role="status"></span>
  </form>
</section>
</main>

"""#
}
