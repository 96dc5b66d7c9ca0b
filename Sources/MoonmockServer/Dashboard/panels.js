async function loadRules() {
  const rules = await get('rules');
  M.rules = rules; M.ruleById = new Map(rules.map(r => [r.id, r]));
  $('rules').innerHTML = rules.map(r => {
    const budget = r.times ? ` <span class="chip${r.hits >= r.times ? ' spent' : ''}">${r.hits >= r.times ? 'budget spent' : (r.times - r.hits) + ' left'} (times = ${r.times})</span>` : '';
    const where = r.source === 'runtime' ? '<span class="chip">runtime</span>' : r.source === 'swift' ? '<span class="chip">Swift</span>' : '';
    return `<tr data-rule="${esc(r.id)}"><td><code>${esc(r.id)}</code></td><td>${esc(r.location || '')} ${where}</td>` +
      `<td class="mono">${esc(r.method)} ${esc(r.pattern)}</td><td class="hits">${r.hits}${budget}${r.retired ? ' <span class="chip spent">retired</span>' : ''}</td>` +
      `<td>${r.conditions.map(esc).join('<br>')}</td>` +
      `<td>${r.source === 'runtime' ? `<button class="delete-rule" data-id="${esc(r.id)}" aria-label="delete ${esc(r.id)}">Delete</button>` : ''}</td></tr>`;
  }).join('') || '<tr><td colspan="6" class="hint">No rules: add one below or in the script.</td></tr>';
  for (const r of rules) if (!seen.rules.has(r.id)) { seen.rules.add(r.id); addOption('f-rule', r.id, r.id); }
  if (M.selected != null && M.byId.get(M.selected) && M.byId.get(M.selected).rule) {
    const where = document.getElementById('i-where');
    if (where) where.textContent = ruleWhere(M.byId.get(M.selected).rule);
  }
}
$('rules').addEventListener('click', act(async ev => {
  const button = ev.target.closest('.delete-rule');
  if (!button) return;
  await call('DELETE', 'rules/' + encodeURIComponent(button.dataset.id));
  toast('deleted ' + button.dataset.id);
  await loadRules();
}));

async function loadVariants() {
  const [variants, bundles] = await Promise.all([get('variants'), get('bundle')]);
  M.variants = variants;
  $('variants').innerHTML = variants.map(v =>
    `<tr><td><code>${esc(v.rule)}</code></td><td><select class="variant" data-rule="${esc(v.rule)}" aria-label="variant of ${esc(v.rule)}">` +
    (v.none_allowed ? `<option value=""${v.active === null ? ' selected' : ''}>none (falls through to later rules)</option>` : '') +
    v.variants.map(n => `<option value="${esc(n)}"${n === v.active ? ' selected' : ''}>${esc(n)}</option>`).join('') +
    '</select></td></tr>').join('') || '<tr><td colspan="2" class="hint">No rule has variants (mock.variants, mock.stubs).</td></tr>';
  $('bundles').innerHTML = bundles.length ? '<h2>Mock-Bundle</h2>' + bundles.map(b =>
    `<form class="row-form bundle" data-rule="${esc(b.rule)}"><code>${esc(b.rule)}</code> serves ` +
    `<input value="${esc(b.path)}" aria-label="bundle folder of ${esc(b.rule)}"> <button type="submit">Switch</button></form>`).join('') : '';
}
// Chaos: what is on (the script's layers, a runtime switch and its time left), switched here.
async function loadChaos() {
  const c = await get('chaos');
  M.chaos = c;
  const parts = [];
  if (c.runtime) parts.push((c.runtime.profile ? `profile ${c.runtime.profile}` : 'runtime settings') +
    (c.runtime.remaining_ms !== undefined ? ` for ${Math.ceil(c.runtime.remaining_ms / 1000)} s more` : ''));
  if (c.layers.length) parts.push(`${c.layers.length} script layer${c.layers.length === 1 ? '' : 's'}`);
  $('chaos-state').textContent = c.active ? 'on: ' + parts.join(', ') : (c.paused ? 'off (paused until started again)' : 'off');
  $('chaos-state').className = c.active ? 'on' : '';
  const names = Object.keys(c.profiles).sort();
  const chosen = $('c-profile').value;
  $('c-profile').innerHTML = '<option value="">errors at a rate</option>' +
    names.map(n => `<option value="${esc(n)}"${n === chosen ? ' selected' : ''}>profile ${esc(n)}</option>`).join('');
}
$('chaos-form').addEventListener('submit', act(async ev => {
  ev.preventDefault();
  const body = $('c-profile').value ? { profile: $('c-profile').value } : { error_rate: Number($('c-rate').value || 10) / 100 };
  if ($('c-duration').value) body.duration_ms = Number($('c-duration').value) * 1000;
  await call('PUT', 'chaos', body);
  toast('chaos on');
  await loadChaos();
}));
$('chaos-stop').addEventListener('click', act(async () => { await call('DELETE', 'chaos'); toast('chaos off'); await loadChaos(); }));

$('variants').addEventListener('change', act(async ev => {
  const s = ev.target.closest('select.variant');
  if (!s) return;
  const r = await call('PUT', 'variants/' + encodeURIComponent(s.dataset.rule), { active: s.value === '' ? null : s.value });
  toast(`${r.rule}: ${r.active === null ? 'none' : r.active}`);
}));
$('bundles').addEventListener('submit', act(async ev => {
  ev.preventDefault();
  const f = ev.target.closest('form.bundle');
  const r = await call('PUT', 'bundle', { rule: f.dataset.rule, path: f.querySelector('input').value });
  toast(`${r.rule} serves ${r.path}`);
}));

$('add-rule').addEventListener('submit', act(async ev => {
  ev.preventDefault();
  const out = $('r-outcome');
  const respond = { status: Number($('r-status').value || 200) };
  const json = $('r-json').value.trim();
  if (json) {
    try { respond.json = JSON.parse(json); } catch (e) { out.textContent = 'the body is not JSON: ' + e.message; out.className = 'bad'; return; }
  }
  if ($('r-delay').value) respond.delay = Number($('r-delay').value);
  const rule = { path: $('r-path').value.trim(), respond };
  if ($('r-method').value) rule.method = $('r-method').value;
  try {
    const r = await call('POST', 'rules', rule);
    out.textContent = `added ${r.id}: it is tried before the script's rules`; out.className = 'good';
  } catch (e) {
    if (e instanceof SignedOut) throw e;
    out.textContent = e.message; out.className = 'bad'; return;
  }
  await loadRules();
}));

// State: values are JSON; what does not parse as JSON is taken as a string.
const parseValue = text => { try { return JSON.parse(text); } catch (_) { return text; } };
async function loadState() {
  const [state, resources] = await Promise.all([get('state'), get('resources')]);
  M.state = state;
  $('resources').innerHTML = resources.resources.map(r =>
    `<h2>mock.resource <code>${esc(r.path)}</code> <small>${r.count} item${r.count === 1 ? '' : 's'}</small> ` +
    `<button class="reset-resource" data-path="${esc(r.path)}">Reset to seed</button></h2>` +
    '<table><thead><tr><th>' + esc(r.id_field) + '</th><th>item (JSON)</th></tr></thead><tbody>' +
    r.items.slice(0, 200).map(i => `<tr><td><code>${esc(String(i[r.id_field]))}</code></td><td class="mono">${esc(JSON.stringify(i))}</td></tr>`).join('') +
    '</tbody></table>').join('');
  if (document.querySelector('#state input.edit')) return;   // not under someone editing
  const keys = Object.keys(state).sort();
  $('state').innerHTML = keys.map(k => `<tr data-key="${esc(k)}"><td><code>${esc(k)}</code></td>` +
    `<td class="mono value">${esc(JSON.stringify(state[k]))}</td>` +
    `<td><button class="edit-key" aria-label="edit ${esc(k)}">Edit</button> <button class="delete-key" aria-label="delete ${esc(k)}">Delete</button></td></tr>`).join('') ||
    '<tr><td colspan="3" class="hint">mock.state is empty.</td></tr>';
}
$('resources').addEventListener('click', act(async ev => {
  const b = ev.target.closest('.reset-resource');
  if (!b) return;
  await call('DELETE', 'resources/' + b.dataset.path.replace(/^\/+/, '').split('/').map(encodeURIComponent).join('/'));
  toast('reset ' + b.dataset.path);
  await loadState();
}));
$('state').addEventListener('click', act(async ev => {
  const row = ev.target.closest('tr[data-key]');
  if (!row) return;
  const key = row.dataset.key, path = 'state/' + encodeURIComponent(key);
  if (ev.target.closest('.delete-key')) { await call('DELETE', path); await loadState(); return; }
  if (ev.target.closest('.edit-key')) {
    const cell = row.querySelector('.value');
    cell.innerHTML = `<input class="edit" aria-label="value of ${esc(key)}" value="${esc(JSON.stringify(M.state[key]))}">`;
    row.lastElementChild.innerHTML = '<button class="save-key">Save</button> <button class="cancel-key">Cancel</button>';
    const input = cell.querySelector('input');
    input.focus(); input.select();
    input.addEventListener('keydown', e => {
      if (e.key === 'Enter') row.querySelector('.save-key').click();
      if (e.key === 'Escape') row.querySelector('.cancel-key').click();
    });
    return;
  }
  if (ev.target.closest('.save-key')) {
    await call('PUT', path, parseValue(row.querySelector('input.edit').value));
    row.querySelector('input.edit').remove();
    await loadState();
    return;
  }
  if (ev.target.closest('.cancel-key')) { row.querySelector('input.edit').remove(); await loadState(); }
}));
$('add-state').addEventListener('submit', act(async ev => {
  ev.preventDefault();
  await call('PUT', 'state/' + encodeURIComponent($('s-key').value), parseValue($('s-value').value));
  $('s-key').value = ''; $('s-value').value = '';
  await loadState();
}));
// Flushing everything asks once more on the button itself (no modal dialog).
let flushArmed = 0;
$('flush').addEventListener('click', act(async () => {
  if (!flushArmed) {
    $('flush').textContent = `Flush ${Object.keys(M.state).length} keys?`;
    flushArmed = setTimeout(() => { flushArmed = 0; $('flush').textContent = 'Flush all'; }, 4000);
    return;
  }
  clearTimeout(flushArmed); flushArmed = 0; $('flush').textContent = 'Flush all';
  await call('DELETE', 'state');
  $('s-outcome').textContent = 'flushed'; $('s-outcome').className = 'good';
  await loadState();
}));

