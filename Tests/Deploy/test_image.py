"""The container image scripts/image builds (MOONMOCK_IMAGE names the .oci.tar): inspected with
skopeo (entrypoint, user, working folder and volume, port, labels, HEALTHCHECK, size), unpacked
with umoci, and its entrypoint started as the image's user in a chroot inside a private mount
namespace (/proc, /dev and /sys mounted there; podman cannot run containers on these machines),
serving examples/mocks.lua to a request from this test; its HEALTHCHECK command answers too."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

IMAGE = os.environ.get("MOONMOCK_IMAGE", "")

# Runs inside `unshare --mount --fork`: mounts, chroot, user, folder, then the image's command.
LAUNCH = r"""
import json, os, subprocess, sys
rootfs, config = sys.argv[1], json.load(open(sys.argv[2]))
for kind, target in (("proc", "proc"), ("dev", "dev"), ("sys", "sys")):
    os.makedirs(os.path.join(rootfs, target), exist_ok=True)
    if kind == "proc":
        subprocess.run(["mount", "-t", "proc", "proc", os.path.join(rootfs, "proc")], check=True)
    else:
        subprocess.run(["mount", "--rbind", "/" + target, os.path.join(rootfs, target)], check=True)
process = config["process"]
os.chroot(rootfs)
os.chdir(process.get("cwd", "/"))
os.setgroups([])
os.setgid(process["user"]["gid"])
os.setuid(process["user"]["uid"])
args = json.loads(sys.argv[3])
env = dict(e.split("=", 1) for e in process.get("env", []))
os.execvpe(args[0], args, env)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    if not IMAGE or not os.path.exists(IMAGE):
        pytest.fail("MOONMOCK_IMAGE names no image: build one with scripts/image")
    folder = tmp_path_factory.mktemp("image")
    # The archive holds Docker's manifest (its config keeps the HEALTHCHECK); umoci reads OCI
    # layouts: skopeo converts, then umoci unpacks the root file system and the runtime config.
    subprocess.run(["skopeo", "copy", "--quiet", "--format", "oci", f"oci-archive:{IMAGE}", f"oci:{folder / 'layout'}:moonmock"],
                   check=True, capture_output=True)
    unpacked = subprocess.run(["umoci", "unpack", "--image", f"{folder / 'layout'}:moonmock", str(folder / "bundle")],
                              capture_output=True, text=True)
    assert unpacked.returncode == 0, unpacked.stderr
    return folder / "bundle"


def test_image_config_and_size():
    inspect = json.loads(subprocess.run(["skopeo", "inspect", "--config", f"oci-archive:{IMAGE}"], check=True,
                                        capture_output=True, text=True).stdout)
    config = inspect["config"]
    assert config["Entrypoint"] == ["moonmock", "serve"]
    assert config["Cmd"] == ["mocks.lua", "--host", "0.0.0.0", "--port", "8080"]
    assert config["User"] == "10001:10001" and config["WorkingDir"] == "/mocks"
    assert "8080/tcp" in config["ExposedPorts"] and "/mocks" in config["Volumes"]
    labels = config["Labels"]
    assert labels["org.opencontainers.image.licenses"] == "Apache-2.0" and labels["org.opencontainers.image.version"]
    raw = json.loads(subprocess.run(["skopeo", "inspect", "--raw", "--config", f"oci-archive:{IMAGE}"], check=True,
                                    capture_output=True, text=True).stdout)
    assert raw["config"]["Healthcheck"]["Test"] == ["CMD", "moonmock", "health", "--url", "http://127.0.0.1:8080"], raw["config"]
    # Compressed size: the archive of gzip layers.
    assert os.path.getsize(IMAGE) < 60 * 1024 * 1024, os.path.getsize(IMAGE)


def test_the_entrypoint_serves_the_example_in_a_chroot(image):
    config = json.load(open(image / "config.json"))
    args = list(config["process"]["args"])
    assert args[:2] == ["moonmock", "serve"] and config["process"]["user"]["uid"] == 10001
    port = free_port()
    args[args.index("--host") + 1] = "127.0.0.1"
    args[args.index("--port") + 1] = str(port)
    server = subprocess.Popen(["unshare", "--mount", "--fork", sys.executable, "-c", LAUNCH, str(image / "rootfs"),
                               str(image / "config.json"), json.dumps(args)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = server.stdout.readline()
        assert re.search(r"serving mocks\.lua", line), line + (server.stdout.read() if server.poll() is not None else "")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/users/7", timeout=5) as r:
            assert json.loads(r.read()) == {"id": 7, "name": "User 7"}
        # The HEALTHCHECK's command, run in the image's file system too.
        check = subprocess.run(["unshare", "--mount", "--fork", sys.executable, "-c", LAUNCH, str(image / "rootfs"), str(image / "config.json"),
                                json.dumps(["moonmock", "health", "--url", f"http://127.0.0.1:{port}"])],
                               capture_output=True, text=True, timeout=30)
        assert check.returncode == 0 and '"status":"ok"' in check.stdout, check.stdout + check.stderr
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
