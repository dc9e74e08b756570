//! The command line of the serving commands (`stdio`, `http`, `sse`), one definition for the
//! native command (`src/main.rs`) and `python -m everything_mcp` (which hands these commands
//! here through the binding): [`parse`] reads the arguments, [`launch`] starts the server they
//! describe, [`main`] is the whole native command. `report` and `config` are the Python
//! package's: the native command says so, or hands them to the Python beside it
//! ([`python_command`]).
//!
//! - [`flags`]: every flag, named after the option it sets.
//! - [`invocation`]: what the arguments ask for, parsed.
//! - [`launch`]: the server the flags describe, running, announced and stopped.
//! - [`verify`]: `verify`, a recording's client side against a live server.

pub mod flags;
pub mod invocation;
pub mod launch;
pub mod verify;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
pub use flags::{HttpFlags, ReplayFlags, ServerFlags, StdioFlags, VerifyFlags};
pub use invocation::{Invocation, Serve, Transport};
pub use launch::{launch, Launched};
use std::process::ExitCode;

/// The commands; `stdio` when none is named.
#[derive(Parser, Debug)]
#[command(
    name = "everything-mcp",
    version,
    about = "A Model Context Protocol test server that exercises every corner of the protocol.",
    after_help = "With no command (or only options), serves stdio: what MCP clients spawn."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// serve newline-delimited JSON-RPC on stdin/stdout (default)
    Stdio {
        #[command(flatten)]
        server: ServerFlags,
        #[command(flatten)]
        stdio: StdioFlags,
    },
    /// serve Streamable HTTP at /mcp (and legacy SSE at /sse)
    #[command(visible_alias = "streamableHttp")]
    Http {
        #[command(flatten)]
        server: ServerFlags,
        #[command(flatten)]
        http: HttpFlags,
    },
    /// serve the legacy HTTP+SSE transport at /sse (and Streamable HTTP at /mcp)
    Sse {
        #[command(flatten)]
        server: ServerFlags,
        #[command(flatten)]
        http: HttpFlags,
    },
    /// answer from recorded traffic (--record files) instead of a catalog: on stdio, or
    /// --http / --sse (docs/replay.md)
    Replay {
        #[command(flatten)]
        replay: ReplayFlags,
        #[command(flatten)]
        server: ServerFlags,
        #[command(flatten)]
        http: HttpFlags,
    },
    /// send a recording's client side to a live server (--upstream) and print how its answers
    /// differ from the recorded ones; exit status 1 when any does (docs/replay.md)
    Verify {
        #[command(flatten)]
        verify: VerifyFlags,
    },
    /// what each client in recorded traffic did: checks, levels, a matrix (Python package)
    #[command(disable_help_flag = true)]
    Report {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// how to add this server to an agent: the file and snippet, or the command (Python
    /// package)
    #[command(disable_help_flag = true)]
    Config {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

/// The commands only the Python package has.
pub const PYTHON_COMMANDS: [&str; 2] = ["report", "config"];

/// The parser, every option's default in its help.
pub fn command() -> clap::Command {
    Cli::command()
        .mut_subcommand("stdio", flags::with_defaults)
        .mut_subcommand("http", flags::with_defaults)
        .mut_subcommand("sse", flags::with_defaults)
        .mut_subcommand("replay", flags::with_defaults)
}

/// Reads `args` (without the program's name). No command, or options only, is `stdio`, as
/// with the reference server (clients spawn it that way). A usage error, `--help` and
/// `--version` are the `Err` (`clap::Error::print` shows them, `exit_code` is the status).
pub fn parse(args: Vec<String>) -> Result<Invocation, clap::Error> {
    let top = ["-h", "--help", "-V", "--version"];
    let args = match args.first() {
        None => vec!["stdio".to_string()],
        Some(first) if first.starts_with('-') && !top.contains(&first.as_str()) => {
            std::iter::once("stdio".to_string()).chain(args).collect()
        }
        Some(_) => args,
    };
    let argv: Vec<String> = std::iter::once("everything-mcp".to_string())
        .chain(args)
        .collect();
    // The defaults in the help are written out only when help is shown: building them took a
    // quarter of the native command's instructions from spawn to exit (callgrind).
    let matches = match Cli::command().try_get_matches_from(&argv) {
        Ok(matches) => matches,
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => {
            return Err(command().try_get_matches_from(&argv).err().unwrap_or(e))
        }
        Err(e) => return Err(e),
    };
    let cli = Cli::from_arg_matches(&matches)?;
    let serve = |transport, server, http, stdio| {
        Invocation::Serve(Box::new(Serve {
            transport,
            server,
            http,
            stdio,
            replay: None,
        }))
    };
    Ok(match cli.command {
        Command::Stdio { server, stdio } => {
            serve(Transport::Stdio, server, HttpFlags::default(), stdio)
        }
        Command::Http { server, http } => {
            serve(Transport::Http, server, http, StdioFlags::default())
        }
        Command::Sse { server, http } => serve(Transport::Sse, server, http, StdioFlags::default()),
        Command::Replay {
            replay,
            server,
            http,
        } => {
            // On stdio the control API's listener, and its token, are those of `stdio`.
            let stdio = StdioFlags {
                control_port: replay.control_port,
                control_token: http.control_token.clone(),
            };
            let transport = match (replay.http, replay.sse) {
                (true, _) => Transport::Http,
                (_, true) => Transport::Sse,
                _ => Transport::Stdio,
            };
            Invocation::Serve(Box::new(Serve {
                transport,
                server,
                http,
                stdio,
                replay: Some(replay),
            }))
        }
        Command::Verify { verify } => Invocation::Verify(verify),
        Command::Report { args } => Invocation::Python {
            command: "report".into(),
            args,
        },
        Command::Config { args } => Invocation::Python {
            command: "config".into(),
            args,
        },
    })
}

/// The native command: parses the process's arguments, serves until stdin ends (`stdio`) or a
/// signal (Ctrl-C, SIGTERM) comes, and stops within a second.
pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let serve = match parse(args) {
        Ok(Invocation::Serve(serve)) => serve,
        Ok(Invocation::Python { command, args }) => return python_command(&command, &args),
        Ok(Invocation::Verify(flags)) => return ExitCode::from(verify::main(&flags)),
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let launched = match launch(&serve) {
        Ok(launched) => launched,
        Err(e) => {
            eprintln!("everything-mcp: {e}");
            return ExitCode::from(2);
        }
    };
    // Listening for the signals before the server is announced: a test may signal as soon as
    // it reads the announcement.
    let interrupted = {
        let _runtime = launched.handle().enter();
        interrupted()
    };
    launched.announce();
    match launched.run_until(interrupted) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("everything-mcp: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Ends at the first Ctrl-C or SIGTERM; listening from the call on (inside the runtime).
fn interrupted() -> impl std::future::Future<Output = ()> + Send {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let interrupt = signal(SignalKind::interrupt());
        let terminate = signal(SignalKind::terminate());
        async move {
            match (interrupt, terminate) {
                (Ok(mut interrupt), Ok(mut terminate)) => {
                    tokio::select! {
                        _ = interrupt.recv() => {}
                        _ = terminate.recv() => {}
                    }
                }
                _ => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// `report` and `config` from the native command: a Python beside it (the wheel installs both
/// into one `bin` folder) runs them; otherwise the command says where they are.
fn python_command(command: &str, args: &[String]) -> ExitCode {
    let beside = std::env::current_exe().ok().and_then(|exe| {
        let dir = exe.parent()?.to_path_buf();
        ["python3", "python", "python.exe"]
            .iter()
            .map(|name| dir.join(name))
            .find(|p| p.is_file())
    });
    let Some(python) = beside else {
        eprintln!(
            "everything-mcp: `{command}` is in the Python package: pip install everything-mcp, then \
             python -m everything_mcp {command} ..."
        );
        return ExitCode::from(2);
    };
    let status = std::process::Command::new(python)
        .args(["-m", "everything_mcp", command])
        .args(args)
        .status();
    match status.map(|s| s.code()) {
        Ok(Some(code)) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Ok(None) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("everything-mcp: {command}: {e}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{names, HttpOptions, ReplayOptions, ServerOptions};

    fn serve(args: &[&str]) -> Serve {
        match parse(args.iter().map(|a| a.to_string()).collect()).unwrap() {
            Invocation::Serve(serve) => *serve,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_option_has_its_flag() {
        let command = command();
        for (sub, group) in [
            (
                "http",
                [names::<ServerOptions>(), names::<HttpOptions>()].concat(),
            ),
            ("stdio", names::<ServerOptions>()),
            (
                "replay",
                [names::<ServerOptions>(), names::<ReplayOptions>()].concat(),
            ),
        ] {
            let sub = command.find_subcommand(sub).unwrap();
            let ids: Vec<String> = sub
                .get_arguments()
                .map(|a| a.get_id().to_string())
                .collect();
            for name in group {
                // The `replay` option is the `replay` command, its members that command's flags.
                let flagged = ids.contains(&name)
                    || (name == "lab" && ids.contains(&"lab_on".into()))
                    || name == "replay";
                assert!(
                    flagged,
                    "option {name:?} has no flag (a field named after it)"
                );
            }
        }
    }

    #[test]
    fn flags_become_the_options_they_name() {
        let s = serve(&[
            "http",
            "--catalog",
            "everything,conformance",
            "--catalog",
            "none",
            "--tick-ms",
            "250",
            "--server-name",
            "mine",
            "--no-control",
            "--tool-scope",
            "a=x",
            "--tool-scope",
            "b=y",
            "--client",
            "id:secret",
            "--no-lab",
            "--session-timeout",
            "0",
        ]);
        let server: ServerOptions = crate::options::parse(s.server.options()).unwrap();
        assert_eq!(server.catalogs, ["everything", "conformance", "none"]);
        assert_eq!(server.tick, Some(crate::options::Seconds(0.25)));
        assert_eq!(server.name, "mine");
        let http: HttpOptions = crate::options::parse(s.http.options()).unwrap();
        assert!(!http.control);
        assert_eq!(http.tool_scopes.len(), 2);
        assert_eq!(http.clients[0]["client_id"], "id");
        assert_eq!(http.lab, Some(false));
        assert_eq!(http.session_idle_timeout, crate::options::Seconds(0.0));
        assert!(http.standalone_stream);
    }

    #[test]
    fn no_flags_are_no_options() {
        let s = serve(&["http"]);
        let server = s.server.options();
        assert!(
            server
                .keys()
                .all(|k| k.starts_with("send_list") || k == "update_delay"),
            "{server:?}"
        );
        assert!(s.http.options().is_empty(), "{:?}", s.http.options());
    }

    #[test]
    fn options_alone_are_stdio_and_tick_zero_is_unset() {
        let s = serve(&["--tick-ms", "0", "--log-level", "WARNING"]);
        assert_eq!(s.transport, Transport::Stdio);
        assert_eq!(s.server.log_level, "warn");
        assert!(!s.server.options().contains_key("tick"));
    }

    #[test]
    fn report_and_config_are_handed_on_whole() {
        let args = ["report", "a.jsonl", "--json"].map(String::from).to_vec();
        match parse(args).unwrap() {
            Invocation::Python { command, args } => {
                assert_eq!(
                    (command.as_str(), args),
                    ("report", vec!["a.jsonl".into(), "--json".into()])
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_bad_value_is_a_usage_error() {
        let e = parse(["http", "--catalog", "bogus"].map(String::from).to_vec()).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("bogus"), "{e}");
        let e = parse(["http", "--port", "70000"].map(String::from).to_vec()).unwrap_err();
        assert!(e.to_string().contains("expected a port 0-65535"), "{e}");
    }

    #[test]
    fn help_shows_the_core_defaults() {
        let help = command()
            .find_subcommand_mut("http")
            .unwrap()
            .render_help()
            .to_string();
        assert!(help.contains("(default: 67,108,864)"), "{help}");
        assert!(help.contains("(default: everything)"), "{help}");
    }
}
