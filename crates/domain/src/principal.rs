//! Who is calling: the principal behind an authenticated token.

use crate::mandate::Mandate;
use crate::{CitizenId, ClientId, MissionId, PrincipalId, Scope, ScopeSet};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrincipalKind {
    Admin,
    Staff,
    Citizen,
}

impl PrincipalKind {
    pub const ALL: [PrincipalKind; 3] = [PrincipalKind::Admin, PrincipalKind::Staff, PrincipalKind::Citizen];

    pub fn as_str(self) -> &'static str {
        match self {
            PrincipalKind::Admin => "admin",
            PrincipalKind::Staff => "staff",
            PrincipalKind::Citizen => "citizen",
        }
    }
}

impl ScopeSet {
    /// Checks the combination rule: a client acts for one principal, so `citizen`
    /// cannot be combined with another scope and the set cannot be empty.
    pub fn principal_kind(self) -> Option<PrincipalKind> {
        if self.contains(Scope::Citizen) {
            (self == ScopeSet::only(Scope::Citizen)).then_some(PrincipalKind::Citizen)
        } else if self.contains(Scope::Admin) {
            Some(PrincipalKind::Admin)
        } else if self.contains(Scope::Staff) {
            Some(PrincipalKind::Staff)
        } else {
            None
        }
    }
}

impl fmt::Display for PrincipalKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PrincipalKind {
    type Err = crate::scope::UnknownScope;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PrincipalKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == s)
            .ok_or_else(|| crate::scope::UnknownScope(s.to_owned()))
    }
}

/// A principal id as the stores know it: the kind it acts as and the mission it belongs
/// to (`None`: global). A citizen or staff row says who an id is; the clients bound to an
/// id say it for the principals that have no row (admins, and staff or citizen clients
/// made with a fresh id). One id names one kind in one mission (docs/api.md "Clients,
/// principals and scopes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Binding {
    pub kind: PrincipalKind,
    pub mission: Option<MissionId>,
}

impl Binding {
    pub fn new(kind: PrincipalKind, mission: Option<MissionId>) -> Self {
        Binding { kind, mission }
    }
}

/// The person or role a client acts for. Rendered as the token's `sub`: `kind:uuid`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Subject {
    pub kind: PrincipalKind,
    pub id: PrincipalId,
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind, self.id)
    }
}

impl FromStr for Subject {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (kind, id) = s.split_once(':').ok_or(())?;
        Ok(Subject { kind: kind.parse().map_err(|_| ())?, id: id.parse().map_err(|_| ())? })
    }
}

/// An authenticated caller: the subject, the client it came through, the mission it is
/// bound to (`None` for a global admin), the scopes its token holds, and the network
/// address the call came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    pub subject: Subject,
    pub client_id: ClientId,
    pub mission: Option<MissionId>,
    pub scopes: ScopeSet,
    /// The caller's address as the delivery layer resolved it (behind trusted proxies,
    /// the client they forwarded for: docs/operations.md "Proxies"); recorded with every
    /// audit entry the call writes. `None` when unknown (the token's claims alone, tests).
    pub address: Option<IpAddr>,
    /// Whom a citizen's token acts for, when the call names a dependant
    /// (`On-Behalf-Of`): resolved at each call from the representations in force
    /// (docs/representation.md "Acting"). The subject stays the representative, who is
    /// the actor every trace records.
    pub acting_for: Option<Mandate>,
}

impl Principal {
    pub fn has_any(&self, scopes: &[Scope]) -> bool {
        self.scopes.intersects(scopes)
    }

    pub fn is_admin(&self) -> bool {
        self.scopes.contains(Scope::Admin)
    }

    /// An admin token not bound to a mission.
    pub fn is_global_admin(&self) -> bool {
        self.is_admin() && self.mission.is_none()
    }

    /// Whether this principal administers `mission`: global admins administer all
    /// missions, mission admins only their own.
    pub fn administers(&self, mission: MissionId) -> bool {
        self.is_admin() && self.mission.is_none_or(|own| own == mission)
    }

    /// The citizen this call acts for, when it acts for someone else.
    pub fn on_behalf_of(&self) -> Option<CitizenId> {
        self.acting_for.as_ref().map(|m| m.dependant)
    }

    /// The kind and mission this token acts as.
    pub fn binding(&self) -> Binding {
        Binding::new(self.subject.kind, self.mission)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn principal(scopes: &str, mission: Option<MissionId>) -> Principal {
        Principal {
            subject: Subject { kind: PrincipalKind::Admin, id: PrincipalId::new() },
            client_id: ClientId::new(),
            mission,
            scopes: ScopeSet::parse(scopes).unwrap(),
            address: None,
            acting_for: None,
        }
    }

    #[test]
    fn subject_round_trips_through_its_text_form() {
        let subject = Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() };
        assert_eq!(subject.to_string().parse::<Subject>(), Ok(subject));
        assert!("staff".parse::<Subject>().is_err());
        assert!("root:0190".parse::<Subject>().is_err());
    }

    #[test]
    fn mission_admins_administer_only_their_mission() {
        let own = MissionId::new();
        let other = MissionId::new();
        let global = principal("admin", None);
        let local = principal("admin", Some(own));
        let staff = principal("staff", Some(own));
        assert!(global.is_global_admin() && global.administers(other));
        assert!(local.administers(own) && !local.administers(other));
        assert!(!local.is_global_admin());
        assert!(!staff.administers(own));
    }
}
