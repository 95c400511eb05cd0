"""
The tool file against the real `fileshed serve` (node dist/cli.mjs serve --port 0 --auth api-key):
every function called through it gives what the same call gives directly on the plugin module;
status events are relayed; valve overrides apply (and a local-mode server refuses them); attachments
arrive with their names and bytes; a stopped server is an error string, not an exception.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import select
import subprocess
import tempfile
import types
from pathlib import Path
from typing import Any, Iterator

import pytest

import conftest
import owui_emulation as owui

CLI = owui.ROOT / "dist" / "cli.mjs"
HAS_SERVE = (owui.ROOT / "dist" / "server.mjs").exists() and "serve" in CLI.read_text(encoding="utf-8")
pytestmark = pytest.mark.skipif(not HAS_SERVE, reason="dist/cli.mjs has no `serve` command yet (not built)")

USER = {"id": "alice", "name": "Alice Ünïcode", "email": "alice@example.com", "role": "admin"}
CHAT = "chat-1"
KEY = "K-test-key"


class Server:
    def __init__(self, auth: str, base: str, extra: list[str] | None = None) -> None:
        self.base = base
        args = ["node", str(CLI), "serve", "--port", "0", "--base", base, "--auth", auth, "--access-log", "off", *(extra or [])]
        if auth == "api-key":
            args += ["--api-key", KEY]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=owui.ROOT)
        ready, _, _ = select.select([self.proc.stdout], [], [], 60)  # never hang the suite on a silent server
        first = self.proc.stdout.readline().strip() if ready and self.proc.stdout else ""
        match = re.fullmatch(r"Fileshed listening on (http://\S+)", first)
        if not match:
            self.stop()
            raise RuntimeError(f"serve did not start: {first!r} {self.proc.stderr.read() if self.proc.stderr else ''}")
        self.url = match.group(1)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()


@pytest.fixture()
def api_server() -> Iterator[Server]:
    with tempfile.TemporaryDirectory(prefix="owui-serve-") as base:
        server = Server("api-key", base)
        try:
            yield server
        finally:
            server.stop()


def tools_for(module: types.ModuleType, url: str, **valves: Any) -> Any:
    tools = module.Tools()
    tools.valves = module.Tools.Valves(**{"server_url": url, "api_key": KEY, **valves})
    return tools


def cli(*args: str) -> None:
    subprocess.run(["node", str(CLI), *args], check=True, capture_output=True, cwd=owui.ROOT, timeout=60)


# One scenario touching every function; "files" are attachments (name -> bytes) for shed_import.
SCENARIO: list[dict[str, Any]] = [
    # Off on this server (allow_python / allow_shell): both answer FUNCTION_DISABLED naming the setting.
    {"name": "shed_run_python", "args": {"zone": "storage", "code": "print(1)"}},
    {"name": "shed_run_shell", "args": {"zone": "storage", "script": "echo 1"}},
    {"name": "shed_help"},
    {"name": "shed_help", "args": {"howto": "upload"}},
    {"name": "shed_allowed_commands"},
    {"name": "shed_create_file", "args": {"zone": "storage", "path": "notes.txt", "content": "alpha\nbeta\ngamma\n"}},
    {"name": "shed_read", "args": {"zone": "storage", "path": "notes.txt", "start_line": 2}},
    {"name": "shed_patch_text", "args": {"zone": "storage", "path": "notes.txt", "content": "delta", "position": "end"}},
    {"name": "shed_patch_bytes", "args": {"zone": "storage", "path": "notes.txt", "content": "41", "position": "start"}},
    {"name": "shed_read_bytes", "args": {"zone": "storage", "path": "notes.txt", "length": 8}},
    {"name": "shed_hexdump", "args": {"zone": "storage", "path": "notes.txt", "length": 32}},
    {"name": "shed_file_type", "args": {"zone": "storage", "path": "notes.txt"}},
    {"name": "shed_convert_eol", "args": {"zone": "storage", "path": "notes.txt", "to": "dos"}},
    {"name": "shed_exec", "args": {"zone": "storage", "cmd": "wc", "args": ["-l", "notes.txt"]}},
    {"name": "shed_rename", "args": {"zone": "storage", "old_path": "notes.txt", "new_path": "docs/notes.txt"}},
    {"name": "shed_tree", "args": {"zone": "storage"}},
    {"name": "shed_create_file", "args": {"zone": "storage", "path": "sales.csv", "content": "region,total\nNorth,10\nSouth,20\n"}},
    {"name": "shed_sqlite", "args": {"zone": "storage", "path": "sales.db", "import_csv": "sales.csv", "table": "sales"}},
    {"name": "shed_sqlite", "args": {"zone": "storage", "path": "sales.db", "query": "SELECT region, total FROM sales WHERE total > ?", "params": [5]}},
    {"name": "shed_zip", "args": {"zone": "storage", "src": "docs", "dest": "docs.zip"}},
    {"name": "shed_zipinfo", "args": {"zone": "storage", "path": "docs.zip"}},
    {"name": "shed_unzip", "args": {"zone": "storage", "src": "docs.zip", "dest": "unzipped"}},
    {"name": "shed_lockedit_open", "args": {"zone": "storage", "path": "sales.csv"}},
    {"name": "shed_lockedit_exec", "args": {"zone": "storage", "path": "sales.csv", "cmd": "sort", "args": ["-o", "sales.csv", "sales.csv"]}},
    {"name": "shed_lockedit_overwrite", "args": {"zone": "storage", "path": "sales.csv", "content": "region,total\nWest,5\n"}},
    {"name": "shed_lockedit_save", "args": {"zone": "storage", "path": "sales.csv"}},
    {"name": "shed_lockedit_open", "args": {"zone": "storage", "path": "docs/notes.txt"}},
    {"name": "shed_lockedit_cancel", "args": {"zone": "storage", "path": "docs/notes.txt"}},
    {"name": "shed_lockedit_open", "args": {"zone": "storage", "path": "sales.csv"}},
    {"name": "shed_force_unlock", "args": {"zone": "storage", "path": "sales.csv"}},
    {"name": "shed_import", "args": {"import_all": True}, "files": {"résumé \"v2\".txt": b"attached one\n", "raw.bin": bytes(range(256))}},
    {"name": "shed_move_uploads_to_storage", "args": {"src": "raw.bin", "dest": "raw.bin"}},
    {"name": "shed_move_uploads_to_documents", "args": {"src": "résumé \"v2\".txt", "dest": "resume.txt"}},
    {"name": "shed_copy_storage_to_documents", "args": {"src": "sales.csv", "dest": "sales.csv"}},
    {"name": "shed_move_documents_to_storage", "args": {"src": "sales.csv", "dest": "sales-back.csv"}},
    {"name": "shed_delete", "args": {"zone": "storage", "path": "unzipped"}},
    {"name": "shed_undo"},
    {"name": "shed_group_list"},
    {"name": "shed_group_info", "args": {"group": "team"}},
    {"name": "shed_copy_to_group", "args": {"src_zone": "storage", "src_path": "raw.bin", "group": "team", "dest_path": "raw.bin"}},
    {"name": "shed_group_set_mode", "args": {"group": "team", "path": "raw.bin", "mode": "owner"}},
    {"name": "shed_group_chown", "args": {"group": "team", "path": "raw.bin", "new_owner": "bob"}},
    {"name": "shed_link_create", "args": {"zone": "storage", "path": "sales-back.csv", "expires_hours": 2}},
    {"name": "shed_link_list"},
    {"name": "shed_link_delete", "args": {"link_id": "AAAAAAAAAAAAAAAAAAAAAA"}},
    {"name": "shed_stats"},
    {"name": "shed_maintenance"},
    {"name": "shed_parameters"},
]

VOLATILE = [
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?"), "<time>"),
    (re.compile(r"\b[0-9a-f]{40}\b"), "<hash>"),
    (re.compile(r"\b[0-9a-f]{7,12}\b"), "<short-hash>"),
    (re.compile(r"\b\d+(\.\d+)? ?(ms|s)\b"), "<duration>"),
    # Download links: the random token, and the origin (the server's address vs the public_url default).
    (re.compile(r"https?://[^/\s)]+/files/[A-Za-z0-9_.-]+"), "<link>"),
    (re.compile(r"https?://[A-Za-z0-9.:\[\]-]+"), "<origin>"),
]
VOLATILE_KEYS = re.compile(r"(time|date|mtime|modified|created|expires|elapsed|duration|_ms$|age|commit|took|uptime|seconds)", re.I)


def normalise(value: Any, bases: tuple[str, ...], key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: normalise(v, bases, k) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v, bases, key) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool) and VOLATILE_KEYS.search(key):
        return "<n>"
    if isinstance(value, str) and key == "link_id":
        return "<link_id>"  # random by design
    if isinstance(value, str):
        for base in bases:
            value = value.replace(base, "<base>")
        for pattern, repl in VOLATILE:
            value = pattern.sub(repl, value)
        return value
    return value


def same(a: Any, b: Any, key: str = "", slack: int = 0) -> bool:
    """Equal, except that byte counts (keys ending in _bytes) may differ by `slack`."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k], k, slack) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y, key, slack) for x, y in zip(a, b))
    if slack and key.endswith("_bytes") and isinstance(a, int) and isinstance(b, int):
        return abs(a - b) <= slack
    return bool(a == b)


def run_direct(base: str) -> list[dict[str, Any]]:
    calls = [{"name": c["name"], "args": c.get("args", {}), "files": [{"name": n, "b64": base64.b64encode(b).decode()} for n, b in c.get("files", {}).items()]} for c in SCENARIO]
    payload = json.dumps({"base": base, "user": USER, "chat": CHAT, "calls": calls})
    done = subprocess.run(["node", str(Path(__file__).with_name("direct_calls.mjs"))], input=payload, capture_output=True, text=True, cwd=owui.ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


async def run_through_tool_file(tools: Any, tmp: Path) -> list[dict[str, Any]]:
    out = []
    for n, call in enumerate(SCENARIO):
        events: list[dict[str, Any]] = []

        async def emitter(event: dict[str, Any]) -> None:
            events.append(event)

        func = getattr(tools, call["name"])
        extra: dict[str, Any] = {}
        params = func.__code__.co_varnames
        if "__event_emitter__" in params:
            extra["__event_emitter__"] = emitter
        if call.get("files"):
            items = []
            for i, (name, data) in enumerate(call["files"].items()):
                stored = tmp / f"upload-{n}-{i}"
                stored.write_bytes(data)
                items.append({"id": f"f{i}", "name": name, "file": {"id": f"f{i}", "filename": name, "path": str(stored), "meta": {"name": name}}})
            extra["__files__"] = items
        text = await func(**call.get("args", {}), __user__={**USER}, __metadata__={"chat_id": CHAT, "message_id": "m-1"}, **extra)
        out.append({"result": json.loads(text), "events": events})
    return out


def test_every_function_through_serve_matches_the_direct_call(tool_module: types.ModuleType, api_server: Server, tmp_path: Path) -> None:
    served_base = api_server.base
    with tempfile.TemporaryDirectory(prefix="owui-direct-") as direct_base:
        for base in (served_base, direct_base):
            cli("groups", "add", "team", "--base", base)
            cli("groups", "members", "team", "add", "alice", "--base", base)
            cli("groups", "members", "team", "add", "bob", "--base", base)
        via_tool = asyncio.run(run_through_tool_file(tools_for(tool_module, api_server.url), tmp_path))
        direct = run_direct(direct_base)
    bases = (served_base, direct_base)
    exact = 0
    mismatched: list[str] = []
    for call, got, want in zip(SCENARIO, via_tool, direct):
        a = normalise(got["result"], bases)
        b = normalise(want["result"], bases)
        if call["name"] == "shed_parameters":  # names its host: "fileshed-serve (api-key)" vs this test's "direct"
            a = json.loads(json.dumps(a).replace("fileshed-serve (api-key)", "<host>"))
            b = json.loads(json.dumps(b).replace('"direct"', '"<host>"'))
        # Git compresses commit objects holding the commit time: Documents' size varies by a few bytes,
        # and folders count toward usage: git/objects/xx folders are named by hashes of those objects,
        # so their number (4 KiB each) varies too. The byte counts are compared within that slack and
        # the texts derived from them (size_human, the message) are left out.
        slack = 0
        if call["name"] == "shed_stats":
            slack = 64 + 16 * 4096
            a, b = (json.loads(re.sub(r'"(size_human|usage_percent)": "[^"]*"|"message": "[^"]*"', '"~": ""', json.dumps(x))) for x in (a, b))
        if same(a, b, slack=slack):
            exact += 1
        else:
            mismatched.append(f"{call['name']}: {json.dumps(a)} != {json.dumps(b)}")
        # Events: the tool file relays what the plugin emits, for the functions that declare an emitter.
        assert [e["data"]["description"] for e in got["events"]] == [e["data"]["description"] for e in want["events"]], call["name"]
    covered = {c["name"] for c in SCENARIO}
    conftest.SUMMARY.append(f"Through fileshed serve: {exact}/{len(SCENARIO)} calls ({len(covered)} functions) equal the direct plugin call after normalising times and hashes.")
    assert mismatched == [], "\n".join(mismatched)
    # Progress reached the chat for the long operations (import, zip, unzip, CSV import).
    relayed = {c["name"] for c, r in zip(SCENARIO, via_tool) if r["events"]}
    assert {"shed_import", "shed_zip", "shed_unzip", "shed_sqlite"} <= relayed, relayed
    assert via_tool[SCENARIO.index(next(c for c in SCENARIO if c["name"] == "shed_import"))]["result"]["success"] is True


def test_code_execution_through_the_tool_file_and_help_lists_only_what_it_has(tool_module: types.ModuleType, tmp_path: Path) -> None:
    # Issue 32 item 4: a server with allow_python and allow_shell on. The tool file has both functions
    # and runs them; shed_help and shed_parameters through it name no function the file lacks.
    with tempfile.TemporaryDirectory(prefix="owui-code-") as base:
        server = Server("api-key", base, ["--valve", "allow_python=true", "--valve", "allow_shell=true"])
        try:
            tools = tools_for(tool_module, server.url)
            meta = {"chat_id": CHAT, "message_id": "m-1"}

            async def go() -> list[dict[str, Any]]:
                py = await tools.shed_run_python(zone="storage", code="open('out.txt', 'w').write('made by python'); print(6 * 7)", __user__=USER, __metadata__=meta)
                sh = await tools.shed_run_shell(zone="storage", script="cat out.txt | wc -c", __user__=USER, __metadata__=meta)
                helped = await tools.shed_help(__user__=USER, __metadata__=meta)
                params = await tools.shed_parameters(__user__=USER, __metadata__=meta)
                return [json.loads(x) for x in (py, sh, helped, params)]

            py, sh, helped, params = asyncio.run(go())
        finally:
            server.stop()
    assert py["success"] is True and py["data"]["stdout"].strip() == "42", py
    assert py["data"]["files_changed"] == ["out.txt"]
    assert sh["success"] is True and sh["data"]["stdout"].strip() == "14", sh
    methods = {f.__name__ for f in owui.tool_functions(tool_module.Tools())}
    named_anywhere: set[str] = set()
    for answer in (helped, params):
        named = set(re.findall(r"\bshed_[a-z_]+[a-z]\b", json.dumps(answer)))
        assert "shed_run_python" in named
        assert named - methods == set(), named - methods
        named_anywhere |= named
    assert {"shed_run_python", "shed_run_shell"} <= named_anywhere


def test_every_registry_function_is_in_the_scenario(registry_specs: list[dict[str, Any]]) -> None:
    assert {s["function"]["name"] for s in registry_specs} <= {c["name"] for c in SCENARIO}


def test_attachment_names_and_bytes_arrive_intact(tool_module: types.ModuleType, api_server: Server, tmp_path: Path) -> None:
    stored = tmp_path / "blob"
    payload = bytes(range(256)) * 10
    stored.write_bytes(payload)
    name = 'Ünïcode "quoted" name.bin'
    tools = tools_for(tool_module, api_server.url)

    async def go() -> tuple[str, str]:
        imported = await tools.shed_import(import_all=True, __files__=[{"name": name, "file": {"path": str(stored)}}], __user__=USER, __metadata__={"chat_id": CHAT})
        hexdump = await tools.shed_read_bytes(zone="uploads", path=json.loads(imported)["data"]["imported"][0]["path"], output_format="base64", length=len(payload), __user__=USER, __metadata__={"chat_id": CHAT})
        return imported, hexdump

    imported, read = asyncio.run(go())
    assert json.loads(imported)["success"] is True, imported
    assert json.loads(read)["success"] is True, read
    item = json.loads(imported)["data"]["imported"][0]
    assert item["size"] == len(payload)
    assert item["path"] == name or item.get("renamed_from") == name, item
    assert base64.b64decode(json.loads(read)["data"]["content"]) == payload


def test_valve_overrides_apply_per_call_and_invalid_ones_are_named(tool_module: types.ModuleType, api_server: Server) -> None:
    plain = tools_for(tool_module, api_server.url)
    limited = tools_for(tool_module, api_server.url, sqlite_default_limit=1)
    bad = tools_for(tool_module, api_server.url)
    bad.valves.max_output_default = 0  # assignment skips pydantic's check: the server's zod schema must catch it

    async def go() -> list[Any]:
        await plain.shed_create_file(zone="storage", path="n.csv", content="a\n1\n2\n3\n", __user__=USER)
        await plain.shed_sqlite(zone="storage", path="n.db", import_csv="n.csv", table="n", __user__=USER)
        q = {"zone": "storage", "path": "n.db", "query": "SELECT a FROM n", "__user__": USER}
        return [json.loads(await plain.shed_sqlite(**q)), json.loads(await limited.shed_sqlite(**q)), json.loads(await bad.shed_stats(__user__=USER))]

    full, one, invalid = asyncio.run(go())
    assert len(full["data"]["rows"]) == 3
    assert len(one["data"]["rows"]) == 1
    assert invalid["success"] is False and invalid["error"]["code"] == "INVALID_VALVES" and "max_output_default" in json.dumps(invalid["error"])


def test_overrides_are_refused_outside_api_key_mode(tool_module: types.ModuleType) -> None:
    with tempfile.TemporaryDirectory(prefix="owui-local-") as base:
        server = Server("local", base)
        try:
            # A local-mode server takes no credential (a bearer key would be refused with 401).
            with_override = tools_for(tool_module, server.url, api_key="", sandbox="validated")
            without = tools_for(tool_module, server.url, api_key="")
            refused = json.loads(asyncio.run(with_override.shed_stats(__user__=USER)))
            accepted = json.loads(asyncio.run(without.shed_stats(__user__=USER)))
        finally:
            server.stop()
    assert refused["success"] is False and refused["error"]["code"] == "SERVER_REFUSED"
    assert refused["error"]["details"]["http_status"] == 403 and "api-key" in refused["error"]["hint"]
    assert accepted["success"] is True


def test_wrong_key_missing_user_and_stopped_server(tool_module: types.ModuleType, api_server: Server) -> None:
    wrong = tool_module.Tools()
    wrong.valves = tool_module.Tools.Valves(server_url=api_server.url, api_key="nope")
    out = json.loads(asyncio.run(wrong.shed_stats(__user__=USER)))
    assert out["error"]["code"] == "SERVER_AUTH_FAILED" and "api_key" in out["error"]["hint"]
    no_user = json.loads(asyncio.run(tools_for(tool_module, api_server.url).shed_stats()))
    assert no_user["success"] is False and no_user["error"]["details"]["http_status"] == 400
    api_server.stop()
    down = asyncio.run(tools_for(tool_module, api_server.url).shed_stats(__user__=USER))
    assert isinstance(down, str) and json.loads(down)["error"]["code"] == "SERVER_UNAVAILABLE"
