"""Images: read_file returns one the model can see, a prompt that names one attaches it, and the
session file keeps each image once."""

from __future__ import annotations

import base64
import json
import struct
import zlib
from typing import Any

from agentcli.core.events import ToolCallFinished, UserMessage
from tests.fakes.anthropic_server import text, tool_use


def png(width: int, height: int) -> bytes:
    """A real PNG of one colour."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def images_in(body: dict[str, Any]) -> list[dict[str, Any]]:
    found = []

    def walk(value):
        if isinstance(value, dict):
            if value.get("type") == "image":
                found.append(value)
            else:
                for item in value.values():
                    walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(body["messages"])
    return found


async def test_read_file_on_a_png_gives_the_model_the_image(server, make_session, repo):
    data = png(3, 2)
    (repo / "logo.png").write_bytes(data)
    server.script(tool_use("read_file", {"path": "logo.png"}), text("A red rectangle."))
    session, recorder = make_session()
    assert (await session.send("what is in the logo file?")).text == "A red rectangle."
    server.assert_no_rejections()
    [image] = images_in(server.requests[-1])
    assert image["source"] == {"type": "base64", "media_type": "image/png", "data": base64.b64encode(data).decode()}
    [finished] = recorder.of(ToolCallFinished)
    assert not finished.is_error and finished.output.startswith("[image: logo.png 3×2]")


async def test_an_image_past_the_api_s_limits_is_refused_in_one_sentence(server, make_session, repo):
    header = png(1, 1)
    (repo / "huge.png").write_bytes(header[:16] + struct.pack(">II", 9000, 20) + header[24:])
    server.script(tool_use("read_file", {"path": "huge.png"}), text("Too big."))
    session, recorder = make_session()
    await session.send("look at huge.png")
    [finished] = recorder.of(ToolCallFinished)
    assert finished.is_error and "huge.png is 9000×20 pixels, more than the 8000 a side" in finished.output
    assert images_in(server.requests[-1]) == []


async def test_a_prompt_naming_an_image_attaches_it_and_the_session_keeps_it_once(
    server, make_session, repo, tmp_path, resume
):
    data = png(4, 4)
    (repo / "shots").mkdir()
    (repo / "shots" / "screen one.png").write_bytes(data)
    (tmp_path / "outside.png").write_bytes(data)
    server.script(text("I see it."), text("Same one."))
    session, recorder = make_session()
    await session.send("what is wrong in 'shots/screen one.png'? and " + str(tmp_path / "outside.png"))
    await session.send("look again at shots/screen\\ one.png")
    server.assert_no_rejections()
    first = server.requests[0]["messages"][0]["content"]
    assert [b["type"] for b in first] == ["text", "image", "text"]
    assert first[2]["text"] == "[image: shots/screen one.png 4×4]"
    assert "[image: shots/screen one.png 4×4]" in json.dumps(recorder.of(UserMessage)[0].content, ensure_ascii=False)
    session.close()

    text_of_file = session.store.main_path.read_text()
    assert base64.b64encode(data).decode() not in text_of_file  # kept beside it, once
    assert [p.name for p in session.store.image_dir.iterdir()] == [__import__("hashlib").sha256(data).hexdigest()]

    server.script(text("Still the same."))
    resumed, _ = resume(continue_=True)
    await resumed.send("and now?")
    server.assert_no_rejections()
    assert len(images_in(server.requests[-1])) == 2  # both prompts' images, inline again for the API
