"""JSON Schema from type hints: a tool's ``inputSchema`` (and a prompt's arguments) read from
its function's parameters."""

from __future__ import annotations

import dataclasses
import enum
import inspect
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, get_args, get_origin, get_type_hints

from .context import Context


def schema_for(tp: Any) -> dict[str, Any]:
    """The JSON Schema of a Python type annotation."""
    origin = get_origin(tp)
    if origin is typing.Annotated:
        base, *meta = get_args(tp)
        schema = schema_for(base)
        for m in meta:
            if isinstance(m, str):
                schema["description"] = m
        return schema
    if tp is Any or tp is inspect.Parameter.empty:
        return {}
    if tp is str:
        return {"type": "string"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is type(None):
        return {"type": "null"}
    if origin is Literal:
        return {"enum": list(get_args(tp))}
    if origin in (typing.Union, types.UnionType):
        options = [schema_for(a) for a in get_args(tp)]
        return {"anyOf": options}
    if origin in (list, tuple, set, frozenset) or tp in (list, tuple, set):
        args = get_args(tp)
        return {"type": "array", "items": schema_for(args[0])} if args else {"type": "array"}
    if origin is dict or tp is dict:
        args = get_args(tp)
        return {"type": "object", "additionalProperties": schema_for(args[1])} if args else {"type": "object"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp]}
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        hints = get_type_hints(tp, include_extras=True)
        props = {f.name: schema_for(hints.get(f.name, Any)) for f in dataclasses.fields(tp)}
        required = [
            f.name for f in dataclasses.fields(tp)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        ]  # fmt: skip
        return {"type": "object", "properties": props, "required": required}
    if isinstance(tp, type) and typing.is_typeddict(tp):
        hints = get_type_hints(tp, include_extras=True)
        return {
            "type": "object",
            "properties": {k: schema_for(v) for k, v in hints.items()},
            "required": sorted(getattr(tp, "__required_keys__", hints.keys())),
        }
    model_schema = getattr(tp, "model_json_schema", None)  # pydantic, when installed
    if callable(model_schema):
        result: dict[str, Any] = model_schema()
        return result
    return {}


def input_schema(fn: Callable[..., Any]) -> tuple[dict[str, Any], str | None]:
    """The ``inputSchema`` of a function's parameters, and the name of its ``Context`` one."""
    hints = get_type_hints(fn, include_extras=True)
    props: dict[str, Any] = {}
    required: list[str] = []
    context_param = None
    for name, p in inspect.signature(fn).parameters.items():
        hint = hints.get(name, Any)
        if hint is Context:
            context_param = name
            continue
        prop = schema_for(hint)
        if p.default is not inspect.Parameter.empty:
            if isinstance(p.default, (str, int, float, bool)) or p.default is None:
                prop["default"] = p.default
        else:
            required.append(name)
        props[name] = prop
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema, context_param
