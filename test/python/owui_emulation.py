"""
What Open WebUI does with a tool file, re-implemented from its v0.11 behaviour (host-conventions
sections 1 and 9) so the tests judge dist/fileshed_openwebui.py the way Open WebUI will:
- loading: exec the source into a fresh module and instantiate its Tools class;
- which attributes become tools: public callables that are not classes;
- the LLM spec: a pydantic model of the signature (type hints, defaults, ":param" lines), its JSON
  Schema turned into an OpenAI function (titles removed), cleaned (anyOf [X, null] -> X, default null
  dropped, missing type -> string), reserved "__" properties dropped, and the description replaced by
  the raw docstring text before the first ":param"/":return".
"""

from __future__ import annotations

import copy
import json
import inspect
import re
import sys
import types
import warnings
from pathlib import Path
from typing import Any, Callable, get_type_hints

from pydantic import Field, create_model

ROOT = Path(__file__).resolve().parents[2]
TOOL_FILE = ROOT / "dist" / "fileshed_openwebui.py"
LOADER_REWRITES = ("from utils", "from apps", "from main", "from config")


def load_tool_module(source: str | None = None, module_id: str = "fileshed") -> types.ModuleType:
    """Open WebUI's loader: the stored source exec'd into a new module named tool_{id}."""
    text = TOOL_FILE.read_text(encoding="utf-8") if source is None else source
    name = f"tool_{module_id}"
    module = types.ModuleType(name)
    sys.modules[name] = module  # as Open WebUI does: pydantic resolves nested models' annotations through it
    module.__dict__["__file__"] = str(TOOL_FILE)
    exec(compile(text, name, "exec"), module.__dict__)
    if not hasattr(module, "Tools"):
        raise RuntimeError("No Tools class found")
    return module


def frontmatter(source: str) -> dict[str, str]:
    """Flat `key: value` lines between a first line of exactly three quotes and the next three quotes."""
    lines = source.split("\n")
    found: dict[str, str] = {}
    if not lines or lines[0] != '"""':
        return found
    for line in lines[1:]:
        if '"""' in line:
            break
        match = re.match(r"^\s*([a-z_]+):\s*(.*)\s*$", line, re.IGNORECASE)
        if match:
            found[match.group(1).lower()] = match.group(2)
    return found


def tool_functions(tool: object, *, hide_single_underscore: bool = True) -> list[Callable[..., Any]]:
    """Newer Open WebUI hides every _name; older versions only __dunders__."""
    prefix = "_" if hide_single_underscore else "__"
    return [
        getattr(tool, name)
        for name in dir(tool)
        if callable(getattr(tool, name)) and not name.startswith(prefix) and not inspect.isclass(getattr(tool, name))
    ]


def _description(doc: str | None) -> str:
    if not doc:
        return ""
    kept: list[str] = []
    for line in (part.strip() for part in doc.strip().split("\n")):
        if re.match(r":param", line) or re.match(r":return", line):
            break
        kept.append(line)
    return "\n".join(kept)


def _param_descriptions(doc: str | None) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in (doc or "").splitlines():
        match = re.compile(r":param (\w+):\s*(.+)").match(line.strip())
        if match and not match.group(1).startswith("__"):
            found[match.group(1)] = match.group(2)
    return found


def signature_model(func: Callable[..., Any]) -> Any:
    hints = get_type_hints(func)
    described = _param_descriptions(func.__doc__)
    fields: dict[str, Any] = {}
    for name, param in inspect.signature(func).parameters.items():
        default = param.default if param.default is not param.empty else ...
        hint = hints.get(name, Any)
        fields[name] = (hint, Field(default, description=described[name])) if name in described else (hint, default)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pydantic warns that it ignores the __reserved__ fields
        model = create_model(func.__name__, **fields)
    model.__doc__ = _description(func.__doc__)
    return model


def _without_titles(node: dict[str, Any], parent: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and not (isinstance(value, dict) and parent == "properties"):
            continue
        out[key] = _without_titles(value, key) if isinstance(value, dict) else value
    return out


def _clean(schema: Any) -> None:
    if not isinstance(schema, dict):
        return
    if "anyOf" in schema:
        rest = [t for t in schema["anyOf"] if t.get("type") != "null"]
        if len(rest) == 1:
            schema.update(rest[0])
            del schema["anyOf"]
        else:
            schema["anyOf"] = rest
    if "default" in schema and schema["default"] is None:
        del schema["default"]
    if "type" not in schema and "anyOf" not in schema and "properties" not in schema:
        schema["type"] = "string"
    for sub in (schema.get("properties") or {}).values():
        _clean(sub)
    if "items" in schema:
        _clean(schema["items"])


def saved_spec(func: Callable[..., Any]) -> dict[str, Any]:
    """The spec stored when the tool is saved."""
    schema = signature_model(func).model_json_schema()
    if "$defs" in schema:
        raise AssertionError(f"{func.__name__}: a $ref in the signature would need dereferencing")
    name = schema.pop("title", "")
    description = schema.pop("description", "")
    spec = {"name": name, "description": description, "parameters": _without_titles(schema)}
    cleaned = copy.deepcopy(spec)
    _clean(cleaned["parameters"])
    return cleaned


def chat_spec(func: Callable[..., Any]) -> dict[str, Any]:
    """The spec a chat request sends to the model (get_tools' changes to the saved spec)."""
    spec = saved_spec(func)
    props = spec["parameters"].get("properties", {})
    for value in props.values():
        if value.get("type") == "str":
            value["type"] = "string"
    spec["parameters"]["properties"] = {k: v for k, v in props.items() if not k.startswith("__")}
    doc = func.__doc__
    spec["description"] = re.split(":(param|return)", doc, maxsplit=1)[0] if doc and doc.strip() else spec["name"]
    return spec


# JSON Schema keywords a Python signature cannot carry (the server validates them).
CONSTRAINTS = {"minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "pattern", "minItems", "maxItems"}


def compare(specs: list[dict[str, Any]], registry: list[dict[str, Any]]) -> dict[str, Any]:
    """Open WebUI's specs against dist/tools.json: names, parameters, types, defaults, required, descriptions."""
    ours = {s["name"]: s for s in specs}
    theirs = {t["function"]["name"]: t["function"] for t in registry}
    report: dict[str, Any] = {
        "functions": len(theirs),
        "functions_exact": 0,
        "descriptions_exact_raw": 0,
        "parameters": 0,
        "parameters_exact": 0,
        "constraints_not_carried": 0,
        "differences": [],
        "missing": sorted(set(theirs) - set(ours)),
        "extra": sorted(set(ours) - set(theirs)),
    }
    diffs: list[str] = report["differences"]
    for name, want in theirs.items():
        got = ours.get(name)
        if got is None:
            continue
        ok = True
        if got["description"] == want["description"]:
            report["descriptions_exact_raw"] += 1
        if got["description"].rstrip() != want["description"]:
            ok = False
            diffs.append(f"{name}: description")
        want_props = want["parameters"].get("properties", {})
        got_props = got["parameters"].get("properties", {})
        if list(want_props) != list(got_props):
            ok = False
            diffs.append(f"{name}: parameters {list(got_props)} != {list(want_props)}")
        if set(want["parameters"].get("required", [])) != set(got["parameters"].get("required", [])):
            ok = False
            diffs.append(f"{name}: required {got['parameters'].get('required', [])} != {want['parameters'].get('required', [])}")
        for param, schema in want_props.items():
            report["parameters"] += 1
            expected = {k: v for k, v in schema.items() if k not in CONSTRAINTS}
            if len(expected) != len(schema):
                report["constraints_not_carried"] += 1
            actual = got_props.get(param)
            if actual == expected:
                report["parameters_exact"] += 1
            else:
                ok = False
                diffs.append(f"{name}.{param}: {actual} != {expected}")
        if ok:
            report["functions_exact"] += 1
    return report


# --- Tool results with images -------------------------------------------------------------------
# Reproduced from Open WebUI's backend/open_webui/utils/middleware.py (the version whose chat output
# is made of Responses-style items): process_tool_result turns a result into (text for the model,
# files, embeds); the native tool loop then gives the model each file of type "image" whose url is
# a data: URI as an input_image part, and keeps every other file for display only. Only the
# branches a Fileshed result can reach are kept (no HTMLResponse, no embeds, no file upload: an
# MCP image is stored as a file there, so its url is a file URL, never data:).


def process_tool_result(tool_function_name: str, tool_result: Any, tool_type: str) -> tuple[str, list[dict[str, Any]]]:
    tool_result_files: list[dict[str, Any]] = []
    if isinstance(tool_result, str) and tool_result.startswith("data:image/"):
        tool_result_files.append({"type": "image", "url": tool_result})
        tool_result = f"{tool_function_name}: Image file read successfully."
    if isinstance(tool_result, list):
        if tool_type == "mcp":
            tool_response = []
            for item in tool_result:
                if isinstance(item, dict):
                    if item.get("type") == "text":
                        text = item.get("text", "")
                        if isinstance(text, str):
                            try:
                                text = json.loads(text)
                            except json.JSONDecodeError:
                                pass
                        tool_response.append(text)
                    elif item.get("type") in ["image", "audio"]:
                        tool_result_files.append({"type": item.get("type", "data"), "url": "/api/v1/files/<uploaded>/content"})
            tool_result = tool_response[0] if len(tool_response) == 1 else tool_response
        else:
            for item in list(tool_result):
                if isinstance(item, str) and item.startswith("data:"):
                    tool_result_files.append({"type": "data", "content": item})
                    tool_result.remove(item)
    if isinstance(tool_result, list):
        tool_result = {"results": tool_result}
    if isinstance(tool_result, (dict, list)):
        tool_result = json.dumps(tool_result, indent=2, ensure_ascii=False)
    return tool_result, tool_result_files


def function_call_output(content: str, files: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The native tool loop: (the parts the model gets, the files kept for display)."""
    output_parts: list[dict[str, Any]] = [{"type": "input_text", "text": content}]
    display_files = []
    for file_item in files:
        if file_item.get("type") == "image" and file_item.get("url", "").startswith("data:"):
            output_parts.append({"type": "input_image", "image_url": file_item["url"]})
        else:
            display_files.append(file_item)
    return output_parts, display_files
