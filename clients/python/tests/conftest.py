import os
import pathlib

import pytest

pytest_plugins = ["pytester"]

HERE = pathlib.Path(__file__).parent
SCRIPT = HERE / "scripts" / "mocks.lua"


@pytest.fixture
def script() -> str:
    return str(SCRIPT)


def pytest_report_header() -> str:
    return f"moonmock binary: {os.environ.get('MOONMOCK_BIN', '(PATH)')}"
