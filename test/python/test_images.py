"""
An image read through the tool file reaches the model as an image, judged by Open WebUI's own
handling of tool results (owui_emulation.process_tool_result and function_call_output, reproduced
from its middleware): shed_read of a picture through the real `fileshed serve` gives a result that
is exactly one data:image/ URI, which Open WebUI turns into an input_image part for the model.
The control shows why: the same image inside the JSON envelope would reach the model as base64
text, with no image part. Text files keep their JSON answers.
"""

from __future__ import annotations

import asyncio
import base64
import json
import struct
import tempfile
import zlib
from pathlib import Path
from typing import Any, Iterator

import pytest

import owui_emulation as owui
from test_serve_integration import HAS_SERVE, Server, USER, CHAT, tools_for

pytestmark = pytest.mark.skipif(not HAS_SERVE, reason="dist/cli.mjs has no `serve` command")


def png(width: int, height: int) -> bytes:
    raw = b"".join(b"\x00" + bytes([v for x in range(width) for v in (x % 256, y % 256, 90)]) for y in range(height))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


@pytest.fixture()
def served() -> Iterator[tuple[Server, Path]]:
    with tempfile.TemporaryDirectory(prefix="owui-images-") as base:
        storage = Path(base) / "users" / USER["id"] / "Storage" / "data"
        storage.mkdir(parents=True)
        (storage / "chart.png").write_bytes(png(2000, 100))
        (storage / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
        server = Server("api-key", base)
        try:
            yield server, storage
        finally:
            server.stop()


def call(tools: Any, name: str, **args: Any) -> Any:
    return asyncio.run(getattr(tools, name)(**args, __user__=dict(USER), __metadata__={"chat_id": CHAT, "message_id": "m1"}))


def test_an_image_result_becomes_an_input_image_for_the_model(served: tuple[Server, Path]) -> None:
    server, _ = served
    tools = tools_for(owui.load_tool_module(), server.url)
    result = call(tools, "shed_read", zone="storage", path="chart.png")
    assert isinstance(result, str) and result.startswith("data:image/png;base64,"), result[:200]

    text, files = owui.process_tool_result("shed_read", result, "")
    parts, display = owui.function_call_output(text, files)
    images = [p for p in parts if p["type"] == "input_image"]
    assert len(images) == 1 and display == []
    assert "base64" not in text  # the model's text is short; the image is a part of its own
    shown = base64.b64decode(images[0]["image_url"].split(",", 1)[1])
    width, height = struct.unpack(">II", shown[16:24])
    assert shown[:8] == b"\x89PNG\r\n\x1a\n" and (width, height) == (1568, 78)


def test_the_envelope_with_the_image_inside_would_reach_the_model_as_text(served: tuple[Server, Path]) -> None:
    # Control: what the tool file avoids. The JSON envelope (what fileshed serve answers) holding the
    # data URI is serialised into the tool message: the model gets base64 text and no image.
    server, _ = served
    tools = tools_for(owui.load_tool_module(), server.url)
    uri = call(tools, "shed_read", zone="storage", path="chart.png")
    envelope = {"success": True, "data": {"image": {"data_uri": uri}}, "message": "..."}
    text, files = owui.process_tool_result("shed_read", envelope, "")
    parts, _ = owui.function_call_output(text, files)
    assert [p["type"] for p in parts] == ["input_text"] and uri in text


def test_text_files_keep_their_json_answer(served: tuple[Server, Path]) -> None:
    server, _ = served
    tools = tools_for(owui.load_tool_module(), server.url)
    result = json.loads(call(tools, "shed_read", zone="storage", path="notes.txt"))
    assert result["success"] is True and result["data"]["content"] == "alpha\nbeta\n"
    text, files = owui.process_tool_result("shed_read", json.dumps(result), "")
    assert files == [] and json.loads(text)["data"]["content"] == "alpha\nbeta\n"


def test_an_image_error_stays_a_json_error(served: tuple[Server, Path]) -> None:
    server, storage = served
    (storage / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    tools = tools_for(owui.load_tool_module(), server.url)
    result = json.loads(call(tools, "shed_read", zone="storage", path="broken.png"))
    assert result["success"] is False and result["error"]["code"] == "INVALID_FORMAT"
