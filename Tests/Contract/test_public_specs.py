"""Real public specs (Tests/Fixtures/public-specs: the OpenAPI Initiative's examples in 2.0,
3.0 and 3.1, and Redocly's museum API) served with mock.openapi and checked with Schemathesis:
server errors, status codes, content types and response schemas. No failure may be the mock's.
Each runs at the spec's base path; a few also at the root, as a client given only the origin
calls them. `convert openapi` of each must load and answer what the spec documents."""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
import yaml

import moonmock

ROOT = pathlib.Path(__file__).resolve().parents[1] / "Fixtures" / "public-specs"
SPECS = sorted(str(p.relative_to(ROOT)) for p in ROOT.rglob("*.yaml")
               if "petstore-separate" not in str(p) or p.name == "swagger.yaml")
AT_ROOT = {"museum/openapi.yaml", "oai-examples/v3.0/petstore.yaml", "oai-examples/v2.0/yaml/petstore.yaml"}
CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"


def base_path(doc: dict) -> str:
    if "swagger" in doc:
        return doc.get("basePath", "").rstrip("/")
    url = (doc.get("servers") or [{"url": "/"}])[0]["url"]
    for name, var in ((doc.get("servers") or [{}])[0].get("variables") or {}).items():
        url = url.replace("{" + name + "}", str(var.get("default", "")))
    rest = url.split("://")[-1]
    return ("/" + rest.split("/", 1)[1] if "/" in rest else "").rstrip("/")


@pytest.mark.parametrize("name", SPECS)
def test_schemathesis_against_mock_openapi(tmp_path, name):
    spec = ROOT / name
    doc = yaml.safe_load(spec.read_text())
    folder = tmp_path / "spec"
    shutil.copytree(spec.parent.parent if "petstore-separate" in name else spec.parent, folder)
    relative = spec.relative_to(spec.parent.parent if "petstore-separate" in name else spec.parent)
    (folder / "mocks.lua").write_text(f'mock.openapi("{relative.as_posix()}")\n')
    bases = [base_path(doc)] + ([""] if name in AT_ROOT and base_path(doc) else [])
    st = shutil.which("schemathesis", path=os.path.dirname(sys.executable)) or "schemathesis"
    with moonmock.serve(folder / "mocks.lua") as mm:
        for base in bases:
            run = subprocess.run([st, "run", str(folder / relative), "--url", mm.url + base, "--checks", CHECKS,
                                  "--max-examples", "6", "--seed", "1"], capture_output=True, text=True, timeout=300, cwd=folder)
            operations = re.search(r"Operations:\s+(\d+) selected", run.stdout)
            if operations and operations.group(1) == "0":
                continue   # webhooks only: nothing to call
            assert run.returncode == 0, f"{name} at '{base or '/'}':\n" + run.stdout[-5000:] + run.stderr[-1000:]
            assert "Base URL may be missing a path" not in run.stdout, run.stdout[-3000:]


@pytest.mark.parametrize("name", SPECS)
def test_convert_openapi_loads_and_answers(tmp_path, name):
    binary = os.environ.get("MOONMOCK_BIN", "moonmock")
    out = tmp_path / "converted"
    convert = subprocess.run([binary, "convert", "openapi", str(ROOT / name), "--out", str(out)], capture_output=True, text=True, timeout=60)
    assert convert.returncode == 0, convert.stderr
    check = subprocess.run([binary, "check", str(out / "mocks.lua")], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0, check.stderr + check.stdout
