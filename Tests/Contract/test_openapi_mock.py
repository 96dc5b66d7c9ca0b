"""mock.openapi as other tools see it: every operation's answer validated with Python's
`jsonschema` against the spec's own schemas, and Schemathesis run against the served specs
(server errors, status codes, content types and response schemas)."""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import urllib.error
import urllib.request

import jsonschema
import pytest
import referencing
import yaml

import moonmock

FIXTURES = pathlib.Path(__file__).resolve().parents[1] / "Fixtures" / "contract"
SPECS = ["petstore.yaml", "tricky.yaml", "museum.json"]


def load(name: str) -> dict:
    text = (FIXTURES / name).read_text()
    return json.loads(text) if name.endswith(".json") else yaml.safe_load(text)


def as_json_schema(value, openapi30: bool):
    """OpenAPI 3.0's dialect as JSON Schema: nullable as a null alternative, the exclusive
    bounds as numbers, required writeOnly properties left out, the rest as it is."""
    if isinstance(value, list):
        return [as_json_schema(v, openapi30) for v in value]
    if not isinstance(value, dict):
        return value
    out = {k: as_json_schema(v, openapi30) for k, v in value.items() if k not in ("example", "examples", "discriminator", "xml")}
    # In an answer, a required writeOnly property is not required (OpenAPI's rule).
    props = value.get("properties")
    if isinstance(props, dict) and isinstance(value.get("required"), list):
        out["required"] = [n for n in value["required"] if not (isinstance(props.get(n), dict) and props[n].get("writeOnly"))]
    if openapi30:
        for bound, flag in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
            if out.get(flag) is True:
                out[flag] = out.pop(bound)
            elif flag in out and isinstance(out[flag], bool):
                del out[flag]
        if out.pop("nullable", False):
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def registry(name: str) -> referencing.Registry:
    resources = []
    for file in FIXTURES.iterdir():
        if file.suffix in (".yaml", ".json") and file.name != "mocks.lua":
            doc = as_json_schema(load(file.name), load(name).get("openapi", "3.1").startswith("3.0"))
            resources.append((file.name, referencing.Resource.from_contents(doc, default_specification=referencing.jsonschema.DRAFT202012)))
    return referencing.Registry().with_resources(resources)


def call(url: str, method: str = "GET", **headers: str):
    request = urllib.request.Request(url, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def concrete(template: str) -> str:
    return template.replace("{petId}", "7").replace("{name}.{ext}", "report.txt")


@pytest.mark.parametrize("name", SPECS)
def test_every_operation_answers_a_body_its_schema_accepts(tmp_path, name):
    for file in FIXTURES.iterdir():
        shutil.copy(file, tmp_path / file.name)
    (tmp_path / "mocks.lua").write_text(f'mock.openapi("{name}")\n')
    spec = load(name)
    base = (spec.get("servers") or [{"url": "/"}])[0]["url"].split("://")[-1]
    base = "/" + base.split("/", 1)[1] if "/" in base else ""
    base = base.rstrip("/")
    validator_registry = registry(name)
    checked = 0
    with moonmock.serve(tmp_path / "mocks.lua") as mm:
        for path, item in spec["paths"].items():
            for method, operation in item.items():
                if method not in ("get", "post", "put", "delete", "patch"):
                    continue
                status, headers, body = call(mm.url + base + concrete(path), method.upper(),
                                             **{"X-Request-ID": "6f1c7b9e-2d1a-4c3b-9a8e-1f2e3d4c5b6a"})
                assert 200 <= status < 300, (method, path, status, body)
                documented = operation["responses"].get(str(status))
                assert documented is not None, (method, path, status)
                if "$ref" in documented:
                    continue
                content = documented.get("content") or {}
                if not content:
                    assert body == b""
                    continue
                kind = headers["Content-Type"]
                assert kind in content, (path, kind, list(content))
                if "json" not in kind:
                    continue
                pointer = "/paths/" + path.replace("~", "~0").replace("/", "~1") + f"/{method}/responses/{status}/content/" + kind.replace("/", "~1") + "/schema"
                validator = jsonschema.Draft202012Validator({"$ref": f"{name}#{pointer}"}, registry=validator_registry)
                errors = [e.message for e in validator.iter_errors(json.loads(body))]
                assert not errors, (method, path, body, errors)
                checked += 1
        broken = [v for o in mm.contract()["operations"] for v in o["violations"] if v["direction"] == "response"]
        assert not broken, broken
    assert checked >= 2


@pytest.mark.parametrize("name", SPECS + ["swagger2.json"])
def test_schemathesis_finds_nothing_that_is_the_mocks(tmp_path, name):
    for file in FIXTURES.iterdir():
        shutil.copy(file, tmp_path / file.name)
    (tmp_path / "mocks.lua").write_text(f'mock.openapi("{name}")\n')
    spec = load(name)
    url = (spec.get("servers") or [{"url": "/"}])[0]["url"]
    base = "/" + url.split("://")[-1].split("/", 1)[1] if "/" in url.split("://")[-1] else ""
    base = spec.get("basePath", base)   # Swagger 2.0
    with moonmock.serve(tmp_path / "mocks.lua") as mm:
        st = shutil.which("schemathesis", path=os.path.dirname(sys.executable)) or "schemathesis"
        run = subprocess.run([st, "run", str(tmp_path / name), "--url", mm.url + base.rstrip("/"),
                              "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
                              "--max-examples", "15", "--seed", "1"],
                             capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
        assert "No issues found" in run.stdout
