"""An app and its API as production serves them, for record/replay tests: bodies compressed by
Accept-Encoding and a pre-compressed asset, chunked answers, pagination with absolute Link
headers, ETag revalidation, two Set-Cookie fields on login and a CSRF cookie the page's script
reads, redirects with absolute and relative Location, GraphQL with variables, a latin-1 CSV,
and a cross-origin API with credentials and preflights. `App` runs it on a free loopback port."""
from __future__ import annotations

import gzip
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

APP_JS = r"""
async function run() {
  const out = [];
  const r1 = await fetch('/api/items?per_page=3');
  const j1 = await r1.json();
  out.push('items1: ' + j1.items.map(i => i.name).join(','));
  const next = r1.headers.get('Link').match(/<([^>]+)>/)[1];
  out.push('next on this origin: ' + (new URL(next).origin === location.origin));
  const j2 = await (await fetch(next)).json();
  out.push('items2: ' + j2.items.map(i => i.name).join(','));
  const all = await (await fetch('/api/items')).json();
  out.push('all: ' + all.items.length);
  const login = await fetch('/api/login', { method: 'POST', headers: { 'Content-Type': 'application/json' },
                                            body: JSON.stringify({ user: 'ana' }) });
  out.push('login: ' + (await login.json()).ok);
  const csrf = (document.cookie.split('; ').find(c => c.startsWith('csrftoken=')) || '=none').split('=')[1];
  out.push('csrf: ' + csrf);
  const me = await fetch('/api/me', { headers: { 'X-CSRF-Token': csrf } });
  out.push('me: ' + me.status + ' ' + (await me.text()));
  for (const id of ['7', '8']) {
    const g = await fetch('/graphql', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ operationName: 'GetUser', query: 'query GetUser($id: ID!) { user(id: $id) { name } }', variables: { id } }) });
    out.push('user ' + id + ': ' + (await g.json()).data.user.name);
  }
  const csv = await fetch('/export.csv');
  out.push('csv: ' + new TextDecoder('iso-8859-1').decode(await csv.arrayBuffer()).trim().replace(/\n/g, ' | '));
  const p1 = await fetch('/api/profile');
  out.push('profile: ' + (await p1.json()).name);
  const p2 = await fetch('/api/profile', { cache: 'no-cache' });
  out.push('profile again: ' + p2.status + ' ' + (await p2.json()).name);
  for (const path of ['/old', '/rel']) {
    const r = await fetch(path);
    out.push(path + ': ' + r.status + ' ' + (new URL(r.url).origin === location.origin) + ' ' + (await r.text()));
  }
  document.getElementById('out').textContent = out.join('\n');
  document.title = 'done';
}
run().catch(e => { document.getElementById('out').textContent = 'failed: ' + e; document.title = 'done'; });
"""

INDEX = """<!doctype html>
<html><head><meta charset="utf-8"><title>loading</title></head>
<body><h1>Items</h1><pre id="out"></pre><script src="/app.js"></script></body></html>
"""

CROSS = """<!doctype html>
<html><head><meta charset="utf-8"><title>loading</title></head>
<body><pre id="out"></pre><script>
const api = new URLSearchParams(location.search).get('api');
fetch(api + '/api/cors-data', { credentials: 'include', headers: { 'X-Requested-With': 'moonmock' } })
  .then(r => r.json()).then(j => { document.getElementById('out').textContent = 'cors: ' + j.value; document.title = 'done'; })
  .catch(e => { document.getElementById('out').textContent = 'failed: ' + e; document.title = 'done'; });
</script></body></html>
"""

ITEMS = [{"id": i, "name": f"item {i}"} for i in range(1, 8)]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list = []   # (method, path, headers) of every request, for the tests

    def log_message(self, *args):
        pass

    def origin(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def send(self, status, body=b"", content_type=None, headers=(), chunked=False, compress=False):
        if compress and "gzip" in self.headers.get("Accept-Encoding", ""):
            body = gzip.compress(body, mtime=0)
            headers = list(headers) + [("Content-Encoding", "gzip"), ("Vary", "Accept-Encoding")]
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in headers:
            self.send_header(name, value)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(body), 16):
                piece = body[i:i + 16]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

    def json(self, value, status=200, headers=(), chunked=False):
        # Keys in the order written here (not sorted): a replay must keep them so.
        self.send(status, json.dumps(value).encode(), "application/json", headers, chunked=chunked, compress=True)

    def do_OPTIONS(self):
        Handler.seen.append(("OPTIONS", self.path, dict(self.headers)))
        origin = self.headers.get("Origin", "")
        self.send(204, headers=[("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Credentials", "true"),
                                ("Access-Control-Allow-Methods", "GET, POST"),
                                ("Access-Control-Allow-Headers", "X-Requested-With"), ("Vary", "Origin")])

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        Handler.seen.append(("POST", self.path, dict(self.headers)))
        path = urlsplit(self.path).path
        if path == "/api/login":
            self.json({"ok": True, "user": json.loads(body)["user"]},
                      headers=[("Set-Cookie", "session=s3cr3t-9f2; HttpOnly; Path=/; SameSite=Lax"),
                               ("Set-Cookie", "csrftoken=tok-123; Path=/; SameSite=Lax")])
        elif path == "/graphql":
            request = json.loads(body)
            uid = request["variables"]["id"]
            self.json({"data": {"user": {"id": uid, "name": {"7": "Ana", "8": "Bo"}.get(uid, "?")}}})
        else:
            self.send(404, b"no", "text/plain")

    def do_GET(self):
        Handler.seen.append(("GET", self.path, dict(self.headers)))
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        path = url.path
        if path == "/":
            self.send(200, INDEX.encode(), "text/html; charset=utf-8", compress=True)
        elif path == "/app.js":
            # Pre-compressed on disk: gzip whatever the client asked for.
            self.send(200, gzip.compress(APP_JS.encode(), mtime=0), "text/javascript; charset=utf-8",
                      headers=[("Content-Encoding", "gzip"), ("Cache-Control", "no-store")])
        elif path == "/api/items":
            if not url.query:
                self.json({"items": ITEMS, "total": len(ITEMS)})
                return
            page, per = int(query.get("page", ["1"])[0]), int(query.get("per_page", ["10"])[0])
            items = ITEMS[(page - 1) * per:page * per]
            links = [f'<{self.origin()}/api/items?page={page + 1}&per_page={per}>; rel="next"']
            self.json({"page": page, "items": items}, headers=[("Link", ", ".join(links))], chunked=True)
        elif path == "/api/profile":
            tag = '"p1"'
            if self.headers.get("If-None-Match") == tag:
                self.send(304, headers=[("ETag", tag), ("Cache-Control", "no-cache")])
            else:
                self.json({"name": "Ana", "plan": "pro"}, headers=[("ETag", tag), ("Cache-Control", "no-cache")])
        elif path == "/api/me":
            cookies = dict(c.split("=", 1) for c in self.headers.get("Cookie", "").split("; ") if "=" in c)
            ok = cookies.get("csrftoken") and cookies.get("csrftoken") == self.headers.get("X-CSRF-Token")
            self.json({"user": "ana", "csrf": "ok"} if ok else {"error": "csrf"}, status=200 if ok else 403)
        elif path == "/export.csv":
            self.send(200, "name;city\nMüller;Köln\n".encode("latin-1"), "text/csv; charset=iso-8859-1")
        elif path == "/old":
            self.send(302, b"", headers=[("Location", f"{self.origin()}/new-page")])
        elif path == "/rel":
            self.send(302, b"", headers=[("Location", "/new-page")])
        elif path == "/new-page":
            self.send(200, b"the new page", "text/plain; charset=utf-8")
        elif path == "/cross.html":
            self.send(200, CROSS.encode(), "text/html; charset=utf-8")
        elif path == "/api/cors-data":
            origin = self.headers.get("Origin", "")
            self.json({"value": "shared", "cookie": "session" in self.headers.get("Cookie", "")},
                      headers=[("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Credentials", "true"), ("Vary", "Origin")])
        else:
            self.send(404, b"not here", "text/plain")


class App:
    """The upstream on 127.0.0.1 and a free port, served from a thread."""

    def __init__(self):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
