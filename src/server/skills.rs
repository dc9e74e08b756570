//! A skill (SEP-2640, the `io.modelcontextprotocol/skills` extension): a folder with a
//! `SKILL.md` at its root, served as resources under `skill://<name>/`. One [`Skill`] is built
//! from the folder's files (a Rust catalog's embedded ones or `srv.skill(path)`'s from disk) and
//! knows everything the extension's methods answer: its `skills/list` entry (frontmatter, and
//! the complete `{uri, digest, size}` manifest), the resources `resources/read` serves, and
//! the children `resources/directory/read` lists.

use crate::error::Error;
use base64::Engine;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::sync::Arc;

/// The file every skill has at its root; its frontmatter names and describes the skill.
pub const SKILL_MD: &str = "SKILL.md";

/// The URI scheme the extension recommends for skill resources.
pub const SCHEME: &str = "skill://";

/// The `mimeType` of a directory in `resources/directory/read` (the extension's rule, so a
/// client knows it can descend).
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// One file of a skill.
#[derive(Debug)]
pub struct SkillFile {
    /// The path inside the skill folder, `/`-separated (`SKILL.md`, `references/FORMS.md`).
    pub path: String,
    /// `skill://<name>/<path>`.
    pub uri: String,
    /// The raw bytes, served as text when they are UTF-8 and as a blob otherwise; the digest
    /// and size cover exactly these.
    pub bytes: Arc<[u8]>,
    /// Guessed from the file name (`text/markdown` for `.md`, ...).
    pub mime_type: &'static str,
    /// `sha256:<64 lowercase hex>` of `bytes`, as the manifest carries it.
    pub digest: String,
}

/// A skill: its name, its `SKILL.md` frontmatter and every file, `SKILL.md` first.
#[derive(Debug)]
pub struct Skill {
    /// The frontmatter `name`, which is also the last segment of the skill's path.
    pub name: String,
    /// `skill://<name>/SKILL.md`: the skill's identity in `skills/list` and `skills/get`.
    pub uri: String,
    /// The frontmatter as a JSON object, "verbatim" as the extension asks.
    pub frontmatter: Map<String, Value>,
    /// Every file, `SKILL.md` first, then by path: the manifest lists them all.
    pub files: Vec<SkillFile>,
}

/// Whether `name` follows the Agent Skills naming rules: 1-64 characters, lowercase letters,
/// digits and hyphens, no leading, trailing or doubled hyphen.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

impl Skill {
    /// Builds a skill from its files, `(path inside the folder, bytes)`. Fails when there is no
    /// `SKILL.md`, its frontmatter cannot be read or lacks a non-empty `name` or `description`,
    /// the name breaks the naming rules, or a path is not a plain relative one.
    pub fn new(files: Vec<(String, Vec<u8>)>) -> Result<Self, Error> {
        let skill_md = files
            .iter()
            .find(|(p, _)| p == SKILL_MD)
            .ok_or_else(|| Error::Definition(format!("a skill needs a {SKILL_MD} at its root")))?;
        let text = std::str::from_utf8(&skill_md.1)
            .map_err(|_| Error::Definition(format!("{SKILL_MD} is not UTF-8")))?;
        let frontmatter = super::frontmatter::parse(text)
            .map_err(|e| Error::Definition(format!("{SKILL_MD} frontmatter: {e}")))?;
        let field = |key: &str| {
            frontmatter
                .get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .ok_or_else(|| {
                    Error::Definition(format!(
                        "{SKILL_MD} frontmatter needs a non-empty string \"{key}\""
                    ))
                })
        };
        let name = field("name")?.to_string();
        field("description")?;
        if !valid_name(&name) {
            return Err(Error::Definition(format!(
                "skill name {name:?} breaks the naming rules (1-64 of a-z, 0-9 and single inner hyphens)"
            )));
        }
        let mut files: Vec<SkillFile> = files
            .into_iter()
            .map(|(path, bytes)| {
                let plain = !path.is_empty()
                    && !path.starts_with('/')
                    && path
                        .split('/')
                        .all(|s| !s.is_empty() && s != "." && s != "..");
                if !plain {
                    return Err(Error::Definition(format!(
                        "skill file path {path:?} is not a plain relative path"
                    )));
                }
                let digest = format!("sha256:{:x}", Sha256::digest(&bytes));
                Ok(SkillFile {
                    uri: format!("{SCHEME}{name}/{path}"),
                    mime_type: mime_type(&path, &bytes),
                    bytes: bytes.into(),
                    digest,
                    path,
                })
            })
            .collect::<Result<_, _>>()?;
        files.sort_by(|a, b| (a.path != SKILL_MD, &a.path).cmp(&(b.path != SKILL_MD, &b.path)));
        if let Some(pair) = files.windows(2).find(|w| w[0].path == w[1].path) {
            return Err(Error::Definition(format!(
                "skill file {:?} is given twice",
                pair[0].path
            )));
        }
        Ok(Self {
            uri: format!("{SCHEME}{name}/{SKILL_MD}"),
            name,
            frontmatter,
            files,
        })
    }

    /// The skill's entry in `skills/list` and `skills/get`: `uri`, `frontmatter` and the
    /// complete `resources` manifest (`SKILL.md` included).
    pub fn entry(&self) -> Value {
        let resources: Vec<Value> = self
            .files
            .iter()
            .map(|f| json!({ "uri": f.uri, "digest": f.digest, "size": f.bytes.len() }))
            .collect();
        json!({ "uri": self.uri, "frontmatter": self.frontmatter, "resources": resources })
    }

    /// `skill://<name>`: the skill's folder, a directory for `resources/directory/read`.
    pub fn root(&self) -> String {
        format!("{SCHEME}{}", self.name)
    }

    /// The direct children of directory `uri` of this skill (`skill://<name>` or one of its
    /// subdirectories), as `resources/directory/read` lists them: files with their `mimeType`
    /// and `size`, subdirectories with `inode/directory`. `None` when `uri` is not one of the
    /// skill's directories.
    pub fn directory(&self, uri: &str) -> Option<Vec<Map<String, Value>>> {
        let rest = uri.strip_prefix(&self.root())?;
        let prefix = match rest.trim_end_matches('/') {
            "" => String::new(),
            sub => format!("{}/", sub.strip_prefix('/')?),
        };
        let mut subdirectories = BTreeSet::new();
        let mut files = Vec::new();
        for f in &self.files {
            let Some(tail) = f.path.strip_prefix(&prefix) else {
                continue;
            };
            match tail.split_once('/') {
                Some((dir, _)) => {
                    subdirectories.insert(dir);
                }
                None => files.push(f),
            }
        }
        if files.is_empty() && subdirectories.is_empty() {
            return None;
        }
        let root = self.root();
        let children = files
            .into_iter()
            .map(|f| {
                let name = f.path.rsplit('/').next().unwrap_or(&f.path);
                as_map(json!({
                    "uri": f.uri, "name": name, "mimeType": f.mime_type, "size": f.bytes.len()
                }))
            })
            .chain(subdirectories.into_iter().map(|dir| {
                as_map(json!({
                    "uri": format!("{root}/{prefix}{dir}"), "name": dir, "mimeType": DIRECTORY_MIME_TYPE
                }))
            }))
            .collect();
        Some(children)
    }
}

/// The map inside a `json!({...})` literal.
fn as_map(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// A file's `resources/read` contents: text when UTF-8, else a base64 blob.
pub fn contents(f: &SkillFile) -> Value {
    match std::str::from_utf8(&f.bytes) {
        Ok(text) => json!({ "uri": f.uri, "mimeType": f.mime_type, "text": text }),
        Err(_) => json!({
            "uri": f.uri,
            "mimeType": f.mime_type,
            "blob": base64::engine::general_purpose::STANDARD.encode(&f.bytes)
        }),
    }
}

/// The `mimeType` of a skill file, from its extension; unknown ones are `text/plain` when the
/// bytes are UTF-8 and `application/octet-stream` otherwise.
fn mime_type(path: &str, bytes: &[u8]) -> &'static str {
    let extension = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match extension.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "json" => "application/json",
        "yaml" | "yml" => "application/yaml",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "py" => "text/x-python",
        "sh" => "text/x-shellscript",
        "js" | "mjs" => "text/javascript",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        _ if std::str::from_utf8(bytes).is_ok() => "text/plain",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
        list.iter()
            .map(|(p, t)| ((*p).to_string(), t.as_bytes().to_vec()))
            .collect()
    }

    const SKILL: &str = "---\nname: demo\ndescription: A demo.\n---\nBody\n";

    #[test]
    fn the_entry_lists_every_file_with_digest_and_size() {
        let skill = Skill::new(files(&[("b/c.txt", "x"), ("SKILL.md", SKILL)])).unwrap();
        let entry = skill.entry();
        assert_eq!(entry["uri"], "skill://demo/SKILL.md");
        assert_eq!(entry["frontmatter"]["name"], "demo");
        let resources = entry["resources"].as_array().unwrap();
        assert_eq!(resources[0]["uri"], "skill://demo/SKILL.md");
        assert_eq!(resources[0]["size"], SKILL.len());
        assert_eq!(
            resources[1]["digest"],
            "sha256:2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
        );
    }

    #[test]
    fn directories_list_their_direct_children() {
        let skill = Skill::new(files(&[
            ("SKILL.md", SKILL),
            ("a/one.md", "1"),
            ("a/b/two.md", "2"),
        ]))
        .unwrap();
        let uris = |dir: &str| -> Option<Vec<String>> {
            skill.directory(dir).map(|c| {
                c.iter()
                    .map(|m| format!("{} {}", m["uri"], m["mimeType"]))
                    .collect()
            })
        };
        assert_eq!(
            uris("skill://demo").unwrap(),
            [
                "\"skill://demo/SKILL.md\" \"text/markdown\"",
                "\"skill://demo/a\" \"inode/directory\""
            ]
        );
        assert_eq!(uris("skill://demo/a").unwrap().len(), 2);
        assert_eq!(uris("skill://demo/SKILL.md"), None);
        assert_eq!(uris("skill://demo/a/one.md"), None);
        assert_eq!(uris("skill://demox"), None);
    }

    #[test]
    fn a_skill_needs_a_valid_skill_md() {
        assert!(Skill::new(files(&[("README.md", "x")])).is_err());
        assert!(Skill::new(files(&[(
            "SKILL.md",
            "---\nname: Bad_Name\ndescription: d\n---\n"
        )]))
        .is_err());
        assert!(Skill::new(files(&[("SKILL.md", "---\nname: ok\n---\n")])).is_err());
        assert!(Skill::new(files(&[("SKILL.md", SKILL), ("../x", "")])).is_err());
        assert!(valid_name("a-b1") && !valid_name("a--b") && !valid_name("-a") && !valid_name(""));
    }
}
