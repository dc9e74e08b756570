"""Python functions registered on a :class:`~everything_mcp.Server` (``@srv.tool()``,
``@srv.resource(uri)``, ``@srv.resource_template(...)``, ``@srv.prompt()``, ``@srv.method(name)``,
``@srv.completion(ref, argument)``; ``srv.skill(path)``, ``srv.remove(...)``): each function's
definition, and the invoker through which the core calls it (:mod:`everything_mcp.authoring`)."""

from __future__ import annotations

import inspect
import json
import os
from collections.abc import Callable
from typing import Any

from . import _core
from .authoring.handle import Handle
from .authoring.results import prompt_json, tool_json, values_json
from .authoring.running import Cancel, HandlerLoop, run_handler
from .authoring.schema import input_schema as schema_of  # `tool()` has an `input_schema` parameter

__all__ = ["ServerAuthoring"]


class ServerAuthoring:
    """A part of :class:`~everything_mcp.Server` (which is the class to use): registering Python
    functions as tools, resources, prompts, methods and completions."""

    _core: _core.Server
    """The binding's server, which ``Server`` constructs."""
    _loop: HandlerLoop
    """The event-loop thread of this server's ``async def`` handlers."""

    def tool(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        annotations: dict[str, Any] | None = None,
        requires: str | None = None,
        task_support: str = "forbidden",
    ) -> Callable[[Callable[..., Any]], Handle]:
        """Register a function as a tool (sync or ``async def``).

        The name is the function's, the description its docstring, the ``inputSchema`` comes from
        its type hints (a ``Context`` parameter receives the request context). A ``str`` return
        is text; a dict, list, dataclass or model becomes ``structuredContent`` plus its JSON as
        text; content blocks (``everything_mcp.content``) and full results pass through. An
        exception is an ``isError`` result with its type and text (``ValueError: bad input``);
        raise ``RpcError`` to answer with a JSON-RPC error instead. ``requires`` shows the tool
        only to clients that declared that capability (e.g. ``"sampling"``).

        ``task_support`` (``execution.taskSupport``): ``"optional"`` runs a call as a task when the
        client asks for one (2025-11-25 ``params.task``) or can take one (2026-07-28, the tasks
        extension), ``"required"`` only as a task; ``"forbidden"`` (default) never. Run as a
        task, the function reports with ``ctx.status("...")`` and asks with ``ctx.elicit(...)``
        and the like as usual (see ``docs/tasks.md``).
        """
        if task_support not in ("forbidden", "optional", "required"):
            raise ValueError(f"task_support is 'forbidden', 'optional' or 'required', not {task_support!r}")

        def register(fn: Callable[..., Any]) -> Handle:
            schema, ctx_param = schema_of(fn)
            definition: dict[str, Any] = {
                "name": name or fn.__name__,
                "description": description or inspect.getdoc(fn) or "",
                "inputSchema": input_schema or schema,
            }
            for key, value in (("title", title), ("outputSchema", output_schema), ("annotations", annotations)):
                if value is not None:
                    definition[key] = value
            if task_support != "forbidden":  # forbidden is the default: listed without `execution`
                definition["execution"] = {"taskSupport": task_support}
            handle = Handle(fn, "tool", definition["name"])

            def invoke(arguments: dict[str, Any], core_ctx: _core.Context, reply: _core.Reply) -> Cancel:
                return run_handler(handle, self._loop, arguments, core_ctx, ctx_param, reply, tool_json)

            self._core.add_tool(json.dumps(definition), handle._invoker(invoke), requires)
            return handle

        return register

    def resource(
        self, uri: str, *, name: str | None = None, mime_type: str = "text/plain", description: str | None = None
    ) -> Callable[[Callable[..., Any]], Handle]:
        """Register a function returning a resource's content (``str`` is text, ``bytes`` a
        blob, a dict/list its JSON)."""

        def register(fn: Callable[..., Any]) -> Handle:
            definition = {"uri": uri, "name": name or fn.__name__, "mimeType": mime_type}
            if description or inspect.getdoc(fn):
                definition["description"] = description or inspect.getdoc(fn) or ""
            handle = Handle(fn, "resource", uri)
            self._core.add_resource(json.dumps(definition), handle._invoker(self._resource_invoker(handle, mime_type)))
            return handle

        return register

    def resource_template(
        self,
        uri_template: str,
        *,
        name: str | None = None,
        mime_type: str = "text/plain",
        description: str | None = None,
    ) -> Callable[[Callable[..., Any]], Handle]:
        """Register a function of the template's variables returning the content of a matching
        resource."""

        def register(fn: Callable[..., Any]) -> Handle:
            definition = {"uriTemplate": uri_template, "name": name or fn.__name__, "mimeType": mime_type}
            if description or inspect.getdoc(fn):
                definition["description"] = description or inspect.getdoc(fn) or ""
            handle = Handle(fn, "resource", uri_template)
            invoker = self._resource_invoker(handle, mime_type)
            self._core.add_template(
                json.dumps(definition),
                handle._invoker(lambda uri, variables, ctx, reply: invoker(uri, ctx, reply, variables)),
            )
            return handle

        return register

    def _resource_invoker(self, handle: Handle, mime_type: str) -> Callable[..., Cancel]:
        _, ctx_param = schema_of(handle.fn)

        def invoke(
            uri: str, core_ctx: _core.Context, reply: _core.Reply, variables: dict[str, Any] | None = None
        ) -> Cancel:
            def contents(value: Any) -> str:
                item: dict[str, Any] = {"uri": uri, "mimeType": mime_type}
                if isinstance(value, bytes):
                    import base64

                    item["blob"] = base64.b64encode(value).decode()
                else:
                    item["text"] = value if isinstance(value, str) else json.dumps(value)
                return json.dumps([item])

            return run_handler(handle, self._loop, variables or {}, core_ctx, ctx_param, reply, contents)

        return invoke

    def prompt(
        self, name: str | None = None, *, title: str | None = None, description: str | None = None
    ) -> Callable[[Callable[..., Any]], Handle]:
        """Register a function as a prompt: its parameters are the arguments (required unless
        they have a default); a ``str`` return is one user message, a list of strings or
        message dicts is the messages."""

        def register(fn: Callable[..., Any]) -> Handle:
            schema, ctx_param = schema_of(fn)
            required = set(schema.get("required", []))
            arguments = [
                {
                    "name": arg,
                    "required": arg in required,
                    **({"description": p["description"]} if "description" in p else {}),
                }
                for arg, p in schema["properties"].items()
            ]
            definition: dict[str, Any] = {
                "name": name or fn.__name__,
                "description": description or inspect.getdoc(fn) or "",
            }
            if title:
                definition["title"] = title
            if arguments:
                definition["arguments"] = arguments
            handle = Handle(fn, "prompt", definition["name"])

            def invoke(arguments: dict[str, Any], core_ctx: _core.Context, reply: _core.Reply) -> Cancel:
                return run_handler(handle, self._loop, arguments, core_ctx, ctx_param, reply, prompt_json)

            self._core.add_prompt(json.dumps(definition), handle._invoker(invoke))
            return handle

        return register

    def method(self, name: str) -> Callable[[Callable[..., Any]], Handle]:
        """Register a function as a custom JSON-RPC method (e.g. ``"vendor/echo"``): it receives
        the request's ``params`` as keyword arguments (and a ``Context`` if it asks for one) and
        returns the JSON result."""

        def register(fn: Callable[..., Any]) -> Handle:
            _, ctx_param = schema_of(fn)
            handle = Handle(fn, "method", name)

            def invoke(params: dict[str, Any], core_ctx: _core.Context, reply: _core.Reply) -> Cancel:
                params.pop("_meta", None)
                return run_handler(handle, self._loop, params, core_ctx, ctx_param, reply, json.dumps)

            self._core.add_method(name, handle._invoker(invoke))
            return handle

        return register

    def skill(self, path: str | os.PathLike[str]) -> str:
        """Serve the skill in folder ``path`` through the skills extension (SEP-2640) and
        return its URI, ``skill://<name>/SKILL.md``.

        The folder's ``SKILL.md`` must start with YAML frontmatter giving a ``name`` (the
        Agent Skills naming rules: lowercase letters, digits, single inner hyphens) and a
        ``description``. Every file under the folder, subfolders included, becomes a resource
        ``skill://<name>/<path>`` and an entry of the skill's manifest with its ``sha256:``
        digest and size; hidden files and folders (``.git``, ``.DS_Store``) are left out. The
        files are read once, now. Serving a skill declares the extension, so ``skills/list``,
        ``skills/get`` and ``resources/directory/read`` answer (2026-07-28); a skill with the
        same name replaces the earlier one. ``ConfigError`` when the folder is not a valid skill.
        """
        root = os.fspath(path)
        if not os.path.isdir(root):
            raise NotADirectoryError(f"a skill is a folder: {root!r}")
        files: list[tuple[str, bytes]] = []
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
            for name in sorted(names):
                full = os.path.join(folder, name)
                if name.startswith(".") or not os.path.isfile(full):
                    continue
                relative = os.path.relpath(full, root).replace(os.sep, "/")
                with open(full, "rb") as f:
                    files.append((relative, f.read()))
        return self._core.add_skill(files)

    def completion(self, ref: str, argument: str) -> Callable[[Callable[..., Any]], Handle]:
        """Register ``fn(value, arguments) -> list[str]`` (sync or ``async def``) completing
        ``argument`` of the prompt named ``ref`` (or of the resource template whose
        ``uriTemplate`` is ``ref``): ``value`` is the partial value, ``arguments`` the other
        arguments the client already filled in. A ``Context`` parameter receives the request
        context."""

        def register(fn: Callable[..., Any]) -> Handle:
            ref_type = "ref/resource" if "://" in ref else "ref/prompt"
            _, ctx_param = schema_of(fn)
            named = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
            params = [n for n, p in inspect.signature(fn).parameters.items() if n != ctx_param and p.kind in named]
            if len(params) < 2:
                raise TypeError(f"a completion takes (value, arguments); {fn.__name__} takes {params}")
            handle = Handle(fn, "completion", f"{ref} {argument}")

            def invoke(value: str, context: dict[str, Any], core_ctx: _core.Context, reply: _core.Reply) -> Cancel:
                kwargs = {params[0]: value, params[1]: context}
                return run_handler(handle, self._loop, kwargs, core_ctx, ctx_param, reply, values_json)

            self._core.add_completion(ref_type, ref, argument, handle._invoker(invoke))
            return handle

        return register

    def remove(self, item: Handle | str, kind: str = "tool") -> bool:
        """Remove a tool, resource or prompt (a handle, or a name/URI with its ``kind``); the
        connected clients get the matching ``list_changed``."""
        if isinstance(item, Handle):
            kind, item = item.kind, item.name
        return self._core.remove(kind, item)
