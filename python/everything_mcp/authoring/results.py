"""What a handler returns, as the MCP result: content blocks to return (:class:`content`), and a
tool's, a prompt's or a completion's return value converted to its result."""

from __future__ import annotations

import base64
import dataclasses
import enum
import json
from typing import Any


class content:
    """Content blocks to return from tools and prompts."""

    @staticmethod
    def text(text: str, **extra: Any) -> dict[str, Any]:
        return {"type": "text", "text": text, **extra}

    @staticmethod
    def image(data: bytes | str, mime_type: str = "image/png", **extra: Any) -> dict[str, Any]:
        """From bytes, or from a file when ``data`` is a path."""
        return {"type": "image", "data": _b64(data), "mimeType": mime_type, **extra}

    @staticmethod
    def audio(data: bytes | str, mime_type: str = "audio/wav", **extra: Any) -> dict[str, Any]:
        """From bytes, or from a file when ``data`` is a path."""
        return {"type": "audio", "data": _b64(data), "mimeType": mime_type, **extra}

    @staticmethod
    def resource_link(uri: str, name: str, **extra: Any) -> dict[str, Any]:
        return {"type": "resource_link", "uri": uri, "name": name, **extra}

    @staticmethod
    def embedded(
        uri: str, text: str | None = None, blob: bytes | None = None, mime_type: str = "text/plain"
    ) -> dict[str, Any]:
        resource: dict[str, Any] = {"uri": uri, "mimeType": mime_type}
        if blob is not None:
            resource["blob"] = base64.b64encode(blob).decode()
        else:
            resource["text"] = text or ""
        return {"type": "resource", "resource": resource}


def _b64(data: bytes | str) -> str:
    if isinstance(data, str):
        with open(data, "rb") as f:
            data = f.read()
    return base64.b64encode(data).decode()


_CONTENT_TYPES = {"text", "image", "audio", "resource_link", "resource"}


def _is_block(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") in _CONTENT_TYPES


def _plain(value: Any) -> Any:
    """Dataclasses, pydantic models and enums as JSON-able values."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, enum.Enum):
        return value.value
    return value


def tool_result(value: Any) -> dict[str, Any]:
    """A tool's return value as a ``CallToolResult``."""
    if isinstance(value, dict) and "content" in value and isinstance(value["content"], list):
        return value  # a full result passes through
    if value is None:
        return {"content": []}
    if isinstance(value, str):
        return {"content": [content.text(value)]}
    if _is_block(value):
        return {"content": [value]}
    if isinstance(value, list) and value and all(_is_block(v) for v in value):
        return {"content": value}
    plain = _plain(value)
    text = json.dumps(plain, ensure_ascii=False)
    structured = plain if isinstance(plain, dict) else {"result": plain}
    return {"content": [content.text(text)], "structuredContent": structured}


def tool_json(value: Any) -> str:
    """A tool's return value as its ``CallToolResult``'s JSON text (anything JSON cannot say
    as its ``str``)."""
    return json.dumps(tool_result(value), default=str)


def values_json(values: Any) -> str:
    """A completion's values as the JSON list of strings the core completes with."""
    return json.dumps(list(values))


def prompt_json(value: Any) -> str:
    """A prompt's return value as its ``GetPromptResult``'s JSON text."""
    return json.dumps(prompt_result(value))


def prompt_result(value: Any) -> dict[str, Any]:
    """A prompt's return value as a ``GetPromptResult``: one with ``messages`` passes through;
    otherwise each item of a list (or the value alone) is a message: a message dict as it is, a
    content block as the user's, anything else as the user's text (``str(item)``)."""
    if isinstance(value, dict) and "messages" in value:
        return value
    items = value if isinstance(value, list) else [value]
    items = [
        {"role": "user", "content": i} if isinstance(i, dict) and "type" in i and "role" not in i else i for i in items
    ]
    messages = [
        item
        if isinstance(item, dict) and "role" in item
        else {"role": "user", "content": {"type": "text", "text": str(item)}}
        for item in items
    ]
    return {"messages": messages}
