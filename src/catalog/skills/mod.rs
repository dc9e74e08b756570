//! The `skills` catalog: three small skills of our own (`files/`), served through the skills
//! extension (SEP-2640, `io.modelcontextprotocol/skills`), so a host's skill discovery,
//! retrieval and digest checks can be tested against a server that follows every rule the
//! conformance suite checks. Each skill is a folder with a `SKILL.md` (YAML frontmatter `name`
//! and `description`) and one or two files; `json-rpc-triage` and `release-notes` have a
//! subdirectory, so `resources/directory/read` has one to list. The files are compiled in.

use super::Options;
use crate::error::Error;
use crate::server::registry::Registry;
use crate::server::skills::Skill;

/// A skill's files, `(path inside its folder, bytes)`, embedded from `files/<skill>/`.
macro_rules! skill_files {
    ($skill:literal: $($path:literal),+ $(,)?) => {
        vec![$((
            $path.to_string(),
            include_bytes!(concat!("files/", $skill, "/", $path)).to_vec(),
        )),+]
    };
}

/// Every skill of the catalog, in the order `skills/list` shows them.
pub fn skills() -> Result<Vec<Skill>, Error> {
    [
        skill_files!("json-rpc-triage": "SKILL.md", "reference/error-codes.md"),
        skill_files!("release-notes": "SKILL.md", "templates/entry.md"),
        skill_files!("unit-conversion": "SKILL.md", "factors.csv"),
    ]
    .into_iter()
    .map(Skill::new)
    .collect()
}

/// Serves the catalog's skills (which declares the skills extension).
pub fn load(registry: &mut Registry, _options: &Options) -> Result<(), Error> {
    for skill in skills()? {
        registry.add_skill(skill);
    }
    Ok(())
}
