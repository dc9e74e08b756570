//! `everything-mcp`, the native command: `stdio`, `http` and `sse` without a Python interpreter,
//! with the flags and behaviour of `python -m everything_mcp` (both are `_core::cli`).

fn main() -> std::process::ExitCode {
    _core::cli::main()
}
