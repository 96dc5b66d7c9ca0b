"""A client for a running Moonmock server's admin API (standard library only)."""
from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterator, List, Mapping, MutableMapping, Optional, Union

__all__ = ["Client", "MoonmockError", "RuleError", "State"]

JSON = Any


class MoonmockError(Exception):
    """The server refused a call: ``status`` is the HTTP status, ``message`` the server's words."""

    def __init__(self, status: int, message: str, body: Optional[JSON] = None) -> None:
        super().__init__(f"moonmock: {message} (HTTP {status})")
        self.status = status
        self.message = message
        self.body = body


class RuleError(MoonmockError):
    """A rule the server did not take; ``field`` names the part at fault (``rule.respond.status``)."""

    def __init__(self, status: int, message: str, body: Optional[JSON] = None) -> None:
        super().__init__(status, message, body)
        self.field: str = (body or {}).get("field", "") if isinstance(body, dict) else ""


class State(MutableMapping[str, JSON]):
    """``mock.state`` of the server as a mapping: ``mm.state["user"] = "ana"``."""

    def __init__(self, client: "Client") -> None:
        self._client = client

    def _path(self, key: str) -> str:
        return "/__moonmock/state/" + urllib.parse.quote(key, safe="")

    def __getitem__(self, key: str) -> JSON:
        try:
            return self._client._call("GET", self._path(key))
        except MoonmockError as error:
            if error.status == 404:
                raise KeyError(key) from None
            raise

    def __setitem__(self, key: str, value: JSON) -> None:
        self._client._call("PUT", self._path(key), value)

    def __delitem__(self, key: str) -> None:
        answer = self._client._call("DELETE", self._path(key))
        if not answer.get("deleted"):
            raise KeyError(key)

    def _all(self) -> Dict[str, JSON]:
        return self._client._call("GET", "/__moonmock/state")

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def replace(self, values: Mapping[str, JSON]) -> None:
        """Replaces the whole store with ``values``."""
        self._client._call("PUT", "/__moonmock/state", dict(values))

    def clear(self) -> None:
        self._client._call("DELETE", "/__moonmock/state")

    def __repr__(self) -> str:
        return f"State({self._all()!r})"


class Client:
    """The admin API of a Moonmock server at ``url`` (``http://127.0.0.1:8080``).

    >>> mm = Client("http://127.0.0.1:8080")
    >>> mm.stub("GET", "/users/7", json={"id": 7})
    'runtime-1'
    >>> mm.verify("GET", "/users/:id", times=1)
    """

    def __init__(self, url: str, *, token: Optional[str] = None, timeout: float = 10.0,
                 cafile: Optional[str] = None) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        #: The PEM authorities an ``https://`` server's certificate is checked against (``None``:
        #: the system's); ``moonmock.serve(..., args=["--tls", "self-signed"])`` sets its local CA.
        self.cafile = cafile
        self.state = State(self)

    # -- rules

    def stub(
        self,
        method: Optional[str],
        path: str,
        *,
        status: int = 200,
        json: JSON = None,
        text: Optional[str] = None,
        body: Optional[bytes] = None,
        headers: Optional[Mapping[str, str]] = None,
        delay: Union[None, float, Mapping[str, float]] = None,
        fault: Optional[str] = None,
        times: Optional[int] = None,
        name: Optional[str] = None,
        query: Optional[Mapping[str, Any]] = None,
        match_headers: Optional[Mapping[str, Any]] = None,
        match_json: JSON = None,
    ) -> str:
        """Answers ``method path`` (a pattern: ``/users/:id``) with this response, ahead of the
        script's rules; returns the rule's id. ``delay`` is in milliseconds."""
        import base64

        respond: Dict[str, JSON] = {"status": status}
        if json is not None:
            respond["json"] = json
        if text is not None:
            respond["text"] = text
        if body is not None:
            respond["base64"] = base64.b64encode(body).decode()
        if headers:
            respond["headers"] = dict(headers)
        if delay is not None:
            respond["delay"] = dict(delay) if isinstance(delay, Mapping) else delay
        if fault is not None:
            respond["fault"] = fault
        rule: Dict[str, JSON] = {"path": path, "respond": respond}
        if method is not None:
            rule["method"] = method
        for key, value in (("times", times), ("name", name), ("query", query), ("headers", match_headers), ("json", match_json)):
            if value is not None:
                rule[key] = dict(value) if isinstance(value, Mapping) else value
        added = self.add_rule(rule)
        return added if isinstance(added, str) else added[0]

    def add_rule(self, rule: Union[Mapping[str, JSON], List[Mapping[str, JSON]]]) -> Union[str, List[str]]:
        """Adds a rule given as the server's rule JSON (or a list of them); returns the id (or ids)."""
        answer = self._call("POST", "/__moonmock/rules", rule)
        return answer["ids"] if "ids" in answer else answer["id"]

    def rules(self) -> List[Dict[str, JSON]]:
        """Every rule in evaluation order; runtime rules first (``source == "runtime"``)."""
        return self._call("GET", "/__moonmock/rules")

    def remove_rule(self, rule_id: str) -> None:
        self._call("DELETE", "/__moonmock/rules/" + urllib.parse.quote(rule_id, safe=""))

    def remove_runtime_rules(self) -> int:
        return int(self._call("DELETE", "/__moonmock/rules?source=runtime")["deleted"])

    # -- journal and verification

    def requests(self, *, since: Optional[int] = None, rule: Optional[str] = None,
                 method: Optional[str] = None, pattern: Optional[str] = None) -> List[Dict[str, JSON]]:
        """The journal, oldest first; ``since`` gives only entries recorded after that id."""
        params = {k: v for k, v in (("since", since), ("rule", rule), ("method", method), ("pattern", pattern)) if v is not None}
        query = ("?" + urllib.parse.urlencode(params)) if params else ""
        return self._call("GET", "/__moonmock/requests" + query)

    def verify(self, method: Optional[str] = None, pattern: Optional[str] = None, *, rule: Optional[str] = None,
               url: Optional[str] = None, times: Optional[int] = None, at_least: Optional[int] = None,
               at_most: Optional[int] = None) -> int:
        """Asserts how often requests came: by ``method``/``pattern``, by ``rule`` id, or by exact
        ``url`` (path and query). Raises ``AssertionError`` naming the closest requests and why
        they did not count; returns the count."""
        query: Dict[str, JSON] = {}
        if rule is not None:
            query["rule"] = rule
        elif url is not None:
            query["url"] = url
        else:
            if pattern is None:
                raise TypeError("verify needs a pattern, rule= or url=")
            query["pattern"] = pattern
            if method is not None:
                query["method"] = method
        answer = self._verify(query, times, at_least, at_most)
        if isinstance(answer, int):
            return answer
        lines = [answer.get("message", "verification failed")]
        for miss in answer.get("near_misses", []):
            lines.append(f"  closest: {miss['request']}: " + "; ".join(miss.get("reasons", [])))
        for entry in answer.get("requests", [])[-5:]:
            lines.append(f"  counted: {entry['method']} {entry['url']} -> {entry['status']}")
        raise AssertionError("\n".join(lines))

    def _verify(self, query: Dict[str, JSON], times: Optional[int], at_least: Optional[int],
                at_most: Optional[int]) -> Union[int, Dict[str, JSON]]:
        """POST /__moonmock/verify with the count: the count when it holds, else the 422's body."""
        for key, value in (("times", times), ("at_least", at_least), ("at_most", at_most)):
            if value is not None:
                query[key] = value
        status, answer = self._request("POST", "/__moonmock/verify", query)
        if status == 200:
            return int(answer["count"])
        if status != 422:
            raise self._error(status, answer)
        return answer

    # -- outbound calls (mock.fetch, webhooks)

    def verify_outbound(self, url: Optional[str] = None, *, method: Optional[str] = None, path: Optional[str] = None,
                        kind: Optional[str] = None, times: Optional[int] = None, at_least: Optional[int] = None,
                        at_most: Optional[int] = None) -> int:
        """Asserts how often handlers called out: by exact ``url`` or by ``path``, with ``method``
        and ``kind`` (``"fetch"``, ``"webhook"``, ``"proxy"``). Raises ``AssertionError`` listing
        the calls made; returns the count."""
        outbound: Dict[str, JSON] = {k: v for k, v in (("url", url), ("method", method), ("path", path), ("kind", kind)) if v is not None}
        answer = self._verify({"outbound": outbound}, times, at_least, at_most)
        if isinstance(answer, int):
            return answer
        lines = [answer.get("message", "verification failed")]
        for call in answer.get("calls", [])[-10:]:
            lines.append(f"  made: {call['kind']} {call['method']} {call['url']} -> {call.get('status') or call.get('error')}")
        raise AssertionError("\n".join(lines))

    def flush_webhooks(self, timeout_ms: float = 10000) -> Dict[str, JSON]:
        """Waits until every webhook and ``mock.after`` function the handlers started is done
        (``{"pending": 0, "sent": n, "failed": m}``); raises ``MoonmockError`` (504) when some are
        still pending after ``timeout_ms``."""
        return self._call("POST", "/__moonmock/webhooks/flush?timeout_ms=" + str(int(timeout_ms)), {})

    # -- chaos and resources

    def chaos(self, profile: Union[None, str, Mapping[str, JSON]] = None, *, duration_ms: Optional[float] = None,
              **settings: JSON) -> Dict[str, JSON]:
        """Switches chaos on from the next request: a profile the script named
        (``mock.chaos_profile``) or settings (``error_rate=0.1, status=503``,
        ``latency={"min": 50, "max": 400}``, ``fault="connection_reset"``, ``fault_rate=0.01``,
        ``rate_limit={"rps": 10, "burst": 20}``, ``path="/api/"``, ``host=...``), for
        ``duration_ms`` or until :meth:`stop_chaos`. Returns what is on now."""
        body: Dict[str, JSON] = dict(settings)
        if isinstance(profile, Mapping):   # chaos({"error_rate": 0.1}): the settings as a dict
            body = {**dict(profile), **body}
        elif profile is not None:
            body["profile"] = profile
        if duration_ms is not None:
            body["duration_ms"] = duration_ms
        return self._call("PUT", "/__moonmock/chaos", body)

    def stop_chaos(self) -> Dict[str, JSON]:
        """Ends runtime chaos and pauses the script's own until chaos is switched on again."""
        return self._call("DELETE", "/__moonmock/chaos")

    def chaos_status(self) -> Dict[str, JSON]:
        """The script's layers and profiles, what runs now and for how long."""
        return self._call("GET", "/__moonmock/chaos")

    def resources(self) -> List[Dict[str, JSON]]:
        """Each ``mock.resource`` collection: ``path``, ``count`` and ``items`` in order."""
        return self._call("GET", "/__moonmock/resources")["resources"]

    def reset_resource(self, path: str) -> None:
        """Brings a collection (``"/pets"``) back to its seed: its items forgotten, seeded again."""
        self._call("DELETE", "/__moonmock/resources/" + urllib.parse.quote(path.lstrip("/")))

    def contract(self) -> Dict[str, JSON]:
        """What the specs (``--spec``, ``mock.spec``) say of the requests so far: per operation
        the requests and violations, the operations never reached (``uncovered``), and the
        violations in all."""
        return self._call("GET", "/__moonmock/contract")

    def assert_contract_clean(self) -> None:
        """Raises ``AssertionError`` listing each violation when a request or an answer broke a
        spec since the start (or the last reset)."""
        status, answer = self._request("POST", "/__moonmock/verify", {"contract": "clean"})
        if status == 200:
            return
        if status != 422:
            raise self._error(status, answer)
        lines = [answer.get("message", "the contract was broken")]
        for v in answer.get("violations", [])[:20]:
            for e in v.get("errors", []):
                at = e.get("instance_path") or ""
                lines.append(f"  #{v.get('request_id')} {v.get('operation')} {v.get('direction')}: "
                             + (at + ": " if at else "") + str(e.get("message")))
        raise AssertionError("\n".join(lines))

    # -- switches and lifecycle

    def switch(self, rule: str, variant: Optional[str]) -> None:
        """Makes ``variant`` the active one of ``rule`` (``None``: no stub endpoint active)."""
        self._call("PUT", "/__moonmock/variants/" + urllib.parse.quote(rule, safe=""), {"active": variant})

    def reset(self) -> None:
        """Clears runtime rules, the journal and the state; variants back to their defaults."""
        self._call("POST", "/__moonmock/reset")

    def reload(self) -> str:
        """Reloads the script; raises ``MoonmockError`` with the script's error when it does not load."""
        return self._call("POST", "/__moonmock/reload")["message"]

    def health(self) -> Dict[str, JSON]:
        return self._call("GET", "/__moonmock/health")

    # -- transport

    def _call(self, method: str, path: str, payload: JSON = None) -> JSON:
        status, answer = self._request(method, path, payload)
        if status >= 400:
            raise self._error(status, answer)
        return answer

    def _error(self, status: int, answer: JSON) -> MoonmockError:
        message = answer.get("error") or answer.get("message") if isinstance(answer, dict) else None
        kind = RuleError if isinstance(answer, dict) and "field" in answer else MoonmockError
        return kind(status, str(message or answer), answer)

    def _request(self, method: str, path: str, payload: JSON = None) -> "tuple[int, JSON]":
        data = None if payload is None and method in ("GET", "DELETE") else json.dumps(payload).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        try:
            context = ssl.create_default_context(cafile=self.cafile) if self.url.startswith("https://") else None
            with urllib.request.urlopen(request, timeout=self.timeout, context=context) as response:
                return response.status, _decode(response.read())
        except urllib.error.HTTPError as error:
            return error.code, _decode(error.read())


def _decode(raw: bytes) -> JSON:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return raw.decode(errors="replace")
