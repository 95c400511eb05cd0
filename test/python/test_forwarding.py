"""
The tool file's side of the wire contract, against a stand-in server on loopback that records each
request: headers, JSON and multipart bodies, NDJSON relay, valve headers, and every failure turned
into an error envelope (never an exception).
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import socket
import types
from pathlib import Path
from typing import Any, Awaitable, Callable
from urllib.parse import unquote

from aiohttp import web

import owui_emulation as owui

OK = {"success": True, "data": {"n": 1}, "message": "done"}
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def serve(handler: Handler) -> tuple[web.AppRunner, str]:
    app = web.Application(client_max_size=64 * 1024 * 1024)
    async def route(request: web.Request) -> web.StreamResponse:
        return await handler(request)

    app.router.add_route("*", "/{name}", route)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"


class Recorder:
    """Stand-in for fileshed serve: records requests, answers with a scripted reply."""

    def __init__(self, reply: Handler | None = None) -> None:
        self.requests: list[dict[str, Any]] = []
        self.reply = reply

    async def __call__(self, request: web.Request) -> web.StreamResponse:
        entry: dict[str, Any] = {"path": request.path, "headers": dict(request.headers), "files": []}
        if request.content_type.startswith("multipart/"):
            reader = await request.multipart()
            async for part in reader:  # type: ignore[union-attr]
                if part.name == "arguments":
                    entry["body"] = json.loads(await part.text())  # type: ignore[union-attr]
                else:
                    raw = part.headers.get("Content-Disposition", "")
                    entry["files"].append({"field": part.name, "disposition": raw, "bytes": bytes(await part.read())})  # type: ignore[union-attr]
        else:
            entry["body"] = json.loads(await request.text() or "{}")
        self.requests.append(entry)
        if self.reply is not None:
            return await self.reply(request)
        return web.json_response(OK)


def call(tools: Any, name: str, **kwargs: Any) -> str:
    return asyncio.run(getattr(tools, name)(**kwargs))


def with_server(tool_module: types.ModuleType, recorder: Recorder, body: Callable[[Any], Awaitable[Any]], **valves: Any) -> Any:
    async def run() -> Any:
        runner, url = await serve(recorder)
        try:
            tools = tool_module.Tools()
            tools.valves = tool_module.Tools.Valves(server_url=url, api_key="K", **valves)
            return await body(tools)
        finally:
            await runner.cleanup()

    return asyncio.run(run())


def decode_b64_json(value: str) -> Any:
    return json.loads(base64.b64decode(value).decode("utf-8"))


def test_identity_headers_and_json_body(tool_module: types.ModuleType) -> None:
    rec = Recorder()
    user = {"id": "u-1", "name": "Zoë Ω Test", "email": "zoe@example.com", "role": "admin", "valves": tool_module.Tools.UserValves()}
    out = with_server(tool_module, rec, lambda t: t.shed_read(zone="storage", path="notes.txt", __user__=user, __metadata__={"chat_id": "c-42", "message_id": "m-7"}))
    assert json.loads(out) == OK
    (req,) = rec.requests
    h = req["headers"]
    assert req["path"] == "/shed_read"
    assert h["Authorization"] == "Bearer K"
    assert h["Accept"] == "application/x-ndjson"
    assert h["Content-Type"].startswith("application/json")
    assert (h["X-OpenWebUI-User-Id"], h["X-OpenWebUI-User-Email"], h["X-OpenWebUI-User-Role"]) == ("u-1", "zoe@example.com", "admin")
    assert h["X-OpenWebUI-User-Name"] != "Zoë Ω Test" and unquote(h["X-OpenWebUI-User-Name"]) == "Zoë Ω Test"
    assert (h["X-OpenWebUI-Chat-Id"], h["X-OpenWebUI-Message-Id"]) == ("c-42", "m-7")
    assert decode_b64_json(h["X-Fileshed-User-Valves"]) == {}
    assert "X-Fileshed-Valves" not in h  # no override set: nothing a local-mode server would refuse
    # Omitted optional parameters are not sent; defaults are.
    assert req["body"] == {"zone": "storage", "path": "notes.txt"}


def test_user_valves_as_a_plain_dict_and_no_user(tool_module: types.ModuleType) -> None:
    rec = Recorder()
    with_server(tool_module, rec, lambda t: t.shed_stats(__user__={"id": "u-2", "valves": {"theme": "dark"}}))
    with_server(tool_module, rec, lambda t: t.shed_stats())
    assert decode_b64_json(rec.requests[0]["headers"]["X-Fileshed-User-Valves"]) == {"theme": "dark"}
    assert "X-OpenWebUI-User-Id" not in rec.requests[1]["headers"] and "X-OpenWebUI-Chat-Id" not in rec.requests[1]["headers"]


def test_header_injection_is_not_forwarded(tool_module: types.ModuleType) -> None:
    rec = Recorder()
    with_server(tool_module, rec, lambda t: t.shed_stats(__user__={"id": "u-3\r\nX-Evil: 1", "name": "a\nb"}, __metadata__={"chat_id": "c\r\n"}))
    h = rec.requests[0]["headers"]
    assert "X-Evil" not in h and "X-OpenWebUI-User-Id" not in h and "X-OpenWebUI-User-Name" not in h
    assert h.get("X-OpenWebUI-Chat-Id") in (None, "c")


def test_valve_overrides_are_sent_only_when_set(tool_module: types.ModuleType) -> None:
    rec = Recorder()
    with_server(tool_module, rec, lambda t: t.shed_stats(__user__={"id": "u-1"}), max_output_default=1000, sandbox="validated", sqlite_readonly=False)
    assert decode_b64_json(rec.requests[0]["headers"]["X-Fileshed-Valves"]) == {"max_output_default": 1000, "sandbox": "validated", "sqlite_readonly": False}


def test_status_lines_are_relayed_in_order_then_the_result(tool_module: types.ModuleType) -> None:
    result = {"success": True, "data": {"path": "a.zip"}, "message": "Created a.zip"}

    async def stream(request: web.Request) -> web.StreamResponse:
        res = web.StreamResponse(headers={"Content-Type": "application/x-ndjson; charset=utf-8"})
        await res.prepare(request)
        for i in range(3):
            await res.write(json.dumps({"type": "status", "data": {"description": f"step {i}", "done": False}}).encode() + b"\n")
            await asyncio.sleep(0.02)
        # The result line arrives in two chunks, and a blank line and a junk line are ignored.
        line = json.dumps({"type": "result", "data": result}).encode()
        await res.write(b"\nnot json\n" + line[:10])
        await asyncio.sleep(0.02)
        await res.write(line[10:] + b"\n")
        return res

    events: list[dict[str, Any]] = []

    async def emitter(event: dict[str, Any]) -> None:
        events.append(event)

    out = with_server(tool_module, Recorder(stream), lambda t: t.shed_zip(zone="storage", src="a", __user__={"id": "u"}, __event_emitter__=emitter))
    assert [e["data"]["description"] for e in events] == ["step 0", "step 1", "step 2"]
    assert all(e["type"] == "status" for e in events)
    assert json.loads(out) == result
    assert out == json.dumps(result, ensure_ascii=False, indent=2)  # the plugin's own formatting


def test_a_failing_emitter_does_not_fail_the_call(tool_module: types.ModuleType) -> None:
    async def stream(request: web.Request) -> web.StreamResponse:
        res = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await res.prepare(request)
        await res.write(b'{"type":"status","data":{"description":"x","done":false}}\n{"type":"result","data":{"success":true,"data":{},"message":"ok"}}\n')
        return res

    async def broken(event: dict[str, Any]) -> None:
        raise RuntimeError("socket closed")

    out = with_server(tool_module, Recorder(stream), lambda t: t.shed_unzip(zone="storage", src="a.zip", __event_emitter__=broken))
    assert json.loads(out)["success"] is True


def test_a_stream_cut_before_the_result_is_an_error_envelope(tool_module: types.ModuleType) -> None:
    async def cut(request: web.Request) -> web.StreamResponse:
        res = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
        await res.prepare(request)
        await res.write(b'{"type":"status","data":{"description":"x","done":false}}\n')
        return res

    out = json.loads(with_server(tool_module, Recorder(cut), lambda t: t.shed_zip(zone="storage", src="a")))
    assert out["success"] is False and out["error"]["code"] == "SERVER_ERROR" and "server_url" in out["error"]["hint"]


def test_attachments_are_sent_as_multipart_bytes(tool_module: types.ModuleType, tmp_path: Path) -> None:
    first = tmp_path / "stored-1"
    first.write_bytes(b"\x00\x01binary\xff")
    second = tmp_path / "stored-2"
    second.write_bytes(b"a,b\n1,2\n")
    files = [
        {"name": "data.bin", "file": {"id": "f1", "path": str(first), "meta": {"name": "data.bin"}}},
        {"file": {"id": "f2", "filename": 'résumé "v2".csv', "path": str(second)}},
        {"name": "notes.md", "file": {"id": "f3", "path": "s3://bucket/x", "data": {"content": "# Notes é"}}},
    ]
    rec = Recorder()
    out = with_server(tool_module, rec, lambda t: t.shed_import(import_all=True, __files__=files, __user__={"id": "u"}))
    assert json.loads(out) == OK
    (req,) = rec.requests
    assert req["headers"]["Content-Type"].startswith("multipart/form-data")
    assert req["body"] == {"filename": "", "import_all": True, "earlier_messages": False, "dest_subdir": ""}
    assert [f["field"] for f in req["files"]] == ["files"] * 3
    assert [f["bytes"] for f in req["files"]] == [b"\x00\x01binary\xff", b"a,b\n1,2\n", "# Notes é".encode()]
    # File names as browsers write them: raw UTF-8, double quotes as %22 (what WHATWG parsers decode).
    assert 'filename="data.bin"' in req["files"][0]["disposition"]
    assert 'filename="résumé %22v2%22.csv"' in req["files"][1]["disposition"]


def test_extracted_text_of_a_non_local_pdf_is_named_txt_and_said(tool_module: types.ModuleType) -> None:
    # Open WebUI with object storage: the upload has no local path, only the text its loader extracted
    # (file.data.content). Those are not the PDF's bytes, so they are sent as report.pdf.txt, and the
    # answer says so; a text format (notes.md) is its own text and keeps its name.
    files = [
        {"name": "report.pdf", "file": {"id": "f1", "path": "s3://bucket/report.pdf", "meta": {"name": "report.pdf"}, "data": {"content": "Page one text"}}},
        {"name": "notes.md", "file": {"id": "f2", "path": "s3://bucket/notes.md", "data": {"content": "# Notes"}}},
    ]
    ok = {"success": True, "message": "Imported 2 files into Uploads.", "data": {"imported": []}}

    async def reply(request: web.Request) -> web.StreamResponse:
        return web.json_response(ok)

    rec = Recorder(reply)
    out = json.loads(with_server(tool_module, rec, lambda t: t.shed_import(import_all=True, __files__=files, __user__={"id": "u"})))
    (req,) = rec.requests
    assert [re.search(r'filename="([^"]+)"', f["disposition"]).group(1) for f in req["files"]] == ["report.pdf.txt", "notes.md"]
    assert [f["bytes"] for f in req["files"]] == [b"Page one text", b"# Notes"]
    assert out["data"]["text_only"][0]["imported_as"] == "report.pdf.txt"
    assert "report.pdf was imported as report.pdf.txt" in out["message"]
    # Asked for by its name, the PDF's text is still found (under the .txt name).
    rec2 = Recorder(reply)
    with_server(tool_module, rec2, lambda t: t.shed_import(filename="report.pdf", __files__=files, __user__={"id": "u"}))
    assert rec2.requests[0]["body"]["filename"] == "report.pdf.txt"


def test_metadata_files_are_used_when_files_are_absent(tool_module: types.ModuleType, tmp_path: Path) -> None:
    stored = tmp_path / "upload"
    stored.write_bytes(b"hello")
    rec = Recorder()
    with_server(tool_module, rec, lambda t: t.shed_import(import_all=True, __metadata__={"chat_id": "c", "files": [{"name": "h.txt", "file": {"path": str(stored)}}]}))
    assert [f["bytes"] for f in rec.requests[0]["files"]] == [b"hello"]


def test_only_the_named_attachment_is_sent(tool_module: types.ModuleType, tmp_path: Path) -> None:
    for n in ("a.txt", "b.txt"):
        (tmp_path / n).write_text(n)
    files = [{"name": n, "file": {"path": str(tmp_path / n)}} for n in ("a.txt", "b.txt")]
    rec = Recorder()
    with_server(tool_module, rec, lambda t: t.shed_import(filename="b.txt", __files__=files))
    with_server(tool_module, rec, lambda t: t.shed_import(filename="zzz.txt", __files__=files))
    assert [f["bytes"] for f in rec.requests[0]["files"]] == [b"b.txt"]
    assert len(rec.requests[1]["files"]) == 2  # no match: the server lists the names in its error


def test_attachments_over_the_cap_are_not_read_and_are_reported(tool_module: types.ModuleType, tmp_path: Path) -> None:
    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * (1024 * 1024 + 1))
    small = tmp_path / "small.txt"
    small.write_bytes(b"ok")
    files = [{"name": "big.bin", "file": {"path": str(big)}}, {"name": "small.txt", "file": {"path": str(small)}}]
    rec = Recorder()
    out = json.loads(with_server(tool_module, rec, lambda t: t.shed_import(import_all=True, __files__=files), max_file_size_mb=1))
    assert [f["bytes"] for f in rec.requests[0]["files"]] == [b"ok"]
    assert out["success"] is True and out["data"]["errors"][0]["name"] == "big.bin" and out["data"]["errors"][0]["code"] == "FILE_TOO_LARGE"
    assert "big.bin" in out["message"]
    # Nothing fits: answered locally, the server is not called.
    rec2 = Recorder()
    out2 = json.loads(with_server(tool_module, rec2, lambda t: t.shed_import(import_all=True, __files__=files[:1]), max_file_size_mb=1))
    assert rec2.requests == [] and out2["success"] is False and out2["error"]["code"] == "FILE_TOO_LARGE" and "max_file_size_mb" in out2["error"]["hint"]


def test_attachments_together_over_the_request_limit_are_left_for_a_second_call(tool_module: types.ModuleType, tmp_path: Path) -> None:
    paths = []
    for n in range(3):
        p = tmp_path / f"part{n}.bin"
        p.write_bytes(bytes([n]) * (400 * 1024))
        paths.append(p)
    files = [{"name": p.name, "file": {"path": str(p)}} for p in paths]
    rec = Recorder()
    out = json.loads(with_server(tool_module, rec, lambda t: t.shed_import(import_all=True, __files__=files), max_file_size_mb=1))
    assert len(rec.requests[0]["files"]) == 2
    assert out["data"]["errors"][0]["name"] == "part2.bin" and 'filename="part2.bin"' in out["data"]["errors"][0]["reason"]


def status_reply(status: int, body: str, content_type: str = "application/json") -> Handler:
    async def reply(request: web.Request) -> web.StreamResponse:
        return web.Response(status=status, text=body, content_type=content_type)

    return reply


def test_http_errors_become_envelopes_that_name_the_valve(tool_module: types.ModuleType) -> None:
    cases = [
        (401, '{"detail": "Missing or invalid API key."}', "SERVER_AUTH_FAILED", "api_key"),
        (403, '{"detail": "Valve overrides (X-Fileshed-Valves) need the API key"}', "SERVER_REFUSED", "api-key"),
        (404, '{"detail": "No function"}', "SERVER_ERROR", "server_url"),
        (413, '{"detail": "too large"}', "SERVER_ERROR", "max_file_size_mb"),
        (500, "Internal Server Error", "SERVER_ERROR", "server_url"),
        (400, '{"detail": "X-OpenWebUI-User-Id is missing"}', "SERVER_ERROR", "user"),
    ]
    for status, body, code, hint_word in cases:
        out = json.loads(with_server(tool_module, Recorder(status_reply(status, body)), lambda t: t.shed_stats(__user__={"id": "u"})))
        assert out["success"] is False and out["error"]["code"] == code, (status, out)
        assert hint_word in out["error"]["hint"], (status, out["error"]["hint"])
        assert out["error"]["details"]["http_status"] == status
        if body.startswith("{"):
            assert json.loads(body)["detail"] in out["error"]["message"]


def test_a_200_that_is_not_an_envelope_is_an_error(tool_module: types.ModuleType) -> None:
    for body, ctype in (("<html>Open WebUI</html>", "text/html"), ('{"ok": 1}', "application/json")):
        out = json.loads(with_server(tool_module, Recorder(status_reply(200, body, ctype)), lambda t: t.shed_stats()))
        assert out["error"]["code"] == "SERVER_ERROR" and "server_url" in out["error"]["hint"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_server_down_is_an_error_string_not_an_exception(tool_module: types.ModuleType) -> None:
    tools = tool_module.Tools()
    tools.valves = tool_module.Tools.Valves(server_url=f"http://127.0.0.1:{free_port()}")
    out = call(tools, "shed_tree", zone="storage")
    assert isinstance(out, str)
    err = json.loads(out)["error"]
    assert err["code"] == "SERVER_UNAVAILABLE" and "server_url" in err["hint"]
    tools.valves = tool_module.Tools.Valves(server_url="localhost:8765")
    assert json.loads(call(tools, "shed_tree", zone="storage"))["error"]["code"] == "SERVER_UNAVAILABLE"
    tools.valves = tool_module.Tools.Valves(server_url="http://no-such-host.invalid")
    assert json.loads(call(tools, "shed_tree", zone="storage"))["error"]["code"] == "SERVER_UNAVAILABLE"


def test_a_slow_server_times_out_into_an_envelope(tool_module: types.ModuleType) -> None:
    async def slow(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(2)
        return web.json_response(OK)

    out = json.loads(with_server(tool_module, Recorder(slow), lambda t: t.shed_stats(), timeout_seconds=1))
    assert out["error"]["code"] == "SERVER_TIMEOUT" and "timeout_seconds" in out["error"]["hint"]


def sample_arguments(spec: dict[str, Any]) -> dict[str, Any]:
    """A value for every required parameter, from its schema."""
    params = spec["function"]["parameters"]
    out: dict[str, Any] = {}
    for name in params.get("required", []):
        schema = params["properties"][name]
        if "enum" in schema:
            out[name] = schema["enum"][0]
        else:
            out[name] = {"string": "x", "integer": 1, "number": 1.5, "boolean": True, "array": []}[schema["type"]]
    return out


def test_every_function_forwards_to_its_path_with_its_arguments(tool_module: types.ModuleType, registry_specs: list[dict[str, Any]]) -> None:
    rec = Recorder()

    async def all_calls(tools: Any) -> list[str]:
        return [await getattr(tools, s["function"]["name"])(**sample_arguments(s), __user__={"id": "u"}) for s in registry_specs]

    outs = with_server(tool_module, rec, all_calls)
    assert all(json.loads(o) == OK for o in outs)
    assert [r["path"] for r in rec.requests] == ["/" + s["function"]["name"] for s in registry_specs]
    for spec, req in zip(registry_specs, rec.requests):
        props = spec["function"]["parameters"]["properties"]
        want = {**{k: v["default"] for k, v in props.items() if "default" in v}, **sample_arguments(spec)}
        assert req["body"] == want, spec["function"]["name"]


def test_a_server_that_never_accepts_is_unavailable_not_slow(tool_module: types.ModuleType) -> None:
    # A listening socket whose backlog is full: connection attempts hang, as with a dropped route.
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(0)
        port = server.getsockname()[1]
        fillers = []
        for _ in range(4):
            filler = socket.socket()
            filler.setblocking(False)
            try:
                filler.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
            fillers.append(filler)
        try:
            tools = tool_module.Tools()
            tools.valves = tool_module.Tools.Valves(server_url=f"http://127.0.0.1:{port}", timeout_seconds=1)
            err = json.loads(call(tools, "shed_stats"))["error"]
        finally:
            for filler in fillers:
                filler.close()
    assert err["code"] == "SERVER_UNAVAILABLE" and "server_url" in err["hint"]
