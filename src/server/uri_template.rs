//! Matching URIs against RFC 6570 templates such as `demo://resource/dynamic/text/{id}`, so
//! `resources/read` can find the template (and its variables) a URI belongs to.
//!
//! A template compiles to an anchored regular expression (linear-time matching whatever the
//! URI): simple expressions `{name}` match one or more characters other than `/`, `?`, `#`;
//! reserved ones `{+name}` match anything non-empty. Lists in one expression (`{a,b}`) are not
//! supported; resource templates do not use them.

use regex::Regex;
use serde_json::{Map, Value};

/// A parsed URI template.
#[derive(Debug, Clone)]
pub struct UriTemplate {
    /// The anchored expression; capture group `i + 1` is variable `names[i]`.
    regex: Regex,
    /// Variable names in order of appearance.
    names: Vec<String>,
}

impl UriTemplate {
    /// Parses `template`; fails on an unclosed, empty or unsupported `{}` expression.
    pub fn parse(template: &str) -> Result<Self, String> {
        let mut pattern = String::from("^");
        let mut names = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            pattern.push_str(&regex::escape(&rest[..open]));
            let close = rest[open..]
                .find('}')
                .ok_or_else(|| format!("unclosed '{{' in URI template {template:?}"))?;
            let expr = &rest[open + 1..open + close];
            let (reserved, name) = match expr.strip_prefix('+') {
                Some(n) => (true, n),
                None => (false, expr),
            };
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            {
                return Err(format!(
                    "unsupported expression {{{expr}}} in URI template {template:?}"
                ));
            }
            pattern.push_str(if reserved { "(.+?)" } else { "([^/?#]+?)" });
            names.push(name.to_string());
            rest = &rest[open + close + 1..];
        }
        pattern.push_str(&regex::escape(rest));
        pattern.push('$');
        let regex = Regex::new(&pattern).map_err(|e| format!("URI template {template:?}: {e}"))?;
        Ok(Self { regex, names })
    }

    /// The variables of `uri` when it matches, as JSON strings.
    pub fn matches(&self, uri: &str) -> Option<Map<String, Value>> {
        let caps = self.regex.captures(uri)?;
        let vars = self.names.iter().enumerate().map(|(i, name)| {
            let value = caps.get(i + 1).map_or("", |m| m.as_str());
            (name.clone(), Value::String(value.to_string()))
        });
        Some(vars.collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_simple_and_reserved_variables() {
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
        assert!(UriTemplate::parse("x://{a,b}").is_err());
    }

    #[test]
    fn long_uris_and_adjacent_variables_match_in_linear_time() {
        let t = UriTemplate::parse("x://{a}{b}{c}/z").unwrap();
        let long = format!("x://{}", "q".repeat(200_000));
        let started = std::time::Instant::now();
        assert!(t.matches(&long).is_none());
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }
}
