//! The server's own diagnostics (`tracing`) on stderr, at the level the command line or Python
//! asks.

use crate::error::Error;

/// Sends the core's diagnostics to stderr at `level` (`off`, `error`, `warn`, `info`, `debug`,
/// `trace`, or a filter such as `everything_mcp=debug`). The first call wins.
pub fn init(level: &str) -> Result<(), Error> {
    let filter = tracing_subscriber::EnvFilter::try_new(level)
        .map_err(|e| Error::Config(format!("invalid log level {level:?}: {e}")))?;
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .try_init();
    Ok(())
}
