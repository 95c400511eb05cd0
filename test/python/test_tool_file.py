"""The tool file as Open WebUI loads it: frontmatter, the Tools surface, valves, and the loader's traps."""

from __future__ import annotations

import inspect
import py_compile
import subprocess
import sys
import types
from typing import Any

import owui_emulation as owui


def test_frontmatter_has_the_keys_open_webui_reads(tool_source: str) -> None:
    front = owui.frontmatter(tool_source)
    for key in ("title", "author", "version", "license", "description", "required_open_webui_version"):
        assert front.get(key), key
    assert front["title"] == "Fileshed"
    assert "requirements" not in front  # nothing to pip-install: only what Open WebUI ships


def test_no_text_the_loader_rewrites(tool_source: str) -> None:
    lowered = tool_source.lower()
    for text in owui.LOADER_REWRITES:
        assert text not in lowered


def test_imports_only_what_open_webui_ships(tool_source: str) -> None:
    imported = {line.split()[1].split(".")[0] for line in tool_source.splitlines() if line.startswith(("import ", "from "))}
    assert imported <= {"asyncio", "base64", "io", "json", "os", "re", "typing", "urllib", "aiohttp", "pydantic"}, imported


def test_only_shed_functions_are_tools(tool_module: types.ModuleType, registry_specs: list[dict[str, Any]]) -> None:
    tools = tool_module.Tools()
    names = {f["function"]["name"] for f in registry_specs}
    for hide_single in (True, False):  # newer and older Open WebUI rules
        exposed = {f.__name__ for f in owui.tool_functions(tools, hide_single_underscore=hide_single)}
        assert exposed == names
    # Nothing but the valves, the two models, dunders and shed_* on the class or the instance.
    extra = [n for n in dir(tools) if not n.startswith("__") and n not in ("valves", "Valves", "UserValves") and not n.startswith("shed_")]
    assert extra == []
    for name in names:
        assert inspect.iscoroutinefunction(getattr(tools, name)), name


def test_valves_render_in_the_admin_ui(tool_module: types.ModuleType, valves_schema: dict[str, Any]) -> None:
    tools = tool_module.Tools()
    assert isinstance(tools.valves, tool_module.Tools.Valves)  # stored valves apply only with self.valves
    schema = tool_module.Tools.Valves.model_json_schema()
    props = schema["properties"]
    assert props["server_url"]["default"] == "http://localhost:8765"
    assert props["api_key"]["input"] == {"type": "password"}
    assert props["timeout_seconds"]["type"] == "integer"
    assert list(props)[:3] == ["server_url", "api_key", "timeout_seconds"]
    plugin = valves_schema["properties"]
    overridable = [k for k in plugin if k != "storage_base_path"]  # the server always keeps its own storage base
    assert list(props)[3:] == overridable
    for key in overridable:
        assert props[key]["default"] is None, key
        assert props[key]["title"] == plugin[key]["title"], key
        assert props[key]["description"] == plugin[key]["description"], key
        assert schema.get("required", []) == []
        if "enum" in plugin[key]:  # Optional[Literal] is an anyOf: without this the admin UI shows free text
            assert props[key]["input"] == {"type": "select", "options": plugin[key]["enum"]}, key
    # Every override accepts the registry's default, and pydantic enforces the registry's bounds and enums.
    tool_module.Tools.Valves(**{k: plugin[k]["default"] for k in overridable})
    for key, spec in plugin.items():
        if key in overridable and isinstance(spec.get("minimum"), int):
            try:
                tool_module.Tools.Valves(**{key: spec["minimum"] - 1})
            except ValueError:
                continue
            raise AssertionError(f"{key} accepted a value under its minimum")
    try:
        tool_module.Tools.Valves(network_mode="everything")
    except ValueError:
        pass
    else:
        raise AssertionError("an enum valve accepted a value outside its list")


def test_user_valves_mirror_the_plugin(tool_module: types.ModuleType, valves_schema: dict[str, Any]) -> None:
    schema = tool_module.Tools.UserValves.model_json_schema()
    plugin = valves_schema["$defs"]["UserValves"]["properties"]
    assert list(schema["properties"]) == list(plugin)
    for key, spec in plugin.items():
        got = schema["properties"][key]
        assert (got["default"], got["title"], got["description"]) == (spec["default"], spec["title"], spec["description"])
        if spec.get("format") == "password":
            assert got["input"] == {"type": "password"}


def test_reserved_arguments_only_where_used(tool_module: types.ModuleType, registry_specs: list[dict[str, Any]]) -> None:
    tools = tool_module.Tools()
    with_files = []
    with_events = []
    for spec in registry_specs:
        params = inspect.signature(getattr(tools, spec["function"]["name"])).parameters
        reserved = [p for p in params if p.startswith("__")]
        assert reserved[:2] == ["__user__", "__metadata__"]
        if "__files__" in reserved:
            with_files.append(spec["function"]["name"])
        if "__event_emitter__" in reserved:
            with_events.append(spec["function"]["name"])
        assert set(reserved) <= {"__user__", "__metadata__", "__files__", "__event_emitter__"}
    assert with_files == ["shed_import"]
    assert "shed_import" in with_events and "shed_zip" in with_events and "shed_read" not in with_events


def test_py_compile(tmp_path: Any) -> None:
    py_compile.compile(str(owui.TOOL_FILE), cfile=str(tmp_path / "tool.pyc"), doraise=True)


def test_mypy_strict() -> None:
    done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(owui.TOOL_FILE)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
