//! Reading a whole keyset-paginated list, page after page (for the few places that need
//! every item, such as a request's timeline).

use crate::ServiceError;
use consular_domain::page::MAX_LIMIT;
use consular_domain::{Page, PageRequest};
use consular_ports::RepoError;
use std::future::Future;

/// Every item of a list, fetched in pages of the largest size.
pub async fn all_pages<T, F, Fut>(mut fetch: F) -> Result<Vec<T>, ServiceError>
where
    F: FnMut(PageRequest) -> Fut,
    Fut: Future<Output = Result<Page<T>, RepoError>>,
{
    let mut all = Vec::new();
    let mut page = PageRequest { limit: MAX_LIMIT, after: None };
    loop {
        let batch = fetch(page).await?;
        all.extend(batch.items);
        match batch.next_after {
            Some(after) => page.after = Some(after),
            None => return Ok(all),
        }
    }
}
