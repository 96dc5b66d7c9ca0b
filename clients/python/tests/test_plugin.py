"""The pytest plugin, run in an inner pytest session (pytester)."""
import pathlib

SCRIPT = pathlib.Path(__file__).parent / "scripts" / "mocks.lua"


def test_the_fixture_serves_the_script_of_the_ini_option_and_resets_between_tests(pytester):
    pytester.makeini(f"[pytest]\nmoonmock_script = {SCRIPT}\n")
    pytester.makepyfile(
        """
        import urllib.request

        def test_one(moonmock):
            moonmock.stub("GET", "/only-in-one", text="one")
            assert urllib.request.urlopen(moonmock.url + "/only-in-one").read() == b"one"
            moonmock.state["k"] = 1

        def test_two(moonmock):
            assert moonmock.rules()[0]["source"] == "script"
            assert dict(moonmock.state) == {}
            assert moonmock.requests() == []
            assert urllib.request.urlopen(moonmock.url + "/users/3").read() == b'{"id":3,"name":"User 3"}'
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=2)


def test_the_command_line_option_and_the_marker(pytester, tmp_path):
    other = tmp_path / "other.lua"
    other.write_text('mock.get("/which", "other")\n')
    pytester.makepyfile(
        f"""
        import pytest, urllib.request

        def test_option(moonmock):
            assert urllib.request.urlopen(moonmock.url + "/users/1").status == 200

        @pytest.mark.moonmock(script={str(other)!r})
        def test_marker(moonmock):
            assert urllib.request.urlopen(moonmock.url + "/which").read() == b"other"
        """
    )
    result = pytester.runpytest("--moonmock-script", str(SCRIPT))
    result.assert_outcomes(passed=2)


def test_a_failing_verify_shows_the_near_miss_in_the_report(pytester):
    pytester.makepyfile(
        """
        import urllib.request, urllib.error

        def test_missed(moonmock):
            try:
                urllib.request.urlopen(moonmock.url + "/userz/1")
            except urllib.error.HTTPError:
                pass
            moonmock.verify("GET", "/users/:id")
        """
    )
    before = servers()
    result = pytester.runpytest("--moonmock-script", str(SCRIPT))
    result.assert_outcomes(failed=1)
    assert servers() == before, "the session's server outlived it"
    result.stdout.fnmatch_lines(["*AssertionError: expected GET /users/:id at least 1 time(s), got 0*",
                                 "*closest: GET http://127.0.0.1:*/userz/1: path: expected /users/:id, got /userz/1*"])


def servers():
    """The pids of running `moonmock serve` processes (read from /proc: no procps needed)."""
    found = set()
    for entry in pathlib.Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if len(argv) > 1 and argv[0].endswith(b"moonmock") and argv[1] == b"serve":
            found.add(entry.name)
    return found
