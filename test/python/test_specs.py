"""The LLM specs Open WebUI builds from the tool file's signatures and docstrings, against dist/tools.json."""

from __future__ import annotations

import types
from typing import Any

import conftest
import owui_emulation as owui

# Parameters whose Open WebUI spec cannot equal the registry's, and why.
KNOWN = {
    # Open WebUI's schema cleaner drops "null" from an anyOf, so items lose null (the server still accepts it).
    "shed_sqlite.params",
}


def test_specs_match_the_registry(tool_module: types.ModuleType, registry_specs: list[dict[str, Any]]) -> None:
    tools = tool_module.Tools()
    specs = [owui.chat_spec(f) for f in owui.tool_functions(tools)]
    report = owui.compare(specs, registry_specs)
    conftest.SUMMARY.append(
        "Open WebUI spec comparison: "
        f"{report['functions_exact']}/{report['functions']} functions and "
        f"{report['parameters_exact']}/{report['parameters']} parameters match dist/tools.json exactly "
        f"(descriptions byte-exact without trailing whitespace; {report['descriptions_exact_raw']} byte-exact raw; "
        f"{report['constraints_not_carried']} parameters carry min/max constraints a signature cannot express)."
    )
    assert report["missing"] == [] and report["extra"] == []
    unexpected = [d for d in report["differences"] if d.split(":")[0] not in KNOWN]
    assert unexpected == []
    assert report["parameters_exact"] == report["parameters"] - len(KNOWN)


def test_saved_spec_keeps_one_line_parameter_descriptions(tool_module: types.ModuleType, registry_specs: list[dict[str, Any]]) -> None:
    # The spec stored at save time (before get_tools rewrites the description) is already right too.
    tools = tool_module.Tools()
    want = {f["function"]["name"]: f["function"] for f in registry_specs}
    for func in owui.tool_functions(tools):
        saved = owui.saved_spec(func)
        assert saved["description"].rstrip() == want[func.__name__]["description"]
        for param, schema in want[func.__name__]["parameters"]["properties"].items():
            assert saved["parameters"]["properties"][param].get("description") == schema.get("description")


def test_defaults_are_the_registry_defaults(tool_module: types.ModuleType, registry_specs: list[dict[str, Any]]) -> None:
    import inspect

    tools = tool_module.Tools()
    for spec in registry_specs:
        params = inspect.signature(getattr(tools, spec["function"]["name"])).parameters
        required = set(spec["function"]["parameters"].get("required", []))
        for name, schema in spec["function"]["parameters"]["properties"].items():
            default = params[name].default
            if name in required:
                assert default is inspect.Parameter.empty, name
            elif "default" in schema:
                assert default == schema["default"] and type(default) is type(schema["default"]), name
            else:
                assert default is None, name
