//! The `--record` file: every record appended as one JSON line in a single `write`, so a line
//! is whole on disk as soon as its frame is seen.

use super::record::Record;
use std::fs::File;
use std::io::Write;
use std::path::Path;

/// The record file, if recording to one; a failed write closes it (recording to it stops, the
/// server goes on).
#[derive(Default)]
pub(super) struct RecordFile(Option<File>);

impl RecordFile {
    /// Opens `path` for appending (created if missing; several runs may share it), or none.
    pub(super) fn open(path: Option<&Path>) -> std::io::Result<Self> {
        let file = match path {
            Some(p) => Some(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)?,
            ),
            None => None,
        };
        Ok(Self(file))
    }

    /// Whether there is a file to write to.
    pub(super) fn is_open(&self) -> bool {
        self.0.is_some()
    }

    /// Appends `record` as one line; on failure logs it and stops writing to the file.
    pub(super) fn append(&mut self, record: &Record) {
        if let Some(file) = self.0.as_mut() {
            let mut line = serde_json::to_vec(record).unwrap_or_default();
            line.push(b'\n');
            if let Err(e) = file.write_all(&line) {
                tracing::error!("traffic record file: write failed, recording to it stops: {e}");
                self.0 = None;
            }
        }
    }

    /// Syncs the file's data to disk (each record is already written when it happens).
    pub(super) fn sync(&self) {
        if let Some(f) = &self.0 {
            let _ = f.sync_data();
        }
    }
}
