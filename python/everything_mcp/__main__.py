"""``python -m everything_mcp``: see :mod:`everything_mcp.cli`."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
