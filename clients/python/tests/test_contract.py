"""Specs kept by the server (--spec, mock.spec), driven from Python: the summary, the clean
check, and enforce's refusals as a client sees them."""
from __future__ import annotations

import json
import pathlib
import urllib.error
import urllib.request

import pytest

import moonmock

FIXTURES = pathlib.Path(__file__).resolve().parents[3] / "Tests" / "Fixtures" / "contract"


def call(url: str, method: str = "GET", body: bytes | None = None, **headers: str):
    request = urllib.request.Request(url, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_a_script_spec_reports_a_broken_answer_and_assert_contract_clean_names_it():
    with moonmock.serve(FIXTURES / "mocks.lua") as mm:
        assert call(mm.url + "/v1/pets")[0] == 200
        mm.assert_contract_clean()
        status, _, _ = call(mm.url + "/v1/pets?broken=1")
        assert status == 200, "warn mode serves it"
        summary = mm.contract()
        assert summary["violations"] == 1
        pets = next(o for o in summary["operations"] if o["operation"] == "listPets")
        assert pets["requests"] == 2
        assert pets["violations"][0]["direction"] == "response"
        assert "POST /pets (createPet)" in summary["uncovered"]
        entry = mm.requests()[-1]
        assert entry["contract"]["operation"] == "listPets"
        assert entry["contract"]["response"][0]["instance_path"] == "/body/0/name"
        with pytest.raises(AssertionError) as raised:
            mm.assert_contract_clean()
        assert "/body/0/name" in str(raised.value) and "listPets" in str(raised.value)
        mm.reset()
        mm.assert_contract_clean()
        assert any(line.startswith("contract: GET /v1/pets") for line in mm.output)


def test_enforce_refuses_a_bad_request_with_problem_json_and_a_bad_answer_with_500(tmp_path):
    script = tmp_path / "mocks.lua"
    script.write_text('mock.post("/v1/pets", function(req) return mock.json({ id = "x", name = "Rex" }, { status = 201 }) end)\n')
    with moonmock.serve(script, spec=FIXTURES / "petstore.yaml", spec_mode="enforce") as mm:
        status, headers, body = call(mm.url + "/v1/pets", "POST", b'{"name": 7}', **{"Content-Type": "application/json"})
        assert status == 400
        assert headers["Content-Type"] == "application/problem+json"
        problem = json.loads(body)
        assert problem["operation"] == "createPet"
        assert problem["violations"][0]["instance_path"] == "/body/name"
        status, _, body = call(mm.url + "/v1/pets", "POST", b'{"name": "Rex"}', **{"Content-Type": "application/json"})
        assert status == 500
        assert json.loads(body)["rule"] == "mocks.lua:1"
        status, headers, _ = call(mm.url + "/v1/pets/7", "PATCH")
        assert status == 405 and headers["Allow"] == "DELETE, GET"
        # The connection and the server are fine after each refusal.
        assert call(mm.url + "/__moonmock/health")[0] == 200
        assert mm.contract()["violations"] == 3
