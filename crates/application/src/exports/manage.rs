//! Starting an export, reading its state with a download URL once it is ready, and
//! reading the archive a signed URL grants.

use super::service::{ExportGrant, ExportService, RESOURCE, blob_error};
use crate::error::{OrNotFound, ServiceError};
use consular_domain::policy::exports as policy;
use consular_domain::{
    AccessEntry, AccessedData, AuditAction, AuditRecord, Citizen, Export, ExportId, ExportState, Principal,
};
use consular_ports::{BlobRead, ONE_RUNNING_EXPORT, RepoError, WriteMeta};
use time::OffsetDateTime;

/// Whose exports a call names: the access log's `Whose`, one type for every
/// `/citizens/me/...` and `/citizens/{id}/...` pair.
pub use crate::access_log::Whose;

/// An export as its reader sees it: a ready export past its time reads `expired` before
/// the sweep has deleted it, and a downloadable one comes with a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportView {
    pub export: Export,
    pub state: ExportState,
    /// The archive's download URL and when it stops working.
    pub download: Option<(String, OffsetDateTime)>,
}

/// The archive a valid signed URL grants, streaming from the store.
#[derive(Debug)]
pub struct ExportArchive {
    pub export: Export,
    pub read: BlobRead,
}

impl ExportService {
    /// The citizen `whose` names, if the caller may export their data.
    async fn citizen(&self, actor: &Principal, whose: Whose) -> Result<Citizen, ServiceError> {
        let (id, own_mission) = match whose {
            Whose::Me => {
                let (id, mission) = policy::own(actor)?;
                (id, Some(mission))
            }
            Whose::Citizen(id) => (id, None),
        };
        let citizen = self.ports.citizens.get(id).await.or_not_found()?;
        if own_mission.is_some_and(|m| m != citizen.mission_id) {
            return Err(ServiceError::NotFound);
        }
        policy::export(actor, citizen.id, citizen.mission_id)?;
        Ok(citizen)
    }

    /// Starts an export of the citizen's data (`pending`; a node builds it). A citizen has
    /// one running export at a time: another is `ExportRunning` naming it, whichever of
    /// two requests at once loses (the database decides).
    pub async fn start(&self, actor: &Principal, whose: Whose) -> Result<Export, ServiceError> {
        let citizen = self.citizen(actor, whose).await?;
        if let Some(running) = self.ports.exports.running_for(citizen.id).await? {
            return Err(running_error(&running));
        }
        let now = self.ports.clock.now();
        let export = Export::request(citizen.id, citizen.mission_id, actor.subject, now);
        let meta = WriteMeta {
            audit: vec![AuditRecord::new(
                Some(actor),
                now,
                AuditAction::Created,
                RESOURCE,
                export.id.as_uuid(),
                Vec::new(),
            )],
            ..WriteMeta::default()
        };
        match self.ports.exports.insert(&export, &meta).await {
            Ok(()) => Ok(export),
            Err(RepoError::Duplicate { constraint }) if constraint == ONE_RUNNING_EXPORT => {
                match self.ports.exports.running_for(citizen.id).await? {
                    Some(running) => Err(running_error(&running)),
                    // The winner finished in between: the caller may simply ask again.
                    None => Err(ServiceError::Unavailable("an export of this citizen just ended".to_owned())),
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The export `id` of the citizen `whose` names, with a download URL when it is
    /// ready (each URL handed out is an audit entry, as for documents, and, handed to
    /// anyone but the citizen, an access-log entry).
    pub async fn get(
        &self,
        actor: &Principal,
        whose: Whose,
        id: ExportId,
    ) -> Result<ExportView, ServiceError> {
        let citizen = self.citizen(actor, whose).await?;
        let export = self.ports.exports.get(id).await.or_not_found()?;
        if export.citizen_id != citizen.id {
            return Err(ServiceError::NotFound);
        }
        let now = self.ports.clock.now();
        if !export.downloadable(now) {
            let state = if export.state == ExportState::Ready { ExportState::Expired } else { export.state };
            return Ok(ExportView { export, state, download: None });
        }
        let download = self.download_url(&export, now).await?;
        let record = AuditRecord::new(
            Some(actor),
            now,
            AuditAction::DownloadUrlIssued,
            RESOURCE,
            export.id.as_uuid(),
            Vec::new(),
        );
        self.ports.audit.append(&[record]).await?;
        let read = AccessEntry::of_read(actor, citizen.id, AccessedData::Export, export.id.as_uuid(), now);
        self.ports.access.record(read)?;
        Ok(ExportView { state: export.state, export, download: Some(download) })
    }

    /// The store's presigned URL when it has one (S3), else the service's own signed URL;
    /// never beyond the archive's own expiry.
    async fn download_url(
        &self,
        export: &Export,
        now: OffsetDateTime,
    ) -> Result<(String, OffsetDateTime), ServiceError> {
        let (Some(key), Some(archive_expires)) = (&export.blob_key, export.expires_at) else {
            return Err(ServiceError::Internal(format!("ready export {} has no archive", export.id)));
        };
        // Whole seconds: the signed URL carries its expiry as a Unix time.
        let ttl_end =
            OffsetDateTime::from_unix_timestamp((now + self.config.download_url_ttl).unix_timestamp())
                .map_err(|e| ServiceError::Internal(e.to_string()))?;
        let expires_at = ttl_end.min(archive_expires);
        let ttl = std::time::Duration::try_from(expires_at - now).unwrap_or_default();
        let name = format!("export-{}.zip", export.id);
        let presigned = self
            .ports
            .blobs
            .presigned_get_url(key, ttl, &name, "application/zip")
            .await
            .map_err(blob_error)?;
        let url = match presigned {
            Some(url) => url,
            None => {
                let grant = ExportGrant { export: export.id, expires_at };
                let path = format!(
                    "/api/v1/exports/{}/archive?expires={}&signature={}",
                    export.id,
                    expires_at.unix_timestamp(),
                    self.signer.sign(&grant)
                );
                match &self.config.public_base_url {
                    Some(base) => format!("{}{path}", base.trim_end_matches('/')),
                    None => path,
                }
            }
        };
        Ok((url, expires_at))
    }

    /// The archive a signed URL grants (no bearer token): the signature and expiry are
    /// checked before the database and the store are touched; an export no longer
    /// downloadable is 404.
    pub async fn archive(&self, grant: ExportGrant, signature: &str) -> Result<ExportArchive, ServiceError> {
        let now = self.ports.clock.now();
        self.signer
            .verify(&grant, signature, now)
            .map_err(|e| ServiceError::InvalidDownloadUrl(e.to_string()))?;
        let export = self.ports.exports.get(grant.export).await.or_not_found()?;
        let Some(key) = export.blob_key.clone().filter(|_| export.downloadable(now)) else {
            return Err(ServiceError::NotFound);
        };
        let read =
            self.ports.blobs.read(&key, None).await.map_err(blob_error)?.ok_or(ServiceError::NotFound)?;
        Ok(ExportArchive { export, read })
    }
}

fn running_error(running: &Export) -> ServiceError {
    ServiceError::ExportRunning {
        existing: running.id,
        detail: format!("export {} of this citizen is still {}", running.id, running.state),
    }
}
