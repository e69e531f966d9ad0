//! API clients: the OAuth clients through which every principal calls the API.

use crate::{
    Binding, ClientId, MissionId, PrincipalId, PrincipalKind, ScopeSet, Subject, ValidationErrors, rules,
};
use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;
use time::OffsetDateTime;
use validator::{Validate, ValidationError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ClientStatus {
    Active,
    Disabled,
}

impl ClientStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ClientStatus::Active => "active",
            ClientStatus::Disabled => "disabled",
        }
    }
}

impl fmt::Display for ClientStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ClientStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "active" => Ok(ClientStatus::Active),
            "disabled" => Ok(ClientStatus::Disabled),
            other => Err(format!("unknown client status `{other}`")),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ApiClient {
    pub id: ClientId,
    pub name: String,
    pub subject: Subject,
    /// The mission the principal belongs to; `None` only for global admins.
    pub mission: Option<MissionId>,
    /// The scopes tokens of this client may hold.
    pub scopes: ScopeSet,
    /// SHA-256 of the secret; the secret itself is never stored. Never serialized:
    /// snapshots of a client (an idempotent creation's outcome) carry no credential.
    #[serde(skip)]
    pub secret_hash: Vec<u8>,
    pub status: ClientStatus,
    pub version: i64,
    pub created_at: OffsetDateTime,
    pub updated_at: OffsetDateTime,
}

/// What an admin (or the CLI) asks for when creating a client.
#[derive(Debug, Clone, PartialEq, Eq, Validate)]
#[validate(schema(function = "mission_of_kind", skip_on_field_errors = false))]
pub struct NewClient {
    #[validate(custom(function = "rules::line::<100>"))]
    pub name: String,
    #[validate(custom(function = "one_principal_kind"))]
    pub scopes: ScopeSet,
    pub mission: Option<MissionId>,
    /// The citizen or staff member the client acts for; a fresh id when absent.
    pub principal: Option<PrincipalId>,
}

/// The scopes name one kind of principal.
fn one_principal_kind(scopes: &ScopeSet) -> Result<(), ValidationError> {
    match scopes.principal_kind() {
        Some(_) => Ok(()),
        None => Err(ValidationError::new("invalid_combination")
            .with_message(Cow::Borrowed("must hold admin, staff (optionally with admin) or citizen alone"))),
    }
}

/// Staff and citizen clients belong to a mission.
fn mission_of_kind(client: &NewClient) -> Result<(), ValidationError> {
    match client.scopes.principal_kind() {
        Some(PrincipalKind::Staff | PrincipalKind::Citizen) if client.mission.is_none() => {
            Err(rules::at("mission_id", "required", "staff and citizen clients belong to a mission"))
        }
        _ => Ok(()),
    }
}

impl NewClient {
    /// Checks the request on its own, every failing field at once in the order of the
    /// fields; whether the mission exists is the use case's job.
    pub fn validate(&self) -> Result<PrincipalKind, ValidationErrors> {
        rules::flatten_in_order(Validate::validate(self), &["name", "scopes", "mission_id"])?;
        self.scopes.principal_kind().ok_or_else(ValidationErrors::new)
    }
}

impl NewClient {
    /// The client acts for an existing principal of the kind its scopes name, in its
    /// mission; with no `principal_id`, for a fresh one. `person` is the citizen or staff
    /// row the id names, if any: it decides alone (the clients already bound to that id
    /// cannot change who it is). Without a row, the id must be the principal of existing
    /// clients (an admin's, or a staff or citizen principal first made with a fresh id),
    /// all of this kind and mission. An id of another mission is answered as unknown, so
    /// that the answer never reveals who exists elsewhere (docs/api.md "Clients,
    /// principals and scopes").
    pub fn check_principal(
        &self,
        kind: PrincipalKind,
        person: Option<Binding>,
        bound_clients: &[Binding],
    ) -> Result<(), ValidationErrors> {
        if self.principal.is_none() {
            return Ok(());
        }
        let wanted = Binding::new(kind, self.mission);
        let known: &[Binding] = match &person {
            Some(person) => std::slice::from_ref(person),
            None => bound_clients,
        };
        if !known.is_empty() && known.iter().all(|k| *k == wanted) {
            return Ok(());
        }
        match known.iter().find(|k| k.mission == self.mission && k.kind != kind) {
            Some(other) => Err(ValidationErrors::single(
                "principal_id",
                "kind_mismatch",
                format!("this id names a {} principal; the scopes ask for a {kind}", other.kind),
            )),
            None => {
                let mut errors = ValidationErrors::new();
                errors.unknown(
                    "/principal_id",
                    format!("no {kind} principal of this client's mission has this id"),
                );
                Err(errors)
            }
        }
    }
}

/// A disabled client gets no new secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a disabled client gets no new secret")]
pub struct ClientDisabled;

impl ApiClient {
    /// A new active client acting for `subject`, holding the hash of its fresh secret.
    pub fn issue(
        name: String,
        scopes: ScopeSet,
        subject: Subject,
        mission: Option<MissionId>,
        secret_hash: Vec<u8>,
        now: OffsetDateTime,
    ) -> ApiClient {
        ApiClient {
            id: ClientId::new(),
            name,
            subject,
            mission,
            scopes,
            secret_hash,
            status: ClientStatus::Active,
            version: 1,
            created_at: now,
            updated_at: now,
        }
    }

    pub fn is_active(&self) -> bool {
        self.status == ClientStatus::Active
    }

    /// Disables the client for good (there is no way back: docs/api.md, decision 7);
    /// `false`, and no new version, when it already was.
    pub fn disable(&mut self, now: OffsetDateTime) -> bool {
        if !self.is_active() {
            return false;
        }
        self.status = ClientStatus::Disabled;
        self.touch(now);
        true
    }

    /// Replaces the secret (by its hash) of an active client.
    pub fn rotate_secret(&mut self, secret_hash: Vec<u8>, now: OffsetDateTime) -> Result<(), ClientDisabled> {
        if !self.is_active() {
            return Err(ClientDisabled);
        }
        self.secret_hash = secret_hash;
        self.touch(now);
        Ok(())
    }

    fn touch(&mut self, now: OffsetDateTime) {
        self.version += 1;
        self.updated_at = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_client(scopes: &str, mission: Option<MissionId>) -> NewClient {
        NewClient {
            name: "portal".into(),
            scopes: ScopeSet::parse(scopes).unwrap(),
            mission,
            principal: None,
        }
    }

    #[test]
    fn scopes_decide_the_principal_kind() {
        let m = Some(MissionId::new());
        assert_eq!(new_client("admin", None).validate(), Ok(PrincipalKind::Admin));
        assert_eq!(new_client("admin", m).validate(), Ok(PrincipalKind::Admin));
        assert_eq!(new_client("staff", m).validate(), Ok(PrincipalKind::Staff));
        assert_eq!(new_client("citizen", m).validate(), Ok(PrincipalKind::Citizen));
    }

    #[test]
    fn staff_and_citizens_need_a_mission_and_citizen_stands_alone() {
        let missing = new_client("staff", None).validate().unwrap_err();
        assert_eq!(missing.0[0].pointer, "/mission_id");
        let mixed = new_client("citizen admin", Some(MissionId::new())).validate().unwrap_err();
        assert_eq!(mixed.0[0].pointer, "/scopes");
        let empty = new_client("", None).validate().unwrap_err();
        assert_eq!(empty.0[0].code, "invalid_combination");
        let unnamed = NewClient { name: " ".into(), ..new_client("staff", None) }.validate().unwrap_err();
        let found: Vec<(&str, &str)> =
            unnamed.0.iter().map(|e| (e.pointer.as_str(), e.code.as_str())).collect();
        assert_eq!(found, [("/name", "required"), ("/mission_id", "required")], "in the order of the fields");
    }

    #[test]
    fn a_client_acts_for_an_existing_principal_of_its_kind_and_mission() {
        use PrincipalKind::{Admin, Citizen, Staff};
        let (here, elsewhere) = (Some(MissionId::new()), Some(MissionId::new()));
        let b = Binding::new;
        let code = |scopes: &str, mission, person, clients: &[Binding]| {
            let mut input = new_client(scopes, mission);
            input.principal = Some(PrincipalId::new());
            let kind = input.validate().unwrap();
            input.check_principal(kind, person, clients).err().map(|e| e.0[0].code.clone())
        };
        let (unknown, mismatch) = (Some("unknown".to_owned()), Some("kind_mismatch".to_owned()));
        // The citizen or staff row decides.
        assert_eq!(code("citizen", here, Some(b(Citizen, here)), &[]), None);
        assert_eq!(code("staff", here, Some(b(Staff, here)), &[]), None);
        assert_eq!(code("citizen", here, Some(b(Citizen, elsewhere)), &[]), unknown);
        assert_eq!(code("staff", here, Some(b(Citizen, here)), &[]), mismatch);
        assert_eq!(code("staff", here, Some(b(Citizen, elsewhere)), &[]), unknown);
        assert_eq!(code("admin", here, Some(b(Citizen, here)), &[]), mismatch);
        assert_eq!(code("admin", here, Some(b(Staff, elsewhere)), &[]), unknown);
        assert_eq!(code("admin", None, Some(b(Citizen, here)), &[]), unknown);
        assert_eq!(code("citizen", here, Some(b(Staff, here)), &[]), mismatch);
        // A client bound elsewhere to a citizen's id does not make it someone else.
        assert_eq!(code("admin", elsewhere, Some(b(Citizen, here)), &[b(Admin, elsewhere)]), unknown);
        assert_eq!(code("citizen", here, Some(b(Citizen, here)), &[b(Admin, elsewhere)]), None);
        // Without a row: the clients already bound to the id, all of this kind and mission.
        assert_eq!(code("admin", here, None, &[b(Admin, here)]), None);
        assert_eq!(code("admin", None, None, &[b(Admin, None), b(Admin, None)]), None);
        assert_eq!(code("staff", here, None, &[b(Staff, here)]), None);
        assert_eq!(code("admin", here, None, &[b(Admin, elsewhere)]), unknown);
        assert_eq!(code("admin", here, None, &[b(Admin, None)]), unknown);
        assert_eq!(code("admin", here, None, &[b(Admin, here), b(Staff, here)]), mismatch);
        assert_eq!(code("citizen", here, None, &[]), unknown);
        assert_eq!(code("admin", None, None, &[]), unknown);
        // No principal_id: a fresh principal.
        assert_eq!(new_client("citizen", here).check_principal(Citizen, None, &[]), Ok(()));
    }

    #[test]
    fn disabling_is_final_and_a_disabled_client_gets_no_secret() {
        let subject = Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() };
        let (t0, t1) = (OffsetDateTime::UNIX_EPOCH, OffsetDateTime::UNIX_EPOCH + time::Duration::SECOND);
        let mut client =
            ApiClient::issue("desk".into(), ScopeSet::parse("staff").unwrap(), subject, None, vec![1], t0);
        assert_eq!((client.status, client.version, client.created_at), (ClientStatus::Active, 1, t0));
        assert_eq!(client.rotate_secret(vec![2], t1), Ok(()));
        assert_eq!((client.secret_hash.as_slice(), client.version, client.updated_at), (&[2u8][..], 2, t1));
        assert!(client.disable(t1));
        assert!(!client.disable(t1), "disabling a disabled client changes nothing");
        assert_eq!((client.status, client.version), (ClientStatus::Disabled, 3));
        assert_eq!(client.rotate_secret(vec![3], t1), Err(ClientDisabled));
        assert_eq!(client.secret_hash, [2]);
    }
}
