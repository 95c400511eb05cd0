"""Shared fixtures of the Python tests of the Open WebUI tool file (run: python3 -m pytest test/python -q)."""

from __future__ import annotations

import json
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
    return json.loads((owui_emulation.ROOT / "dist" / "tools.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def valves_schema() -> dict[str, Any]:
    return json.loads((owui_emulation.ROOT / "valves.schema.json").read_text(encoding="utf-8"))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for line in SUMMARY:
        terminalreporter.write_line(line)
