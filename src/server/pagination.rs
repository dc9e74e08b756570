//! Opaque pagination cursors for `*/list`. A cursor names the list it belongs to and where the
//! next page starts, base64url-encoded so clients treat it as opaque (as the spec requires).

use crate::jsonrpc::ErrorObject;
use crate::protocol::shape::{self, Shape};
use crate::protocol::Revision;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde_json::{Map, Value};
use std::sync::Arc;

/// A custom paging scheme for a list: `(list length, params) -> page`. Lets a catalog
/// reproduce another server's cursors and page size (see `Registry::resource_pager`).
pub type Pager = Arc<dyn Fn(usize, &Map<String, Value>) -> Result<Page, ErrorObject> + Send + Sync>;

/// One page: the index range to return and the cursor of the next page, if any.
#[derive(Debug, PartialEq)]
pub struct Page {
    /// Index of the first item.
    pub start: usize,
    /// One past the last item.
    pub end: usize,
    /// `nextCursor`, when more items follow.
    pub next_cursor: Option<String>,
}

/// Cuts the page of a list of `len` items that `params.cursor` asks for. `list` names the list
/// (a cursor from another list is refused); `page_size` `None` means one page.
pub fn page(
    list: &str,
    len: usize,
    params: &Map<String, Value>,
    page_size: Option<usize>,
) -> Result<Page, ErrorObject> {
    let start = match params.get("cursor") {
        None | Some(Value::Null) => 0,
        Some(Value::String(c)) => decode(list, c).ok_or_else(|| {
            ErrorObject::invalid_params(format!("invalid cursor {c:?} for {list}"))
        })?,
        Some(_) => return Err(ErrorObject::invalid_params("\"cursor\" must be a string")),
    };
    let start = start.min(len);
    let end = page_size.map_or(len, |n| start.saturating_add(n).min(len));
    let next_cursor = (end < len).then(|| encode(list, end));
    Ok(Page {
        start,
        end,
        next_cursor,
    })
}

fn encode(list: &str, offset: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("{list}:{offset}"))
}

fn decode(list: &str, cursor: &str) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    let (name, offset) = text.rsplit_once(':')?;
    (name == list).then_some(())?;
    offset.parse().ok()
}

/// A `*/list` result: the page of `definitions` that `params.cursor` asks for, each shaped for
/// `revision`, as `{<key>: [...], nextCursor?}`.
pub fn list_page<'a>(
    key: &str,
    definitions: impl ExactSizeIterator<Item = &'a Map<String, Value>>,
    params: &Map<String, Value>,
    page_size: Option<usize>,
    shape: Shape,
    revision: Revision,
) -> Result<Value, ErrorObject> {
    let p = page(key, definitions.len(), params, page_size)?;
    Ok(shaped_page(key, definitions, p, shape, revision))
}

/// [`list_page`] with the page cut by `pager` instead of the built-in cursors.
pub fn list_page_with<'a>(
    key: &str,
    definitions: impl ExactSizeIterator<Item = &'a Map<String, Value>>,
    params: &Map<String, Value>,
    pager: &Pager,
    shape: Shape,
    revision: Revision,
) -> Result<Value, ErrorObject> {
    let p = pager(definitions.len(), params)?;
    let p = Page {
        start: p.start.min(definitions.len()),
        end: p
            .end
            .min(definitions.len())
            .max(p.start.min(definitions.len())),
        next_cursor: p.next_cursor,
    };
    Ok(shaped_page(key, definitions, p, shape, revision))
}

fn shaped_page<'a>(
    key: &str,
    definitions: impl ExactSizeIterator<Item = &'a Map<String, Value>>,
    p: Page,
    shape: Shape,
    revision: Revision,
) -> Value {
    let items = definitions
        .skip(p.start)
        .take(p.end - p.start)
        .map(|d| shape::shaped(shape, d, revision));
    let mut result = Map::new();
    result.insert(key.into(), Value::Array(items.collect()));
    if let Some(c) = p.next_cursor {
        result.insert("nextCursor".into(), c.into());
    }
    Value::Object(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn walks_pages_with_opaque_cursors() {
        let p = page("tools", 25, &Map::new(), Some(10)).unwrap();
        assert_eq!((p.start, p.end), (0, 10));
        let c = p.next_cursor.unwrap();
        let p = page("tools", 25, &params(json!({ "cursor": c })), Some(10)).unwrap();
        assert_eq!((p.start, p.end), (10, 20));
        let p = page(
            "tools",
            25,
            &params(json!({ "cursor": p.next_cursor.unwrap() })),
            Some(10),
        )
        .unwrap();
        assert_eq!((p.start, p.end, p.next_cursor), (20, 25, None));
        assert_eq!(
            page("tools", 3, &Map::new(), None).unwrap(),
            Page {
                start: 0,
                end: 3,
                next_cursor: None
            }
        );
    }

    #[test]
    fn refuses_foreign_or_garbage_cursors() {
        let c = page("prompts", 25, &Map::new(), Some(10))
            .unwrap()
            .next_cursor
            .unwrap();
        assert!(page("tools", 25, &params(json!({ "cursor": c })), Some(10)).is_err());
        assert!(page("tools", 25, &params(json!({ "cursor": "!!" })), Some(10)).is_err());
        assert!(page("tools", 25, &params(json!({ "cursor": 3 })), Some(10)).is_err());
    }
}
