//! Numbers as JavaScript prints them (`String(n)`), because the reference server's outputs are
//! JavaScript template strings and clients assert on them: `5.5`, `3` (not `3.0`), `1e+21`.

use serde_json::Value;

/// Formats `n` exactly like JavaScript's `Number.prototype.toString()`.
pub fn format(n: f64) -> String {
    let mut buf = ryu_js::Buffer::new();
    buf.format(n).to_string()
}

/// A JSON number for `n`: an integer when `n` is integral (so `1.0` goes out as `1`, as a
/// JavaScript server would send it), otherwise a float. Non-finite values become `null`.
pub fn to_json(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_javascript() {
        let cases = [
            (5.5, "5.5"),
            (3.0, "3"),
            (-0.0, "0"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e21, "1e+21"),
            (1e-7, "1e-7"),
            (123456789012.0, "123456789012"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
        ];
        for (n, s) in cases {
            assert_eq!(format(n), s);
        }
        assert_eq!(to_json(2.0).to_string(), "2");
        assert_eq!(to_json(2.5).to_string(), "2.5");
    }
}
