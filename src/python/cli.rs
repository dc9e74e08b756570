//! `python -m everything_mcp stdio|http|sse`: the core's command line ([`crate::cli`]), run
//! from Python so both commands have one definition of the flags. The server is served with
//! the GIL released, waking to let Python's signal handlers run (Ctrl-C, the CLI's SIGTERM
//! handler); its report is the Python package's, as a `Server` made in Python has.

use super::server::report;
use super::wait::{run_interruptibly, Waited};
use crate::cli::{self, launch::STOP_TIMEOUT, Invocation};
use pyo3::prelude::*;

/// Runs a serving command given its arguments (without the program's name); returns the exit
/// status. Help, `--version` and usage errors are printed here, as the native command prints
/// them. A signal handler's exception stops the server, then propagates.
#[pyfunction]
pub fn cli_main(py: Python<'_>, args: Vec<String>) -> PyResult<i32> {
    let serve = match cli::parse(args) {
        Ok(Invocation::Serve(serve)) => serve,
        Ok(Invocation::Verify(flags)) => return verify(py, &flags),
        Ok(Invocation::Python { command, .. }) => {
            return Err(super::errors::ConfigError::new_err(format!(
                "`{command}` is the Python CLI's (everything_mcp.cli.main)"
            )))
        }
        Err(e) => {
            let _ = e.print();
            return Ok(e.exit_code());
        }
    };
    let launched = match py.detach(|| cli::launch(&serve)) {
        Ok(launched) => launched,
        Err(e) => {
            eprintln!("everything-mcp: {e}");
            return Ok(2);
        }
    };
    let server = launched.server();
    server.report.set(report::source(server.recorder.clone()));
    launched.announce();
    let handle = launched.handle().clone();
    let drain = Some((launched.shutdown(), STOP_TIMEOUT));
    let served = run_interruptibly(py, &handle, None, drain, launched.serving());
    py.detach(|| launched.stop());
    match served? {
        Waited::Done(Err(e)) => {
            eprintln!("everything-mcp: {e}");
            Ok(1)
        }
        _ => Ok(0),
    }
}

/// `verify`, its waits interruptible (Ctrl-C ends it).
fn verify(py: Python<'_>, flags: &cli::VerifyFlags) -> PyResult<i32> {
    let verifying = match cli::verify::Verifying::new(flags) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("everything-mcp verify: {e}");
            return Ok(2);
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let waited = run_interruptibly(py, runtime.handle(), None, None, verifying.run())?;
    Ok(match waited {
        Waited::Done(status) => i32::from(status),
        _ => 2,
    })
}
