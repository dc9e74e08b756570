//! The text both reference surfaces answer a roots listing with (v2 `get-roots-list`, v1
//! `listRoots`): the explanation for an empty list, or the numbered roots and the closing note.

/// The listing of `roots`, each a `(name, uri)` pair as its surface reads it from the client's
/// `roots/list` result (the surfaces differ on a missing name or a non-string URI).
pub fn listing(roots: &[(&str, String)]) -> String {
    if roots.is_empty() {
        return "The client supports roots but no roots are currently configured.\n\nThis could mean:\n1. The client hasn't provided any roots yet\n2. The client provided an empty roots list\n3. The roots configuration is still being loaded".into();
    }
    let items: Vec<String> = roots
        .iter()
        .enumerate()
        .map(|(i, (name, uri))| format!("{}. {name}\n   URI: {uri}", i + 1))
        .collect();
    format!(
        "Current MCP Roots ({} total):\n\n{}\n\nNote: This server demonstrates the roots protocol capability but doesn't actually access files. The roots are provided by the MCP client and can be used by servers that need file system access.",
        roots.len(),
        items.join("\n\n")
    )
}
