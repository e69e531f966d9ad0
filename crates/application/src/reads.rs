//! Read-your-writes when tolerant reads go to a read replica (docs/operations.md "Read
//! replicas"): after a principal's request wrote, [`ReadService::wrote`] marks it, so that
//! their tolerant reads ([`own_writes`]) on every node see what it wrote.

use crate::ServiceError;
use crate::adapters::Adapters;
use consular_domain::Principal;
use consular_ports::{Clock, Consistency, WriteMarks};
use std::sync::Arc;

/// How long a principal's mark is kept: an hour after their last write, the hourly
/// sweep folds it into the floor every replica must have reached to serve anyone.
pub const MARK_HORIZON: time::Duration = time::Duration::hours(1);

/// The ports the marks need.
#[derive(Clone)]
pub struct ReadPorts {
    pub marks: Arc<dyn WriteMarks>,
    pub clock: Arc<dyn Clock>,
}

impl<D: WriteMarks + 'static> From<&Adapters<D>> for ReadPorts {
    fn from(adapters: &Adapters<D>) -> Self {
        ReadPorts { marks: adapters.database.clone(), clock: adapters.clock.clone() }
    }
}

#[derive(Clone)]
pub struct ReadService {
    ports: ReadPorts,
}

impl ReadService {
    pub fn new(ports: ReadPorts) -> Self {
        ReadService { ports }
    }

    /// Records that `writer`'s request, which may have written, is done: their later
    /// tolerant reads see it. Called by the delivery layer once such a request is answered
    /// and before the answer leaves; a no-op without a read replica.
    pub async fn wrote(&self, writer: &Principal) -> Result<(), ServiceError> {
        Ok(self.ports.marks.mark(writer.subject).await?)
    }

    /// Folds the marks older than [`MARK_HORIZON`] into the floor (housekeeping); how many.
    pub async fn sweep(&self) -> Result<u64, ServiceError> {
        Ok(self.ports.marks.sweep_marks(self.ports.clock.now() - MARK_HORIZON).await?)
    }
}

/// What a tolerant read by `actor` must see: their own writes (a replica that has replayed
/// them may serve it).
pub(crate) fn own_writes(actor: &Principal) -> Consistency {
    Consistency::OwnWrites(actor.subject)
}

#[cfg(test)]
mod tests {
    use super::*;
    use consular_domain::{ClientId, PrincipalId, PrincipalKind, ScopeSet, Subject};
    use consular_ports::{MockClock, MockWriteMarks};
    use mockall::predicate::eq;
    use time::macros::datetime;

    fn staff() -> Principal {
        Principal {
            subject: Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() },
            client_id: ClientId::new(),
            mission: None,
            scopes: ScopeSet::parse("staff").unwrap(),
            address: None,
            acting_for: None,
        }
    }

    #[tokio::test]
    async fn a_write_marks_its_principal_and_the_sweep_keeps_an_hour() {
        let actor = staff();
        let mut marks = MockWriteMarks::new();
        marks.expect_mark().with(eq(actor.subject)).times(1).returning(|_| Ok(()));
        marks.expect_sweep_marks().with(eq(datetime!(2026-11-27 11:00 UTC))).times(1).returning(|_| Ok(3));
        let mut clock = MockClock::new();
        clock.expect_now().returning(|| datetime!(2026-11-27 12:00 UTC));
        let service = ReadService::new(ReadPorts { marks: Arc::new(marks), clock: Arc::new(clock) });
        service.wrote(&actor).await.unwrap();
        assert_eq!(service.sweep().await.unwrap(), 3);
        assert_eq!(own_writes(&actor), Consistency::OwnWrites(actor.subject));
    }
}
