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

#[cfg(test)]
mod tests {
    use super::parse;

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
