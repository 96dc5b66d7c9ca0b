/// The dashboard at `GET /__moonmock/`: one self-contained page that reads the admin API.
enum Dashboard {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Moonmock</title>
<link rel="icon" href="data:,">
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 2rem; color: #222; }
  h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid #ddd; vertical-align: top; }
  code { font-family: ui-monospace, monospace; }
  .miss { color: #a40; } .ok { color: #070; }
  button { margin-right: .5rem; }
</style>
</head>
<body>
<h1>Moonmock</h1>
<form id="login" hidden onsubmit="signIn(event)">
  <p>This server's admin API needs its token (<code>--admin-token</code>).</p>
  <input id="token" type="password" autocomplete="current-password" placeholder="admin token" aria-label="admin token">
  <button type="submit">Sign in</button> <span id="login-error" class="miss"></span>
</form>
<p id="health">loading…</p>
<p><button onclick="post('reload')">Reload script</button><button onclick="post('reset')">Reset</button>
<button onclick="del('requests')">Clear journal</button></p>
<h2>Variants</h2>
<table><thead><tr><th>rule</th><th>active variant</th></tr></thead><tbody id="variants"></tbody></table>
<h2>Rules</h2>
<table><thead><tr><th>rule</th><th>where</th><th>hits</th><th>conditions</th></tr></thead><tbody id="rules"></tbody></table>
<h2>Requests</h2>
<table><thead><tr><th>#</th><th>request</th><th>status</th><th>rule / closest</th></tr></thead><tbody id="requests"></tbody></table>
<script>
// Signed in, the session cookie (HttpOnly, SameSite=Strict) goes with every call.
class SignedOut extends Error {}
function checked(r) {
  if (r.status === 401) { document.getElementById('login').hidden = false; throw new SignedOut(); }
  return r;
}
const api = p => fetch('/__moonmock/' + p).then(checked).then(r => r.json());
async function signIn(event) {
  event.preventDefault();
  const r = await fetch('/__moonmock/login', { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ token: document.getElementById('token').value }) });
  if (!r.ok) { document.getElementById('login-error').textContent = 'wrong token'; return; }
  document.getElementById('login').hidden = true;
  document.getElementById('login-error').textContent = '';
  refresh();
}
const esc = s => String(s).replace(/[&<>"]/g, c => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
async function post(p) { checked(await fetch('/__moonmock/' + p, { method: 'POST' })); refresh(); }
async function del(p) { checked(await fetch('/__moonmock/' + p, { method: 'DELETE' })); refresh(); }
async function choose(rule, name) {
  await fetch('/__moonmock/variants/' + encodeURIComponent(rule),
    { method: 'PUT', body: JSON.stringify({ active: name === '' ? null : name }) });
  refresh();
}
async function refresh() {
  try { await show(); } catch (e) { if (!(e instanceof SignedOut)) throw e; }
}
async function show() {
  const [health, rules, requests, variants] = await Promise.all([api('health'), api('rules'), api('requests'), api('variants')]);
  document.getElementById('variants').innerHTML = variants.map(v =>
    `<tr><td><code>${esc(v.rule)}</code></td><td><select onchange="choose(${esc(JSON.stringify(v.rule))}, this.value)">` +
    (v.active === null ? '<option value="" selected>(none: falls through)</option>' : '') +
    v.variants.map(n => `<option${n === v.active ? ' selected' : ''}>${esc(n)}</option>`).join('') + `</select></td></tr>`).join('');
  document.getElementById('health').textContent =
    `${health.status} · ${health.rules} rules · ${health.requests} requests in the journal`;
  document.getElementById('rules').innerHTML = rules.map(r =>
    `<tr><td><code>${esc(r.id)}</code></td><td>${esc(r.location || '')}</td><td>${r.hits}${r.times ? ' / ' + r.times : ''}</td>` +
    `<td>${r.conditions.map(esc).join('<br>')}</td></tr>`).join('');
  document.getElementById('requests').innerHTML = requests.slice().reverse().map(e =>
    `<tr><td>${e.id}</td><td><code>${esc(e.method)} ${esc(e.url)}</code></td>` +
    `<td class="${e.rule ? 'ok' : 'miss'}">${e.fault ? esc(e.fault) : e.status}</td>` +
    `<td>${e.rule ? '<code>' + esc(e.rule) + '</code>' :
      (e.near_misses || []).map(m => `<code>${esc(m.rule)}</code>: ${esc(m.summary)}`).join('<br>')}</td></tr>`).join('');
}
refresh(); setInterval(refresh, 2000);
</script>
</body>
</html>
"""#
}
