//! An OAuth request's parameters (a `/token` form, an `/authorize` query), read as RFC 6749 §3.1
//! says: a parameter sent without a value is treated as omitted, and one sent more than once
//! makes the request invalid (rather than one of its values winning quietly).

use std::collections::HashMap;

/// The parameters of `text` (`application/x-www-form-urlencoded`; what does not decode as
/// UTF-8 reads as U+FFFD), or why the request is invalid (`invalid_request`).
pub fn parse(text: &str) -> Result<HashMap<String, String>, String> {
    let pairs: Vec<(String, String)> = serde_urlencoded::from_str(text).unwrap_or_default();
    let mut params = HashMap::with_capacity(pairs.len());
    for (name, value) in pairs {
        if value.is_empty() {
            continue;
        }
        if params.contains_key(&name) {
            return Err(format!(
                "{name} is repeated: a parameter must not be included more than once (RFC 6749 §3.1)"
            ));
        }
        params.insert(name, value);
    }
    Ok(params)
}

/// The name of the first parameter of `text` whose name or value is not UTF-8 once
/// percent-decoded (`parse` reads those as U+FFFD, so the value could not be given back as
/// received).
pub fn not_utf8(text: &str) -> Option<String> {
    let utf8 = |part: &str| {
        percent_encoding::percent_decode_str(&part.replace('+', " "))
            .decode_utf8()
            .is_ok()
    };
    text.split('&').find_map(|pair| {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        (!utf8(name) || !utf8(value)).then(|| {
            percent_encoding::percent_decode_str(name)
                .decode_utf8_lossy()
                .into_owned()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::{not_utf8, parse};

    #[test]
    fn a_parameter_that_is_not_utf8_is_named() {
        assert_eq!(not_utf8("a=1&state=%ff%fe"), Some("state".into()));
        assert_eq!(not_utf8("%ff=1"), Some("\u{fffd}".into()));
        assert_eq!(not_utf8("state=%C3%BC+x&b"), None);
    }

    #[test]
    fn a_parameter_without_a_value_is_omitted_and_a_repeated_one_refused() {
        let form = parse("grant_type&scope=&code=abc").unwrap();
        assert_eq!(form.len(), 1);
        assert_eq!(form["code"], "abc");
        assert_eq!(
            parse("grant_type=a&grant_type=b").unwrap_err(),
            "grant_type is repeated: a parameter must not be included more than once (RFC 6749 §3.1)"
        );
        assert!(parse("%ff=%fe&&=&%").is_ok());
    }
}
