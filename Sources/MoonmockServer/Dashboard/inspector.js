function select(id) {
  M.selected = id;
  for (const row of document.querySelectorAll('.row')) row.setAttribute('aria-selected', String(Number(row.dataset.id) === id));
  $('list').setAttribute('aria-activedescendant', id == null ? '' : 'row-' + id);
  const e = id == null ? null : M.byId.get(id);
  $('inspector').innerHTML = e ? inspect(e) : '<p class="hint">Select a request to see it whole.</p>';
}

function bytesOf(base64) {
  const raw = atob(base64), out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}
function hexDump(bytes) {
  const shown = Math.min(bytes.length, 4096);
  let out = '';
  for (let at = 0; at < shown; at += 16) {
    const line = bytes.slice(at, Math.min(at + 16, shown));
    const hex = Array.from(line, b => b.toString(16).padStart(2, '0')).join(' ');
    const text = Array.from(line, b => b >= 32 && b < 127 ? String.fromCharCode(b) : '.').join('');
    out += at.toString(16).padStart(8, '0') + '  ' + hex.padEnd(48) + ' ' + text + '\n';
  }
  if (bytes.length > shown) out += `… ${bytes.length - shown} more bytes\n`;
  return out;
}
// A body as a person wants to read it: JSON indented, text as it is, other bytes in hex.
function bodyView(text, base64, label) {
  if (base64 != null) return `<pre class="hex" aria-label="${label} (hex)">${esc(hexDump(bytesOf(base64)))}</pre>`;
  if (!text) return '<p class="hint">(empty body)</p>';
  const t = text.trim();
  if (t[0] === '{' || t[0] === '[') {
    try { return `<pre class="json" aria-label="${label} (JSON)">${esc(JSON.stringify(JSON.parse(t), null, 2))}</pre>`; } catch (_) { /* text */ }
  }
  return `<pre aria-label="${label}">${esc(text)}</pre>`;
}
function headerTable(headers) {
  const names = Object.keys(headers || {});
  if (!names.length) return '<p class="hint">(no header fields)</p>';
  return '<table class="headers">' + names.sort().map(n => `<tr><td>${esc(n)}</td><td>${esc(headers[n])}</td></tr>`).join('') + '</table>';
}
function ruleWhere(id) {
  const r = M.ruleById.get(id);
  return r ? (r.location || r.source) : 'no longer loaded';
}

function inspect(e) {
  const c = statusClass(e);
  let h = `<h2><span class="badge ${c}">${esc(statusText(e))}</span> ${esc(e.method)} <span class="mono">${esc(pathOf(e.url))}</span></h2>`;
  h += '<dl class="facts">';
  h += `<dt>request</dt><dd>#${e.id} at ${esc(new Date(e.timestamp * 1000).toLocaleString([], { hour12: false }))}, answered in ${(e.duration_us / 1000).toFixed(2)} ms</dd>`;
  h += e.rule ? `<dt>rule</dt><dd><code id="i-rule">${esc(e.rule)}</code> at <code id="i-where">${esc(ruleWhere(e.rule))}</code></dd>`
    : '<dt>rule</dt><dd class="no" id="i-rule">none matched</dd>';
  if (e.delay_ms) h += `<dt>delay</dt><dd id="i-delay">${e.delay_ms} ms</dd>`;
  if (e.fault) h += `<dt>fault</dt><dd id="i-fault" class="no">${esc(e.fault)}</dd>`;
  if (e.chaos) h += `<dt>chaos</dt><dd id="i-chaos" class="no">${esc(e.chaos)}</dd>`;
  if (e.stream) h += `<dt>stream</dt><dd id="i-stream">${esc(e.stream.kind)}: ${e.stream.chunks} pieces` +
    (e.stream.ended ? `, ${esc(e.stream.ended)}` : ', still open') + '</dd>';
  if (e.websocket) h += `<dt>websocket</dt><dd>${(e.websocket.sent || []).length} messages` +
    (e.websocket.ended ? `, ${esc(e.websocket.ended)}` : ', open') + '</dd>';
  h += '</dl>';
  const sent = (e.stream || e.websocket || {}).sent;
  if (sent && sent.length) h += `<h3>${e.stream ? 'Pieces sent' : 'Messages'}</h3><pre id="i-sent">` +
    esc(sent.slice(0, 200).map(p => `+${p.at_ms} ms${p.direction ? ' ' + p.direction : ''}  ${p.text}`).join('\n')) + '</pre>';
  if (e.stream && e.stream.error) h += `<h3>Stream error</h3><pre class="error">${esc(e.stream.error)}</pre>`;
  h += `<div class="actions"><button id="copy-curl" data-id="${e.id}">Copy as curl</button>` +
    `<button id="copy-rule" data-id="${e.id}">Copy as a mocks.lua rule</button></div>`;
  h += '<div id="copied" hidden><p class="hint" id="copied-what"></p><pre id="copied-text"></pre></div>';
  if (e.error) h += `<h3>Handler error</h3><pre class="error" id="i-error">${esc(e.error)}</pre>`;
  if (!e.rule && e.near_misses) h += nearMisses(e.near_misses);
  if (e.contract) h += contractView(e.contract);
  if (e.outbound && e.outbound.length) h += outboundView(e.outbound);
  if (e.grpc) h += grpcView(e.grpc);
  h += `<h3>Request</h3><pre id="i-line">${esc(e.method)} ${esc(e.url)}</pre>` + headerTable(e.headers) +
    bodyView(e.body, e.body_base64, 'request body');
  if (e.response) {
    const r = e.response;
    h += `<h3>Response</h3><p><span class="badge ${c}">${esc(statusText(e))}</span> ${r.body_bytes} bytes` +
      (r.truncated ? ` <span class="chip">the journal kept the first ${(r.body || '').length || (r.body_base64 ? bytesOf(r.body_base64).length : 0)}</span>` : '') + '</p>' +
      headerTable(r.headers) + bodyView(r.body, r.body_base64, 'response body');
  }
  if (e.logs && e.logs.length) h += `<h3>Script log</h3><pre id="i-logs">${esc(e.logs.join('\n'))}</pre>`;
  return h;
}
function nearMisses(misses) {
  if (!misses.length) return '<h3>Why nothing matched</h3><p class="hint">No rule came close: check the method and the path.</p>';
  return '<h3>Why nothing matched</h3><p class="hint">The closest rules, what held and what did not:</p><ul class="miss" id="i-near">' +
    misses.map(m => `<li><code>${esc(m.rule)}</code>${m.location ? ` at <code>${esc(m.location)}</code>` : ''}<ul class="checks">` +
      (m.passed || []).map(p => `<li class="ok">${esc(p)}</li>`).join('') +
      m.mismatches.map(p => `<li class="no">${esc(p)}</li>`).join('') + '</ul></li>').join('') + '</ul>';
}

// Copying needs a secure context (localhost is one); elsewhere the text is shown selected.
async function copyText(text) {
  try { await navigator.clipboard.writeText(text); return true; } catch (_) {
    const area = document.createElement('textarea');
    area.value = text; document.body.appendChild(area); area.select();
    let done = false;
    try { done = document.execCommand('copy'); } catch (_) { done = false; }
    area.remove();
    return done;
  }
}
$('inspector').addEventListener('click', act(async ev => {
  const button = ev.target.closest('#copy-curl, #copy-rule');
  if (!button) return;
  const id = button.dataset.id, curl = button.id === 'copy-curl';
  const answer = await get(`requests/${id}/${curl ? 'curl' : 'rule'}`);
  const text = curl ? answer.curl : answer.lua;
  const copied = await copyText(text);
  $('copied').hidden = false;
  $('copied-what').textContent = (curl ? 'curl command' : 'mocks.lua rule') + (copied ? ', copied to the clipboard:' : ' (select it and copy):');
  $('copied-text').textContent = text;
  toast(copied ? 'copied' : 'the clipboard is not available: the text is shown below the buttons');
}));

// A call of the gRPC family, decoded with the script's schemas: method, status, messages both ways.
function grpcView(g) {
  const ok = g.status.code === 0;
  let h = `<h3>gRPC</h3><dl class="facts" id="i-grpc"><dt>method</dt><dd><code>${esc(g.method)}</code> (${esc(g.kind.replace('_', ' '))}, ${esc(g.protocol)})</dd>` +
    `<dt>status</dt><dd class="${ok ? '' : 'no'}" id="i-grpc-status">${g.status.code} ${esc(g.status.name)}${g.status.message ? ': ' + esc(g.status.message) : ''}</dd></dl>`;
  const list = (title, id, messages) => messages.length ? `<h4>${title}</h4><pre id="${id}">` +
    esc(messages.map(m => JSON.stringify(m, null, 2)).join('\n')) + '</pre>' : '';
  return h + list('Request messages', 'i-grpc-request', g.request) + list('Response messages', 'i-grpc-response', g.response);
}

// The handler's calls out (mock.fetch, webhooks, mock.proxy with a transform), in the order they ended.
function outboundView(calls) {
  let h = '<h3>Outbound</h3><table class="headers" id="i-outbound"><tr><th>kind</th><th>call</th><th>answer</th><th>ms</th></tr>';
  for (const o of calls) {
    const answer = o.status != null ? String(o.status) : 'no answer: ' + (o.error || '');
    h += `<tr><td>${esc(o.kind)}${o.attempts > 1 ? ' ×' + o.attempts : ''}</td><td class="mono">${esc(o.method)} ${esc(o.url)}</td>` +
      `<td class="${o.status != null && o.status < 400 ? '' : 'no'}">${esc(answer)}</td><td>${esc(String(o.duration_ms))}</td></tr>`;
  }
  return h + '</table>';
}

// What the API's spec says of the exchange: its operation and each violation, by direction.
function contractView(c) {
  const all = [['request', c.request || []], ['response', c.response || []]];
  const n = all.reduce((k, [, list]) => k + list.length, 0);
  let h = `<h3>Contract</h3><p id="i-contract">${c.operation ? 'operation <code>' + esc(c.operation) + '</code>' : 'no operation of the spec'}` +
    (n ? `: <span class="contract broken">${n} violation${n === 1 ? '' : 's'}</span>` : ': <span class="contract">kept</span>') + '</p>';
  if (n) {
    h += '<table class="headers" id="i-violations"><tr><th>where</th><th>what</th><th>spec</th></tr>';
    for (const [direction, list] of all) for (const v of list) {
      h += `<tr><td class="mono">${esc(direction)} ${esc(v.instance_path || '/')}</td><td>${esc(v.message)}</td><td class="mono">${esc(v.schema_path)}</td></tr>`;
    }
    h += '</table>';
  }
  return h;
}
