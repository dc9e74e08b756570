//! The YAML frontmatter of a `SKILL.md` (SEP-2640 / Agent Skills), read into the JSON object a
//! `skills/list` entry carries "verbatim". A skill's frontmatter is a flat mapping of a few
//! well-known fields (`name`, `description`, `license`, `compatibility`, `allowed-tools`,
//! `metadata`), so this reads the subset of YAML those use instead of pulling in a YAML
//! library: `key: scalar` pairs, one nested level of `key: scalar` (a `metadata` map) or
//! `- scalar` items, block scalars (`|`, `>`, with `-` chomping), comments, and plain, single-
//! and double-quoted scalars resolved as YAML 1.2's core schema does (`true`, `12`, `1.5`,
//! `null`, else a string). Anything else is refused with the line it is on, never guessed at:
//! the suite and real hosts parse the same file with a full YAML parser and compare.

use serde_json::{Map, Number, Value};

/// The frontmatter block at the start of `text` (after an optional BOM): the lines between a
/// leading `---` line and the next `---` line. `None` when the file does not start with one.
pub fn block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare.starts_with("---") && bare[3..].trim_matches([' ', '\t']).is_empty() {
            return Some(rest[..offset].trim_end_matches(['\n', '\r']));
        }
        offset += line.len();
    }
    None
}

/// Parses the frontmatter of a `SKILL.md` into a JSON object.
pub fn parse(text: &str) -> Result<Map<String, Value>, String> {
    let yaml = block(text).ok_or("SKILL.md does not start with a `---` frontmatter block")?;
    let lines: Vec<(usize, &str)> = yaml
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 2, l.trim_end_matches('\r')))
        .collect();
    let mut map = Map::new();
    let mut i = 0;
    while i < lines.len() {
        let (number, line) = lines[i];
        i += 1;
        if is_blank(line) {
            continue;
        }
        if line.starts_with([' ', '\t']) {
            return Err(format!("line {number}: unexpected indentation"));
        }
        let (key, rest) = key_value(line).ok_or_else(|| unsupported(number, line))?;
        let value = match rest {
            "" => {
                let end = nested_end(&lines, i);
                let value = nested(&lines[i..end])?;
                i = end;
                value
            }
            r if r.starts_with(['|', '>']) => {
                let end = nested_end(&lines, i);
                let value =
                    block_scalar(r, &lines[i..end]).ok_or_else(|| unsupported(number, line))?;
                i = end;
                Value::String(value)
            }
            r => scalar(r).ok_or_else(|| unsupported(number, line))?,
        };
        if map.insert(key, value).is_some() {
            return Err(format!("line {number}: duplicate key"));
        }
    }
    Ok(map)
}

fn unsupported(number: usize, line: &str) -> String {
    format!("line {number}: YAML this server does not read in a frontmatter: {line:?}")
}

fn is_blank(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// Index one past the lines indented under the key before `start` (blank lines included
/// while more indented lines follow).
fn nested_end(lines: &[(usize, &str)], start: usize) -> usize {
    let mut end = start;
    for (i, (_, line)) in lines.iter().enumerate().skip(start) {
        if line.starts_with([' ', '\t']) {
            end = i + 1;
        } else if !line.trim().is_empty() {
            break;
        }
    }
    end
}

/// `key: rest` (rest trimmed; the key plain or quoted).
fn key_value(line: &str) -> Option<(String, &str)> {
    let (key, rest) = if let Some(quoted) = line.strip_prefix('"') {
        let close = quoted.find('"')?;
        (
            quoted[..close].to_string(),
            quoted[close + 1..].strip_prefix(':')?,
        )
    } else if let Some(quoted) = line.strip_prefix('\'') {
        let close = quoted.find('\'')?;
        (
            quoted[..close].to_string(),
            quoted[close + 1..].strip_prefix(':')?,
        )
    } else {
        let colon = line
            .find(": ")
            .or_else(|| line.ends_with(':').then(|| line.len() - 1))?;
        (line[..colon].trim_end().to_string(), &line[colon + 1..])
    };
    if key.is_empty() || key.starts_with(['-', '[', '{', '&', '*', '!', '?']) {
        return None;
    }
    (rest.is_empty() || rest.starts_with([' ', '\t'])).then_some((key, rest.trim()))
}

/// The indented lines under a key with no inline value: a mapping of scalars, a sequence of
/// scalars, or nothing (`null`).
fn nested(lines: &[(usize, &str)]) -> Result<Value, String> {
    let items: Vec<(usize, &str)> = lines
        .iter()
        .filter(|(_, l)| !is_blank(l))
        .map(|(n, l)| (*n, l.trim()))
        .collect();
    let Some((_, first)) = items.first() else {
        return Ok(Value::Null);
    };
    let indent = |n: usize| {
        lines
            .iter()
            .find(|(m, _)| *m == n)
            .map_or(0, |(_, l)| l.len() - l.trim_start().len())
    };
    let width = indent(items[0].0);
    if let Some((n, _)) = items.iter().find(|(n, _)| indent(*n) != width) {
        let line = lines.iter().find(|(m, _)| m == n).map_or("", |(_, l)| *l);
        return Err(unsupported(*n, line));
    }
    if first.starts_with("- ") || *first == "-" {
        let values = items
            .iter()
            .map(|(n, l)| {
                let item = l
                    .strip_prefix('-')
                    .filter(|r| r.is_empty() || r.starts_with(' '));
                item.and_then(|r| scalar(r.trim()))
                    .ok_or_else(|| unsupported(*n, l))
            })
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(Value::Array(values));
    }
    let mut map = Map::new();
    for (n, l) in items {
        let (key, rest) = key_value(l).ok_or_else(|| unsupported(n, l))?;
        let value = scalar(rest)
            .filter(|_| !rest.starts_with(['|', '>']))
            .ok_or_else(|| unsupported(n, l))?;
        if map.insert(key, value).is_some() {
            return Err(format!("line {n}: duplicate key"));
        }
    }
    Ok(Value::Object(map))
}

/// A literal (`|`) or folded (`>`) block scalar, with clip (default) or strip (`-`) chomping.
fn block_scalar(header: &str, lines: &[(usize, &str)]) -> Option<String> {
    let (style, chomp) = header.split_at(1);
    let strip = match chomp.trim() {
        "" => false,
        "-" => true,
        _ => return None,
    };
    let width = lines
        .iter()
        .find(|(_, l)| !l.trim().is_empty())
        .map_or(0, |(_, l)| l.len() - l.trim_start().len());
    let body: Vec<&str> = lines
        .iter()
        .map(|(_, l)| l.get(width..).unwrap_or("").trim_end())
        .collect();
    let mut text = if style == "|" {
        body.join("\n")
    } else {
        // Folded: single line breaks become spaces, an empty line a line break.
        let mut out = String::new();
        for (i, line) in body.iter().enumerate() {
            if i > 0 {
                out.push(if line.is_empty() || body[i - 1].is_empty() {
                    '\n'
                } else {
                    ' '
                });
            }
            out.push_str(line);
        }
        out.replace(" \n", "\n")
    };
    let trimmed = text.trim_end_matches('\n').len();
    text.truncate(trimmed);
    if !strip && !text.is_empty() {
        text.push('\n');
    }
    Some(text)
}

/// A flow scalar: double-quoted, single-quoted or plain (resolved by the core schema); `None`
/// for what this reader does not handle (flow collections, anchors, tags, ...).
fn scalar(text: &str) -> Option<Value> {
    if let Some(inner) = text.strip_prefix('"') {
        let (value, rest) = double_quoted(inner)?;
        return trailing_ok(rest).then_some(Value::String(value));
    }
    if let Some(inner) = text.strip_prefix('\'') {
        let mut value = String::new();
        let mut chars = inner.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            if c == '\'' {
                if chars.peek().map(|(_, c)| *c) == Some('\'') {
                    chars.next();
                    value.push('\'');
                    continue;
                }
                return trailing_ok(&inner[i + 1..]).then_some(Value::String(value));
            }
            value.push(c);
        }
        return None;
    }
    let plain = match text.find(" #") {
        Some(i) => text[..i].trim_end(),
        None => text,
    };
    if plain.starts_with(['[', '{', '&', '*', '!', '|', '>', '%', '@', '`']) || plain.contains(": ")
    {
        return None;
    }
    Some(resolve(plain))
}

/// What may follow a closing quote: nothing or a comment.
fn trailing_ok(rest: &str) -> bool {
    let rest = rest.trim();
    rest.is_empty() || rest.starts_with('#')
}

fn double_quoted(inner: &str) -> Option<(String, &str)> {
    let mut value = String::new();
    let mut chars = inner.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((value, &inner[i + 1..])),
            '\\' => {
                let (_, e) = chars.next()?;
                match e {
                    'n' => value.push('\n'),
                    't' => value.push('\t'),
                    'r' => value.push('\r'),
                    '0' => value.push('\0'),
                    '"' | '\\' | '/' => value.push(e),
                    'u' => {
                        let hex: String = (0..4)
                            .filter_map(|_| chars.next().map(|(_, c)| c))
                            .collect();
                        value.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                    }
                    _ => return None,
                }
            }
            _ => value.push(c),
        }
    }
    None
}

/// A plain scalar under YAML 1.2's core schema.
fn resolve(plain: &str) -> Value {
    match plain {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    for (prefix, radix) in [("0x", 16), ("0o", 8)] {
        if let Some(n) = plain
            .strip_prefix(prefix)
            .and_then(|d| i64::from_str_radix(d, radix).ok())
        {
            return Value::Number(n.into());
        }
    }
    let digits = plain.strip_prefix(['-', '+']).unwrap_or(plain);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(n) = plain.trim_start_matches('+').parse::<i64>() {
            return Value::Number(n.into());
        }
    }
    let is_float = !digits.is_empty()
        && digits.bytes().any(|b| b.is_ascii_digit())
        && digits
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'))
        && digits.bytes().filter(|b| *b == b'.').count() <= 1;
    if is_float {
        if let Some(n) = plain.parse::<f64>().ok().and_then(Number::from_f64) {
            return Value::Number(n);
        }
    }
    Value::String(plain.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_fields_a_skill_uses() {
        let text = "---\nname: pdf-tools\ndescription: \"Fill forms: quickly\" # why\nlicense: 'Apache-2.0'\nversion: 2\nbeta: true\nmask: 0x1F\nratio: 1.5e3\nplain: yes\nmetadata:\n  author: everything-mcp\n  tier: \"1\"\nallowed-tools:\n  - Read\n  - Bash\nnotes: |\n  one\n  two\nfolded: >-\n  a\n  b\n---\n# Body\n";
        assert_eq!(
            Value::Object(parse(text).unwrap()),
            json!({
                "name": "pdf-tools", "description": "Fill forms: quickly", "license": "Apache-2.0",
                "version": 2, "beta": true, "mask": 31, "ratio": 1500.0, "plain": "yes", "metadata": { "author": "everything-mcp", "tier": "1" },
                "allowed-tools": ["Read", "Bash"], "notes": "one\ntwo\n", "folded": "a b"
            })
        );
    }

    #[test]
    fn refuses_what_it_does_not_read() {
        assert!(parse("no frontmatter").is_err());
        assert!(parse("---\nname: x\n").is_err(), "unterminated");
        assert!(parse("---\ntags: [a, b]\n---\n").is_err());
        assert!(parse("---\nname: &a x\n---\n").is_err());
        assert!(parse("---\nname: x\nname: y\n---\n").is_err());
        assert!(parse("---\nm:\n  a:\n    b: c\n---\n").is_err());
    }

    #[test]
    fn the_block_ends_at_the_closing_line() {
        assert_eq!(block("\u{feff}---\r\na: 1\r\n---  \r\nbody"), Some("a: 1"));
        assert_eq!(block("---\n---\n"), Some(""));
    }
}
