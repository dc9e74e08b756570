"""Options once: the Rust options types define every option; `_core` exports their names and
defaults, the Python `TypedDict`s name the same options, and the binding takes them whole."""

from __future__ import annotations

import math
import pathlib

import pytest

from everything_mcp import DEFAULTS, ConfigError, Server, _core
from everything_mcp.options import HttpOptions, Options, ServerOptions


def test_the_typed_dicts_name_exactly_the_rust_options() -> None:
    assert ServerOptions.__optional_keys__ == set(_core.SERVER_OPTIONS)
    assert HttpOptions.__optional_keys__ == set(_core.HTTP_OPTIONS)
    # The fixtures take the fault rules to put in force too.
    assert Options.__optional_keys__ == set(_core.SERVER_OPTIONS) | set(_core.HTTP_OPTIONS) | {"faults"}
    assert not ServerOptions.__required_keys__ and not HttpOptions.__required_keys__


def test_defaults_cover_every_option_and_the_host() -> None:
    assert set(DEFAULTS) == {*_core.SERVER_OPTIONS, *_core.HTTP_OPTIONS, "host"}
    assert DEFAULTS["catalogs"] == ["everything"]
    assert DEFAULTS["revisions"] == _core.SUPPORTED_REVISIONS
    assert DEFAULTS["era"] == "both" and DEFAULTS["keep_traffic"] == 10_000
    assert DEFAULTS["tick"] is None and DEFAULTS["page_size"] is None and DEFAULTS["record"] is None
    assert DEFAULTS["task_ttl"] == 300.0 and DEFAULTS["session_idle_timeout"] == 1800.0
    assert DEFAULTS["host"] == "127.0.0.1" and DEFAULTS["allow_hosts"] == []


def test_an_unknown_option_is_a_type_error_naming_it() -> None:
    with pytest.raises(
        TypeError, match=r"Server\(\) got an unexpected keyword argument 'bogus' \(its options: catalogs"
    ):
        Server(bogus=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        Server(bogus=object())  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'page_sise'"):
        _core.Server(page_sise=None)  # type: ignore[call-arg]
    with Server(catalogs=["none"]) as srv:
        with pytest.raises(TypeError, match=r"start_http\(\) got an unexpected keyword argument 'tick'"):
            srv.start_http(tick=1)  # type: ignore[call-arg]
        assert srv.base_url is None


def test_an_ill_typed_option_is_a_type_error_naming_it() -> None:
    with pytest.raises(TypeError, match="argument 'page_size': invalid type: string"):
        Server(page_size="2")  # type: ignore[typeddict-item]
    with pytest.raises(TypeError, match="argument 'catalogs'"):
        Server(catalogs="none")  # a text is not a list of names
    with pytest.raises(TypeError, match="argument 'expose_env'"):
        Server(expose_env=1)  # type: ignore[typeddict-item]
    with pytest.raises(TypeError, match="argument 'record': unsupported type object"):
        Server(record=object())  # type: ignore[typeddict-item]


def test_a_wrong_value_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="tick must be a non-negative number of seconds"):
        Server(tick=-1)
    with pytest.raises(ConfigError, match="tick must be a finite number"):
        Server(tick=math.nan)
    with pytest.raises(ConfigError, match="unknown era"):
        Server(era="bogus")
    with Server(catalogs=["none"]) as srv:
        with pytest.raises(ConfigError, match="keepalive must be a non-negative number of seconds"):
            srv.start_http(keepalive=-1)
        assert srv.base_url is None


def test_none_is_the_default_and_values_are_taken_as_python_gives_them(tmp_path: pathlib.Path) -> None:
    record = tmp_path / "t.jsonl"
    options: ServerOptions = {"catalogs": ("none",), "record": record, "page_size": None, "tick": 1}
    with Server(**options) as srv:
        assert srv.tool_names == []
        srv.start_http(json_response=None, allow_hosts=("example.com",), session_idle_timeout=0)
        assert srv.http_url is not None
    assert record.exists()
