const $ = id => document.getElementById(id);
const esc = s => String(s).replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
class SignedOut extends Error {}
const M = window.moonmock = {
  entries: [], byId: new Map(), shown: [], pending: [], paused: false, selected: null,
  rules: [], ruleById: new Map(), variants: [], state: {}, health: null,
  mode: 'connecting', source: null, timings: { firstRender: null, updates: [] },
};

async function call(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) { init.headers['Content-Type'] = 'application/json'; init.body = JSON.stringify(body); }
  const r = await fetch('/__moonmock/' + path, init);
  if (r.status === 401) { showLogin(); throw new SignedOut(); }
  const text = await r.text();
  let data = text;
  try { data = text ? JSON.parse(text) : null; } catch (_) { /* not JSON: keep the text */ }
  if (!r.ok && !(data && typeof data === 'object' && 'ok' in data)) {
    throw new Error((data && data.error) || (r.status + ' ' + r.statusText));
  }
  return data;
}
const get = path => call('GET', path);
// An action's failure shows as a toast; a signed-out page shows the login form instead.
const act = fn => async (...args) => {
  try { return await fn(...args); } catch (e) { if (!(e instanceof SignedOut)) toast(e.message, true); }
};
let toastTimer = 0;
function toast(text, bad) {
  const t = $('toast');
  t.textContent = text; t.className = bad ? 'bad' : ''; t.hidden = false;
  clearTimeout(toastTimer); toastTimer = setTimeout(() => { t.hidden = true; }, bad ? 8000 : 3000);
}

function showLogin() {
  $('login').hidden = false; $('app').hidden = true;
  if (M.source) { M.source.close(); M.source = null; }
  setLive('off', 'signed out');
  $('token').focus();
}
$('login').addEventListener('submit', async event => {
  event.preventDefault();
  const r = await fetch('/__moonmock/login', { method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ token: $('token').value }) });
  if (!r.ok) { $('login-error').textContent = 'wrong token'; return; }
  $('login-error').textContent = ''; $('token').value = '';
  $('login').hidden = true; $('signout').hidden = false;
  start();
});
$('signout').addEventListener('click', act(async () => {
  await fetch('/__moonmock/logout', { method: 'POST' });
  $('signout').hidden = true;
  showLogin();
}));

async function start() {
  try {
    const t0 = performance.now();
    const [health, requests] = await Promise.all([get('health'), get('requests')]);
    $('login').hidden = true; $('app').hidden = false;
    $('signout').hidden = !health.token_required;
    showHealth(health);
    await Promise.all([loadRules(), loadVariants(), loadState(), loadChaos()]);
    M.timings.load = performance.now() - t0;
    setEntries(requests, true);
    follow();
  } catch (e) { if (!(e instanceof SignedOut)) { toast(e.message, true); setLive('off', 'server unreachable'); setTimeout(start, 3000); } }
}

function setLive(mode, text) {
  M.mode = mode;
  const l = $('live');
  l.className = 'live ' + mode; l.textContent = text;
}

// Live: the events stream. It reconnects by itself after a network error; when the server
// refuses it (or the browser has no EventSource) the page polls instead.
function follow() {
  if (M.source) M.source.close();
  if (!window.EventSource || M.forcePolling) { poll(); return; }
  const es = M.source = new EventSource('/__moonmock/events');
  const on = (name, fn) => es.addEventListener(name, e => fn(e.data ? JSON.parse(e.data) : {}));
  on('hello', () => { setLive('on', 'live'); catchUp(); });
  on('request', e => { addEntry(e); hitsChanged(); });
  on('reload', status => { showScript(status); refreshSoon('health'); });
  on('switch', () => refreshSoon('variants'));
  on('state', () => refreshSoon('state'));
  on('rules', () => refreshSoon('rules'));
  on('cleared', () => setEntries([], false));
  on('dropped', () => catchUp());
  es.onerror = () => {
    if (es.readyState === EventSource.CLOSED) {
      // Refused: signed out (the call shows the login form) or no stream here: poll.
      get('health').then(() => { if (M.source === es) poll(); }, () => {});
    } else setLive('off', 'reconnecting…');
  };
}
let pollTimer = 0;
function poll() {
  M.source = null;
  setLive('polling', 'polling every 2 s');
  clearTimeout(pollTimer);
  const tick = async () => {
    try {
      await catchUp();
      showHealth(await get('health'));
      await Promise.all([loadRules(), loadVariants(), loadState(), loadChaos()]);
      setLive('polling', 'polling every 2 s');
    } catch (e) { if (e instanceof SignedOut) return; setLive('off', 'server unreachable'); }
    pollTimer = setTimeout(tick, 2000);
  };
  pollTimer = setTimeout(tick, 2000);
}
// Entries recorded while the page was not listening (before the stream, or dropped).
async function catchUp() {
  const last = M.entries.length ? M.entries[M.entries.length - 1].id : 0;
  const missed = await get(last ? 'requests?since=' + last : 'requests');
  if (!last && missed.length && !M.entries.length) { setEntries(missed, false); return; }
  for (const e of missed) addEntry(e);
}

// Panels re-read after an event, at most every 250 ms each.
const soon = {};
function refreshSoon(what) {
  if (soon[what]) return;
  soon[what] = setTimeout(act(async () => {
    soon[what] = 0;
    if (what === 'health') showHealth(await get('health'));
    if (what === 'rules') await loadRules();
    if (what === 'variants') await Promise.all([loadVariants(), loadChaos()]);
    if (what === 'state') await loadState();
  }), 250);
}

function showHealth(health) {
  M.health = health;
  showScript(health.script, health.reload_error);
}
const clock = t => new Date(t * 1000).toLocaleTimeString([], { hour12: false });
function showScript(script, error) {
  if (!script) { $('script-status').textContent = 'no script (rules from the admin API or --rules)'; return; }
  const failed = error || script.last_error;
  $('script-status').innerHTML = `<code>${esc(script.file)}</code> · generation <b id="generation">${script.generation}</b>` +
    ` · loaded ${esc(clock(script.loaded_at))}` + (script.load_ms != null ? ` in ${script.load_ms} ms` : '') +
    ` · ${script.rules} rules` + (script.watching ? ' · watching for edits' : '');
  const b = $('banner');
  if (failed) {
    b.innerHTML = `<strong>The last reload failed; still serving generation ${script.generation}.</strong> Fix the script and save (or press Reload).\n${esc(failed)}`;
    b.hidden = false;
  } else b.hidden = true;
}

$('reload').addEventListener('click', act(async () => {
  const out = $('reload-outcome');
  out.textContent = 'reloading…'; out.className = '';
  const r = await call('POST', 'reload');
  out.textContent = r.ok ? `reloaded: ${r.rules} rules` : `reload failed: ${r.message}`;
  out.className = r.ok ? 'good' : 'bad';
  showHealth(await get('health'));
}));
$('reset').addEventListener('click', act(async () => {
  await call('POST', 'reset');
  toast('reset: runtime rules, journal, state and variants are back to the start');
}));

// Tabs and keys.
const tabs = ['requests', 'rules', 'state'];
function showTab(name) {
  for (const t of tabs) {
    $('tab-' + t).setAttribute('aria-selected', String(t === name));
    $('view-' + t).hidden = t !== name;
  }
  if (name === 'requests') render();
  if (name === 'rules' && M.hitsStale) { M.hitsStale = false; refreshSoon('rules'); }
}
// Hit counts and budgets move with every request: re-read them while the Rules view shows.
function hitsChanged() {
  if ($('view-rules').hidden) M.hitsStale = true; else refreshSoon('rules');
}
for (const t of tabs) $('tab-' + t).addEventListener('click', () => showTab(t));
document.addEventListener('keydown', e => {
  const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(e.target.tagName);
  if (e.key === 'Escape') {
    if (typing) { e.target.blur(); return; }
    select(null); $('list').focus(); return;
  }
  if (typing || e.ctrlKey || e.metaKey || e.altKey || $('app').hidden) return;
  if (e.key >= '1' && e.key <= '3') { showTab(tabs[Number(e.key) - 1]); e.preventDefault(); }
  else if (e.key === '/') { showTab('requests'); $('f-text').focus(); e.preventDefault(); }
  else if (e.key === 'p') { togglePause(); e.preventDefault(); }
});

