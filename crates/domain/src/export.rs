//! A citizen's export of their data (GDPR Art. 15 and 20; docs/data-protection.md
//! "Export"): one zip archive, built in the background, downloadable for a fixed time.
//!
//! The state machine: `pending` (asked for) → `running` (a node holds its lease and
//! builds it; a node that dies leaves it `running` until the lease expires and another
//! node takes it again) → `ready` (the archive is in the blob store until `expires_at`)
//! → `expired` (the blob is deleted); or `failed` when the build could not finish.
//! `pending` and `running` are the running states: a citizen has at most one export in
//! them at a time, which the database enforces.

use crate::text_enum::text_enum;
use crate::{CitizenId, ExportId, MissionId, Subject};
use time::{Duration, OffsetDateTime};

/// How long a ready archive stays downloadable before the hourly sweep deletes it.
pub const EXPORT_LIFETIME: Duration = Duration::days(7);

text_enum!(
    /// Where an export stands.
    ExportState ("export state") {
        Pending = "pending",
        Running = "running",
        Ready = "ready",
        Failed = "failed",
        Expired = "expired",
    }
);

impl ExportState {
    /// `pending` and `running`: at most one per citizen.
    pub fn is_running(self) -> bool {
        matches!(self, ExportState::Pending | ExportState::Running)
    }
}

text_enum!(
    /// What happens to an export.
    ExportAction ("export action") {
        /// A node takes the lease and builds it (again, after a lease ran out).
        Start = "start",
        /// The archive is complete and stored.
        Finish = "finish",
        /// The build could not finish.
        Fail = "fail",
        /// Its time is up: the archive is deleted.
        Expire = "expire",
    }
);

/// An export and, once built, where its archive is.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Export {
    pub id: ExportId,
    pub citizen_id: CitizenId,
    /// The citizen's mission (the policy's and the mission admins' reach).
    pub mission_id: MissionId,
    /// The citizen themself, or the admin who asked for it.
    pub requested_by: Subject,
    pub state: ExportState,
    pub created_at: OffsetDateTime,
    /// When a node last took it (`running`).
    pub started_at: Option<OffsetDateTime>,
    /// When it became `ready`, `failed` or `expired`.
    pub finished_at: Option<OffsetDateTime>,
    /// Until when a ready archive may be downloaded.
    pub expires_at: Option<OffsetDateTime>,
    /// The archive's key in the blob store (`ready` only).
    pub blob_key: Option<String>,
    pub size_bytes: Option<u64>,
    /// Why it failed (`failed` only), for the operator's log and the caller.
    pub failure: Option<String>,
}

/// Why a change was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a {from} export cannot {action}")]
pub struct IllegalExportTransition {
    pub from: ExportState,
    pub action: ExportAction,
}

impl Export {
    /// A new export of `citizen`'s data, asked for by `by` at `now`: `pending`.
    pub fn request(citizen: CitizenId, mission: MissionId, by: Subject, now: OffsetDateTime) -> Export {
        Export {
            id: ExportId::new(),
            citizen_id: citizen,
            mission_id: mission,
            requested_by: by,
            state: ExportState::Pending,
            created_at: now,
            started_at: None,
            finished_at: None,
            expires_at: None,
            blob_key: None,
            size_bytes: None,
            failure: None,
        }
    }

    /// The actions allowed from `state`.
    pub fn allowed(state: ExportState) -> &'static [ExportAction] {
        use ExportAction::*;
        match state {
            // A running export whose lease ran out is started again by another node.
            ExportState::Pending | ExportState::Running => &[Start, Finish, Fail],
            ExportState::Ready => &[Expire],
            ExportState::Failed | ExportState::Expired => &[],
        }
    }

    fn check(&self, action: ExportAction) -> Result<(), IllegalExportTransition> {
        let allowed = Self::allowed(self.state).contains(&action)
            // Only a running build finishes or fails.
            && !(self.state == ExportState::Pending && action != ExportAction::Start);
        if allowed { Ok(()) } else { Err(IllegalExportTransition { from: self.state, action }) }
    }

    /// A node takes it (`running`).
    pub fn start(&mut self, now: OffsetDateTime) -> Result<(), IllegalExportTransition> {
        self.check(ExportAction::Start)?;
        self.state = ExportState::Running;
        self.started_at = Some(now);
        Ok(())
    }

    /// The archive of `size_bytes` is stored under `blob_key`: `ready` until `now` +
    /// [`EXPORT_LIFETIME`].
    pub fn finish(
        &mut self,
        blob_key: String,
        size_bytes: u64,
        now: OffsetDateTime,
    ) -> Result<(), IllegalExportTransition> {
        self.check(ExportAction::Finish)?;
        self.state = ExportState::Ready;
        self.finished_at = Some(now);
        self.expires_at = Some(now + EXPORT_LIFETIME);
        self.blob_key = Some(blob_key);
        self.size_bytes = Some(size_bytes);
        Ok(())
    }

    /// The build could not finish, for `why`.
    pub fn fail(&mut self, why: String, now: OffsetDateTime) -> Result<(), IllegalExportTransition> {
        self.check(ExportAction::Fail)?;
        self.state = ExportState::Failed;
        self.finished_at = Some(now);
        self.failure = Some(why);
        Ok(())
    }

    /// Its time is up: `expired`, the archive's key forgotten (the caller deletes the blob).
    pub fn expire(&mut self, now: OffsetDateTime) -> Result<(), IllegalExportTransition> {
        self.check(ExportAction::Expire)?;
        self.state = ExportState::Expired;
        self.finished_at = Some(now);
        self.blob_key = None;
        Ok(())
    }

    /// Whether a ready archive may still be downloaded at `now`.
    pub fn downloadable(&self, now: OffsetDateTime) -> bool {
        self.state == ExportState::Ready && self.expires_at.is_some_and(|at| now < at)
    }

    /// The key of a new archive of this export in the blob store: a fresh key per build
    /// (a build taken over after a lease ran out never writes where the first one did).
    pub fn new_blob_key(&self) -> String {
        format!("exports/{}/{}", self.id.as_uuid().simple(), uuid::Uuid::now_v7().simple())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{PrincipalId, PrincipalKind};

    fn now() -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + Duration::days(20_000)
    }

    fn export(state: ExportState) -> Export {
        let by = Subject { kind: PrincipalKind::Citizen, id: PrincipalId(uuid::Uuid::now_v7()) };
        let base = Export::request(CitizenId::new(), MissionId::new(), by, now());
        Export { state, ..base }
    }

    fn apply(export: &mut Export, action: ExportAction) -> Result<(), IllegalExportTransition> {
        match action {
            ExportAction::Start => export.start(now()),
            ExportAction::Finish => export.finish("exports/a/b".to_owned(), 10, now()),
            ExportAction::Fail => export.fail("blob storage unavailable".to_owned(), now()),
            ExportAction::Expire => export.expire(now()),
        }
    }

    #[test]
    fn every_state_and_action() {
        use ExportState::*;
        let table: [(ExportState, [Option<ExportState>; 4]); 5] = [
            // start, finish, fail, expire
            (Pending, [Some(Running), None, None, None]),
            (Running, [Some(Running), Some(Ready), Some(Failed), None]),
            (Ready, [None, None, None, Some(Expired)]),
            (Failed, [None, None, None, None]),
            (Expired, [None, None, None, None]),
        ];
        for (from, outcomes) in table {
            for (action, expected) in ExportAction::ALL.into_iter().zip(outcomes) {
                let mut e = export(from);
                let got = apply(&mut e, action).map(|()| e.state);
                match expected {
                    Some(to) => assert_eq!(got, Ok(to), "{from} {action}"),
                    None => {
                        assert_eq!(got, Err(IllegalExportTransition { from, action }), "{from} {action}");
                        assert_eq!(e.state, from, "a refused change changes nothing");
                    }
                }
            }
        }
    }

    #[test]
    fn a_new_export_is_pending_and_the_running_states_are_pending_and_running() {
        let by = Subject { kind: PrincipalKind::Citizen, id: PrincipalId(uuid::Uuid::now_v7()) };
        let e = Export::request(CitizenId::new(), MissionId::new(), by, now());
        assert_eq!((e.state, e.started_at, e.blob_key), (ExportState::Pending, None, None));
        let running: Vec<_> = ExportState::ALL.into_iter().filter(|s| s.is_running()).collect();
        assert_eq!(running, [ExportState::Pending, ExportState::Running]);
    }

    #[test]
    fn a_finished_export_is_downloadable_for_its_lifetime_then_expires_without_its_key() {
        let mut e = export(ExportState::Running);
        e.finish("exports/k/1".to_owned(), 42, now()).unwrap();
        assert_eq!(e.expires_at, Some(now() + EXPORT_LIFETIME));
        assert!(e.downloadable(now() + EXPORT_LIFETIME - Duration::seconds(1)));
        assert!(!e.downloadable(now() + EXPORT_LIFETIME));
        e.expire(now() + EXPORT_LIFETIME).unwrap();
        assert_eq!((e.state, e.blob_key.as_deref()), (ExportState::Expired, None));
        assert!(!e.downloadable(now()));
    }

    #[test]
    fn each_build_writes_under_a_fresh_key_of_the_export() {
        let e = export(ExportState::Running);
        let (a, b) = (e.new_blob_key(), e.new_blob_key());
        assert_ne!(a, b);
        assert!(a.starts_with(&format!("exports/{}/", e.id.as_uuid().simple())), "{a}");
    }
}
