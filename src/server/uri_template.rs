//! Matching URIs against RFC 6570 templates such as `demo://resource/dynamic/text/{id}`, so
//! `resources/read` can find the template (and its variables) a URI belongs to.
//!
//! Simple expressions `{name}` match one or more characters other than `/`, `?`, `#`;
//! reserved `{+name}` match anything. That is what resource templates use in practice.

use serde_json::{Map, Value};

/// One piece of a parsed template.
#[derive(Debug, Clone, PartialEq)]
enum Part {
    /// Text that must appear as is.
    Literal(String),
    /// A variable; `reserved` (`{+x}`) may span `/`.
    Var { name: String, reserved: bool },
}

/// A parsed URI template.
#[derive(Debug, Clone, PartialEq)]
pub struct UriTemplate {
    parts: Vec<Part>,
}

impl UriTemplate {
    /// Parses `template`; fails on an unclosed or empty `{}`.
    pub fn parse(template: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_string()));
            }
            let close = rest[open..]
                .find('}')
                .ok_or_else(|| format!("unclosed '{{' in URI template {template:?}"))?;
            let expr = &rest[open + 1..open + close];
            let (reserved, name) = match expr.strip_prefix('+') {
                Some(n) => (true, n),
                None => (false, expr),
            };
            if name.is_empty() {
                return Err(format!("empty expression in URI template {template:?}"));
            }
            parts.push(Part::Var {
                name: name.to_string(),
                reserved,
            });
            rest = &rest[open + close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_string()));
        }
        Ok(Self { parts })
    }

    /// The variables of `uri` when it matches, as JSON strings.
    pub fn matches(&self, uri: &str) -> Option<Map<String, Value>> {
        let mut vars = Map::new();
        if match_parts(&self.parts, uri, &mut vars) {
            Some(vars)
        } else {
            None
        }
    }
}

fn match_parts(parts: &[Part], s: &str, vars: &mut Map<String, Value>) -> bool {
    match parts.split_first() {
        None => s.is_empty(),
        Some((Part::Literal(lit), rest)) => s
            .strip_prefix(lit.as_str())
            .is_some_and(|tail| match_parts(rest, tail, vars)),
        Some((Part::Var { name, reserved }, rest)) => {
            // Try every possible end of the variable, shortest first, and backtrack.
            let ends = s
                .char_indices()
                .map(|(i, _)| i)
                .skip(1)
                .chain(std::iter::once(s.len()));
            for end in ends.filter(|&e| e > 0) {
                let value = &s[..end];
                if !reserved && value.contains(['/', '?', '#']) {
                    break;
                }
                if match_parts(rest, &s[end..], vars) {
                    vars.insert(name.clone(), Value::String(value.to_string()));
                    return true;
                }
            }
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_simple_variables() {
        let t = UriTemplate::parse("demo://resource/dynamic/text/{id}").unwrap();
        assert_eq!(
            t.matches("demo://resource/dynamic/text/12").unwrap()["id"],
            "12"
        );
        assert!(t.matches("demo://resource/dynamic/text/").is_none());
        assert!(t.matches("demo://resource/dynamic/text/1/2").is_none());
        assert!(t.matches("demo://other/1").is_none());
        let t = UriTemplate::parse("test://{a}/x/{b}.txt").unwrap();
        let v = t.matches("test://one/x/two.txt").unwrap();
        assert_eq!(
            (v["a"].as_str(), v["b"].as_str()),
            (Some("one"), Some("two"))
        );
        let t = UriTemplate::parse("file:///{+path}").unwrap();
        assert_eq!(t.matches("file:///a/b/c").unwrap()["path"], "a/b/c");
        assert!(UriTemplate::parse("x://{").is_err());
    }
}
