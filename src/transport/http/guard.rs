//! The DNS-rebinding guard: only requests whose `Host` names this machine's loopback (or an
//! allowed host), and whose `Origin`, when present, is a loopback (or allowed) origin, get
//! through. Everything else is refused with 403 before it reaches MCP.

/// Hosts and origins accepted besides loopback.
#[derive(Debug, Clone, Default)]
pub struct Allowlist {
    /// Extra `Host` names (without port); `"*"` accepts any host.
    pub hosts: Vec<String>,
    /// Extra origins (`scheme://host[:port]`); `"*"` accepts any origin.
    pub origins: Vec<String>,
}

const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// The host part of a `Host` header value (`[::1]:3001` → `[::1]`, `localhost:80` → `localhost`).
fn host_name(value: &str) -> &str {
    let value = value.trim();
    if value.starts_with('[') {
        return value.find(']').map_or(value, |end| &value[..=end]);
    }
    value.rsplit_once(':').map_or(value, |(host, port)| {
        if port.chars().all(|c| c.is_ascii_digit()) {
            host
        } else {
            value
        }
    })
}

impl Allowlist {
    /// Whether a `Host` header value is acceptable.
    pub fn host_ok(&self, host: &str) -> bool {
        let name = host_name(host).to_ascii_lowercase();
        LOOPBACK.contains(&name.as_str())
            || self
                .hosts
                .iter()
                .any(|h| h == "*" || h.eq_ignore_ascii_case(&name))
    }

    /// Whether an `Origin` header value is acceptable.
    pub fn origin_ok(&self, origin: &str) -> bool {
        let origin = origin.trim();
        if self
            .origins
            .iter()
            .any(|o| o == "*" || o.eq_ignore_ascii_case(origin))
        {
            return true;
        }
        let Some((scheme, rest)) = origin.split_once("://") else {
            return false;
        };
        (scheme == "http" || scheme == "https")
            && !rest.contains('/')
            && LOOPBACK.contains(&host_name(rest).to_ascii_lowercase().as_str())
    }

    /// Why a request with these headers is refused, if it is.
    pub fn refusal(&self, host: Option<&str>, origin: Option<&str>) -> Option<String> {
        match host {
            None => return Some("Forbidden: missing Host header".into()),
            Some(h) if !self.host_ok(h) => {
                return Some(format!(
                "Forbidden: Host {h:?} is not allowed (DNS-rebinding protection; see --allow-host)"
            ))
            }
            Some(_) => {}
        }
        match origin {
            Some(o) if !self.origin_ok(o) => {
                Some(format!("Forbidden: Origin {o:?} is not allowed (DNS-rebinding protection; see --allow-origin)"))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_only_by_default() {
        let a = Allowlist::default();
        for ok in [
            "localhost",
            "localhost:3001",
            "127.0.0.1:1",
            "[::1]:8080",
            "[::1]",
            "LOCALHOST",
        ] {
            assert!(a.host_ok(ok), "{ok}");
        }
        for bad in [
            "evil.example.com",
            "evil.example.com:3001",
            "127.0.0.1.evil.com",
            "10.0.0.1",
        ] {
            assert!(!a.host_ok(bad), "{bad}");
        }
        assert!(a.origin_ok("http://localhost:5173"));
        assert!(a.origin_ok("https://127.0.0.1"));
        assert!(!a.origin_ok("http://evil.example.com"));
        assert!(!a.origin_ok("null"));
        assert!(!a.origin_ok("file://localhost"));
        assert!(a.refusal(Some("localhost:1"), None).is_none());
        assert!(a
            .refusal(Some("localhost:1"), Some("http://evil.example.com"))
            .is_some());
    }

    #[test]
    fn allowlists_widen_it() {
        let a = Allowlist {
            hosts: vec!["example.test".into()],
            origins: vec!["https://app.example.test".into()],
        };
        assert!(a.host_ok("example.test:443"));
        assert!(a.origin_ok("https://app.example.test"));
        let any = Allowlist {
            hosts: vec!["*".into()],
            origins: vec!["*".into()],
        };
        assert!(any.host_ok("whatever") && any.origin_ok("http://whatever"));
    }
}
