"""Shared fixtures of the Python tests of the Open WebUI tool file (run: python3 -m pytest test/python -q)."""

from __future__ import annotations

import json
import subprocess
import types
from typing import Any

import pytest

import owui_emulation

SUMMARY: list[str] = []


@pytest.fixture(scope="session")
def tool_source() -> str:
    return owui_emulation.TOOL_FILE.read_text(encoding="utf-8")


@pytest.fixture()
def tool_module() -> types.ModuleType:
    return owui_emulation.load_tool_module()


@pytest.fixture(scope="session")
def registry_specs() -> list[dict[str, Any]]:
    """Every function a server can offer (dist/tools.json is the default deployment's, without code
    execution): the tool file holds them all, since Open WebUI stores a tool's specs when it is saved."""
    script = "const m = await import('./dist/fileshed.mjs'); const { SWITCHES_ON } = await import('./build/openwebui.mjs'); process.stdout.write(JSON.stringify(m.specsFor(SWITCHES_ON)));"
    done = subprocess.run(["node", "--input-type=module", "-e", script], cwd=owui_emulation.ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="session")
def valves_schema() -> dict[str, Any]:
    return json.loads((owui_emulation.ROOT / "valves.schema.json").read_text(encoding="utf-8"))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for line in SUMMARY:
        terminalreporter.write_line(line)
