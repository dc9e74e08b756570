//! What the protocol itself says: revisions and their features, version negotiation, the
//! capability objects, and the small vocabularies (log levels, method names) shared by every
//! handler.

pub mod capabilities;
pub mod dialect;
pub mod envelope;
pub mod era;
pub mod frame;
pub mod header_params;
pub mod logging;
pub mod meta;
pub mod method_names;
pub mod revision;
pub mod shape;

pub use dialect::Dialect;
pub use era::{Era, EraChoice};
pub use logging::{LogFilter, LogLevel};
pub use revision::Revision;
