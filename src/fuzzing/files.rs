//! `files`: what a test suite hands the server as text, by the first byte: a fault file, a
//! canned tool, resource or prompt, a replay recording, a server's options, a URI template and
//! a URI to match against it. Each is read or refused with an error; none panics, and a
//! template's match gives strings for its variables.

use std::path::Path;

/// The target.
pub fn files(data: &[u8]) {
    let [kind, rest @ ..] = data else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    match kind % 7 {
        0 => {
            let _ = crate::faults::rule::parse_file(&text);
        }
        1 => {
            let _ = crate::catalog::canned::tool(&text);
        }
        2 => {
            let _ = crate::catalog::canned::resource(&text);
        }
        3 => {
            let _ = crate::catalog::canned::prompt(&text);
        }
        4 => {
            if let Ok(recording) =
                crate::replay::recording::Recording::from_text(Path::new("fuzz.jsonl"), &text)
            {
                let _ = recording.server_info();
            }
        }
        5 => {
            if let Ok(options) = serde_json::from_str::<crate::options::ServerOptions>(&text) {
                let _ = options.server_config();
                let _ = options.catalog_options();
            }
        }
        _ => {
            let (template, uri) = text.split_once('\n').unwrap_or((&text, ""));
            if let Ok(template) = crate::server::uri_template::UriTemplate::parse(template) {
                if let Some(vars) = template.matches(uri) {
                    assert!(vars.values().all(|v| v.is_string() || v.is_array()));
                }
            }
        }
    }
}
