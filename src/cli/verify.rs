//! `verify FILE… --upstream URL|CMD`: a recording's client side sent to a live server, and how
//! its answers differ from the recorded ones ([`crate::replay::verify`]). Exit status 0 when
//! none does, 1 when one does, 2 when the recording or the server cannot be used.

use super::flags::VerifyFlags;
use crate::replay::upstream::Target;
use crate::replay::verify::Verified;
use crate::replay::Recording;
use std::io::Write;

/// A verification ready to run: the recording read, the server named.
pub struct Verifying {
    /// What is sent again.
    recording: Recording,
    /// Where to.
    target: Target,
    /// The flags.
    flags: VerifyFlags,
}

impl Verifying {
    /// Reads the recording and the server's address or command.
    pub fn new(flags: &VerifyFlags) -> Result<Self, String> {
        Ok(Self {
            recording: Recording::load(&flags.files).map_err(|e| e.to_string())?,
            target: Target::parse(&flags.upstream).map_err(|e| format!("--upstream: {e}"))?,
            flags: flags.clone(),
        })
    }

    /// Sends, compares, prints; returns the exit status.
    pub async fn run(self) -> u8 {
        match crate::replay::verify::verify(&self.recording, &self.target, &self.flags.ignore).await
        {
            Ok(verified) => self.print(&verified),
            Err(e) => {
                eprintln!("everything-mcp verify: {e}");
                2
            }
        }
    }

    /// Prints the outcome (text or JSON); 1 when an answer differs.
    fn print(&self, verified: &Verified) -> u8 {
        let text = match self.flags.json {
            true => format!("{}\n", serde_json::to_string(verified).unwrap_or_default()),
            false => verified.report(),
        };
        // The outcome is the command's output (stdout), as a test reads it.
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
        u8::from(!verified.differ.is_empty())
    }
}

/// The native command's `verify`: runs it on a runtime of its own.
pub fn main(flags: &VerifyFlags) -> u8 {
    let verifying = match Verifying::new(flags) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("everything-mcp verify: {e}");
            return 2;
        }
    };
    match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(verifying.run()),
        Err(e) => {
            eprintln!("everything-mcp verify: {e}");
            2
        }
    }
}
