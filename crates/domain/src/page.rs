//! Keyset pagination. Ids are UUIDv7, so id order is creation order ("newest first" is
//! "id descending"), and a page
//! continues after the last id it returned: no OFFSET, no count. A list in another order
//! names its own cursor type `C` (the slots and appointments, in start order, continue
//! after a `StartCursor`).

use uuid::Uuid;

pub const DEFAULT_LIMIT: u16 = 20;
pub const MAX_LIMIT: u16 = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest<C = Uuid> {
    /// 1..=MAX_LIMIT; callers reject other values before building a request.
    pub limit: u16,
    /// Continue after this cursor (exclusive), in the list's order.
    pub after: Option<C>,
}

impl<C> Default for PageRequest<C> {
    fn default() -> Self {
        PageRequest { limit: DEFAULT_LIMIT, after: None }
    }
}

impl<C> PageRequest<C> {
    /// The number of rows to fetch: one more than the page, to learn whether a next page exists.
    pub fn fetch_limit(&self) -> i64 {
        i64::from(self.limit) + 1
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page<T, C = Uuid> {
    pub items: Vec<T>,
    /// The cursor to continue after, when there is a next page.
    pub next_after: Option<C>,
}

impl<T, C> Page<T, C> {
    /// A page with nothing on it (e.g. a list the caller may not see).
    pub fn empty() -> Self {
        Page { items: Vec::new(), next_after: None }
    }

    /// Builds a page from up to `limit + 1` fetched rows.
    pub fn from_rows(mut rows: Vec<T>, request: &PageRequest<C>, id_of: impl Fn(&T) -> C) -> Self {
        let limit = usize::from(request.limit);
        let next_after = if rows.len() > limit {
            rows.truncate(limit);
            rows.last().map(&id_of)
        } else {
            None
        };
        Page { items: rows, next_after }
    }

    pub fn map<U>(self, f: impl FnMut(T) -> U) -> Page<U, C> {
        Page { items: self.items.into_iter().map(f).collect(), next_after: self.next_after }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_has_a_next_cursor_only_when_more_rows_exist() {
        let ids: Vec<Uuid> = (0..3).map(|_| Uuid::now_v7()).collect();
        let request = PageRequest { limit: 2, after: None };
        let page = Page::from_rows(ids.clone(), &request, |id| *id);
        assert_eq!(page.items, ids[..2]);
        assert_eq!(page.next_after, Some(ids[1]));
        let last = Page::from_rows(ids[..2].to_vec(), &request, |id| *id);
        assert_eq!(last.next_after, None);
    }
}
