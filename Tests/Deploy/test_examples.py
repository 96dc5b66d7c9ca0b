"""examples/deploy and the Dockerfile, read as their tools would: the YAML parses; every
command line they give `moonmock serve` uses flags the binary has; the ConfigMap's mocks.lua
loads; the HEALTHCHECK and probes call `moonmock health`, which answers a running server."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import moonmock
import yaml

ROOT = Path(__file__).resolve().parents[2]
BINARY = os.environ.get("MOONMOCK_BIN", "")


def serve_flags() -> set[str]:
    text = subprocess.run([BINARY, "serve", "--help"], capture_output=True, text=True).stdout
    return set(re.findall(r"(--[a-z][a-z0-9-]*)", text))


def check_args(args: list[str], flags: set[str]) -> None:
    assert args[0] == "mocks.lua", args
    for a in args:
        if a.startswith("--"):
            assert a in flags, f"{a} is not a flag of moonmock serve"


def test_compose_and_kubernetes_examples(tmp_path):
    flags = serve_flags()
    compose = yaml.safe_load((ROOT / "examples/deploy/docker-compose.yml").read_text())
    for name, service in compose["services"].items():
        if "moonmock" in service["image"]:
            check_args(service["command"], flags)
    scripts = []
    for file in (ROOT / "examples/deploy/kubernetes").glob("*.yaml"):
        for doc in yaml.safe_load_all(file.read_text()):
            if doc["kind"] == "ConfigMap":
                scripts.append(doc["data"]["mocks.lua"])
            if doc["kind"] == "Deployment":
                for c in doc["spec"]["template"]["spec"]["containers"]:
                    if "moonmock" in c["image"] and c["image"] != "redis:7-alpine":
                        check_args(c["args"], flags)
                        for probe in ("readinessProbe", "livenessProbe"):
                            if probe in c:
                                assert c[probe]["exec"]["command"][:2] == ["moonmock", "health"]
    assert scripts
    for script in scripts:
        (tmp_path / "mocks.lua").write_text(script)
        out = subprocess.run([BINARY, "check", "mocks.lua"], cwd=tmp_path, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr


def test_dockerfile_runs_serve_and_checks_health():
    text = (ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["moonmock", "serve"]' in text and "EXPOSE 8080" in text and "USER 10001:10001" in text
    check_args(eval(re.search(r"^CMD (\[.*\])$", text, re.M).group(1)), serve_flags())
    assert 'HEALTHCHECK' in text and '"moonmock", "health"' in text


def test_health_command(tmp_path):
    (tmp_path / "mocks.lua").write_text('mock.get("/", "ok")\n')
    with moonmock.serve(tmp_path / "mocks.lua", binary=BINARY, token="t0k") as mm:
        ok = subprocess.run([BINARY, "health", "--url", mm.url, "--token", "t0k"], capture_output=True, text=True)
        assert ok.returncode == 0 and '"status":"ok"' in ok.stdout
        refused = subprocess.run([BINARY, "health", "--url", mm.url], capture_output=True, text=True)
        assert refused.returncode == 1 and "not healthy" in refused.stderr
    gone = subprocess.run([BINARY, "health", "--url", mm.url], capture_output=True, text=True)
    assert gone.returncode == 1 and "no answer" in gone.stderr
