"""The packaged binary (scripts/package) on a machine without Swift: unpacked into a fresh
folder, run with an empty environment (no PATH, no LD_LIBRARY_PATH, no Swift anywhere), it
loads nothing but the C library's family, libstdc++, libgcc and what the tarball ships."""
import os
import re
import signal
import subprocess
import tarfile
import urllib.request

import pytest

TARBALL = os.environ.get("MOONMOCK_PACKAGE", "")
SYSTEM = re.compile(r"^(linux-vdso|ld-linux[-\w]*|libc|libm|libdl|libpthread|librt|libresolv|libstdc\+\+|libgcc_s)\.so")


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory):
    if not TARBALL:
        pytest.fail("MOONMOCK_PACKAGE names no tarball: run scripts/package first")
    assert re.search(r"moonmock-\d+\.\d+\.\d+-linux-(x86_64|aarch64)\.tar\.gz$", TARBALL), TARBALL
    into = tmp_path_factory.mktemp("unpacked")
    with tarfile.open(TARBALL) as tar:
        tar.extractall(into, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    (root,) = list(into.iterdir())
    return root


def test_the_tarball_holds_the_binary_examples_types_and_license(unpacked):
    for part in ["bin/moonmock", "examples/mocks.lua", "types/moonmock.lua", "LICENSE", "clients/python/pyproject.toml"]:
        assert (unpacked / part).exists(), part


def test_ldd_names_no_swift_library_and_nothing_outside_libc_and_the_tarball(unpacked):
    out = subprocess.run(["ldd", str(unpacked / "bin/moonmock")], capture_output=True, text=True, env={}, check=True).stdout
    for line in out.strip().splitlines():
        name = line.split()[0]
        assert "swift" not in line.lower() and "not found" not in line, line
        resolved = line.split("=>")[1].split("(")[0].strip() if "=>" in line else ""
        inside = resolved.startswith(str(unpacked / "lib") + "/") or resolved.startswith(str(unpacked / "bin/../lib") + "/")
        assert SYSTEM.match(os.path.basename(name)) or inside, line


def test_it_serves_the_example_from_an_empty_environment(unpacked):
    process = subprocess.Popen([str(unpacked / "bin/moonmock"), "serve", "examples/mocks.lua", "--port", "0", "--no-watch"],
                               cwd=unpacked, env={}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        match = re.search(r" on (http://127\.0\.0\.1:\d+)$", line.strip())
        assert match, line + process.stderr.read()
        with urllib.request.urlopen(match.group(1) + "/users/7", timeout=10) as response:
            assert response.read() == b'{"id":7,"name":"User 7"}'
        with urllib.request.urlopen(match.group(1) + "/__moonmock/health", timeout=10) as response:
            assert b'"status":"ok"' in response.read()
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(10) == 0
        process.stdout.close()
        process.stderr.close()


def test_version_and_help_run_without_swift(unpacked):
    version = subprocess.run([str(unpacked / "bin/moonmock"), "version"], capture_output=True, text=True, env={}, timeout=10)
    assert version.returncode == 0 and version.stdout.startswith("moonmock ")


def test_mock_proxy_works_from_the_tarball(unpacked, tmp_path):
    """libcurl and its libraries come from lib/: a proxy rule forwards to the example server."""
    binary = str(unpacked / "bin/moonmock")
    first = subprocess.Popen([binary, "serve", "examples/mocks.lua", "--port", "0", "--no-watch"], cwd=unpacked, env={},
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        upstream = re.search(r" on (http://127\.0\.0\.1:\d+)$", first.stdout.readline().strip()).group(1)
        script = tmp_path / "proxy.lua"
        script.write_text(f'mock.get("/*rest", mock.proxy("{upstream}"))\n')
        second = subprocess.Popen([binary, "serve", str(script), "--port", "0", "--no-watch"], env={},
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        try:
            url = re.search(r" on (http://127\.0\.0\.1:\d+)$", second.stdout.readline().strip()).group(1)
            with urllib.request.urlopen(url + "/users/7", timeout=10) as response:
                assert response.read() == b'{"id":7,"name":"User 7"}'
        finally:
            second.send_signal(signal.SIGTERM)
            assert second.wait(10) == 0
            second.stdout.close()
    finally:
        first.send_signal(signal.SIGTERM)
        assert first.wait(10) == 0
        first.stdout.close()
