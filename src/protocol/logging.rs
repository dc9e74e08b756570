//! The RFC 5424 severities used by `logging/setLevel` and `notifications/message`.

use std::fmt;
use std::str::FromStr;

/// A log severity, ordered from least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// Normal operational messages.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// All levels, least severe first.
    pub const ALL: [LogLevel; 8] = [
        Self::Debug,
        Self::Info,
        Self::Notice,
        Self::Warning,
        Self::Error,
        Self::Critical,
        Self::Alert,
        Self::Emergency,
    ];

    /// The wire string.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Debug => "debug",
            Self::Info => "info",
            Self::Notice => "notice",
            Self::Warning => "warning",
            Self::Error => "error",
            Self::Critical => "critical",
            Self::Alert => "alert",
            Self::Emergency => "emergency",
        }
    }
}

/// Which `notifications/message` a client receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFilter {
    /// Every message: a handshake-era session before `logging/setLevel` (as the reference
    /// server does).
    All,
    /// Messages at this level or more severe: after `logging/setLevel`, or a stateless
    /// request's `io.modelcontextprotocol/logLevel`.
    AtLeast(LogLevel),
    /// None: a stateless request without a log level (the spec: MUST NOT send any).
    Off,
}

impl LogFilter {
    /// Whether a message at `level` goes out.
    pub fn allows(self, level: LogLevel) -> bool {
        match self {
            Self::All => true,
            Self::AtLeast(min) => level >= min,
            Self::Off => false,
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LogLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|l| l.as_str() == s).ok_or_else(|| {
            format!(
                "unknown log level {s:?}; expected one of debug, info, notice, warning, error, critical, alert, emergency"
            )
        })
    }
}
