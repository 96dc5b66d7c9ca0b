const ROW = 26, MARGIN = 12, KEEP = 20000;
const statusClass = e => e.fault ? 'fault' : e.status >= 500 ? 's5' : e.status >= 400 ? 's4' : e.status >= 300 ? 's3' : e.status >= 200 ? 's2' : 'fault';
const statusText = e => statusClass(e) === 'fault' ? (e.fault || 'fault') : String(e.status);
const pathOf = url => { try { const u = new URL(url); return u.pathname + u.search; } catch (_) { return url; } };

const filters = { method: '', status: '', rule: '', match: '', text: '' };
function matches(e) {
  if (filters.method && e.method !== filters.method) return false;
  if (filters.status) {
    const c = statusClass(e);
    if (filters.status === 'fault' ? c !== 'fault' : c !== 's' + filters.status) return false;
  }
  if (filters.rule && e.rule !== filters.rule) return false;
  if (filters.match === 'matched' && !e.rule) return false;
  if (filters.match === 'unmatched' && e.rule) return false;
  if (filters.text) {
    const t = filters.text;
    const hay = e._hay || (e._hay = (e.url + '\n' + (e.body || '') + '\n' + ((e.response && e.response.body) || '')).toLowerCase());
    if (!hay.includes(t)) return false;
  }
  return true;
}
const seen = { methods: new Set(), rules: new Set() };
function noteOptions(e) {
  if (!seen.methods.has(e.method)) { seen.methods.add(e.method); addOption('f-method', e.method, e.method); }
  if (e.rule && !seen.rules.has(e.rule)) { seen.rules.add(e.rule); addOption('f-rule', e.rule, e.rule); }
}
function addOption(select, value, label) {
  const o = document.createElement('option');
  o.value = value; o.textContent = label;
  $(select).appendChild(o);
}
function readFilters() {
  filters.method = $('f-method').value; filters.status = $('f-status').value; filters.rule = $('f-rule').value;
  filters.match = $('f-match').value; filters.text = $('f-text').value.trim().toLowerCase();
  M.shown = M.entries.filter(matches);
  $('list').scrollTop = 0;
  render();
}
for (const id of ['f-method', 'f-status', 'f-rule', 'f-match']) $(id).addEventListener('change', readFilters);
let typingTimer = 0;
$('f-text').addEventListener('input', () => { clearTimeout(typingTimer); typingTimer = setTimeout(readFilters, 120); });

function setEntries(list, first) {
  const t0 = performance.now();
  M.entries = list.slice(-KEEP); M.byId = new Map(M.entries.map(e => [e.id, e])); M.pending = [];
  for (const e of M.entries) noteOptions(e);
  M.shown = M.entries.filter(matches);
  if (M.selected != null && !M.byId.has(M.selected)) select(null);
  render();
  // The time to the frame after the list is drawn: building, style, layout and paint.
  requestAnimationFrame(() => setTimeout(() => {
    const ms = performance.now() - t0;
    if (first) M.timings.firstRender = ms; else M.timings.updates.push(ms);
  }, 0));
}
function addEntry(e) {
  const known = M.byId.get(e.id);
  if (known) {
    // A handler that waited answered (or a webhook of it ended): the entry again, completed.
    for (const k of Object.keys(known)) if (!(k in e)) delete known[k];   // (a waiting entry's "fault" is gone)
    Object.assign(known, e);
    scheduleRender();
    if (M.selected === e.id) select(e.id);
    return;
  }
  if (M.paused) { M.pending.push(e); counts(); return; }
  M.entries.push(e); M.byId.set(e.id, e);
  if (M.entries.length > KEEP) M.byId.delete(M.entries.shift().id);
  noteOptions(e);
  if (matches(e)) {
    M.shown.push(e);
    // Newest first: a reader scrolled down keeps the rows they were reading in place.
    if ($('list').scrollTop > 0) M.scrollBy = (M.scrollBy || 0) + ROW;
  }
  scheduleRender();
}
let frame = 0, batchStart = 0;
function scheduleRender() {
  if (frame) return;
  batchStart = performance.now();
  frame = requestAnimationFrame(() => {
    frame = 0;
    render();
    const ms = performance.now() - batchStart;
    M.timings.updates.push(ms);
    if (M.timings.updates.length > 500) M.timings.updates.shift();
  });
}
function counts() {
  const n = M.shown.length, all = M.entries.length;
  $('count').textContent = (n === all ? `${all} requests` : `${n} of ${all} requests`) +
    (M.paused ? ` · paused, ${M.pending.length} new` : '');
  $('empty').hidden = n > 0;
  if (!all) $('empty').textContent = 'No requests yet. Send one to this server and it shows here at once.';
  else if (!n) $('empty').textContent = 'No request matches these filters.';
}
function render() {
  const list = $('list');
  if (M.scrollBy) { list.scrollTop += M.scrollBy; M.scrollBy = 0; }
  const n = M.shown.length;
  $('spacer').style.height = n * ROW + 'px';
  counts();
  if ($('view-requests').hidden) return;
  const top = list.scrollTop, height = list.clientHeight || 600;
  const first = Math.max(0, Math.floor(top / ROW) - MARGIN), last = Math.min(n, Math.ceil((top + height) / ROW) + MARGIN);
  let html = '';
  for (let i = first; i < last; i++) {
    const e = M.shown[n - 1 - i], c = statusClass(e);
    html += `<div class="row ${c}" role="option" id="row-${e.id}" data-id="${e.id}" aria-selected="${e.id === M.selected}" style="top:${i * ROW}px">` +
      `<span class="id">#${e.id}</span><span class="t">${esc(clock(e.timestamp))}</span><span class="m">${esc(e.method)}</span>` +
      `<span class="u mono" title="${esc(e.url)}">${esc(pathOf(e.url))}</span>` +
      (e.rule ? `<span class="r" title="${esc(e.rule)}">${esc(e.rule)}</span>` : '<span class="unmatched-tag">unmatched</span>') +
      contractBadge(e) + (e.chaos ? `<span class="chaos" title="chaos: ${esc(e.chaos)}">chaos</span>` : '') + `<span class="badge">${esc(statusText(e))}</span></div>`;
  }
  $('rows').innerHTML = html;
}
$('list').addEventListener('scroll', () => { if (!frame) frame = requestAnimationFrame(() => { frame = 0; render(); }); });
window.addEventListener('resize', () => render());
$('rows').addEventListener('click', e => {
  const row = e.target.closest('.row');
  if (row) { select(Number(row.dataset.id)); $('list').focus(); }
});
$('list').addEventListener('keydown', e => {
  const n = M.shown.length;
  if (!n) return;
  // Display order is newest first: index 0 is the last entry.
  let at = M.selected == null ? -1 : n - 1 - M.shown.findIndex(x => x.id === M.selected);
  if (at > n - 1) at = -1;
  const page = Math.max(1, Math.floor($('list').clientHeight / ROW) - 1);
  const moves = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1, PageDown: page, PageUp: -page, Home: -n, End: n };
  if (e.key in moves) {
    at = Math.min(n - 1, Math.max(0, at + moves[e.key]));
    select(M.shown[n - 1 - at].id);
    const list = $('list'), y = at * ROW;
    if (y < list.scrollTop) list.scrollTop = y;
    else if (y + ROW > list.scrollTop + list.clientHeight) list.scrollTop = y + ROW - list.clientHeight;
    render();
    e.preventDefault();
  } else if (e.key === 'Enter' && M.selected != null) { $('inspector').focus(); e.preventDefault(); }
});

function togglePause() {
  M.paused = !M.paused;
  $('pause').textContent = M.paused ? 'Resume' : 'Pause';
  $('pause').setAttribute('aria-pressed', String(M.paused));
  if (!M.paused) { const held = M.pending; M.pending = []; for (const e of held) addEntry(e); }
  counts();
}
$('pause').addEventListener('click', togglePause);
$('clear').addEventListener('click', act(async () => { await call('DELETE', 'requests'); setEntries([], false); }));

// A request or answer that broke the API's spec (--spec, mock.spec): a badge on its row.
function contractBadge(e) {
  const c = e.contract;
  if (!c) return '';
  const n = (c.request || []).length + (c.response || []).length;
  return n ? `<span class="contract broken" title="${n} contract violation(s)${c.operation ? ' of ' + esc(c.operation) : ''}">spec ✗</span>` : '';
}
