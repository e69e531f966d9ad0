//! Who the matrix calls as, and what each of them must get: every operation of the
//! OpenAPI document has a row in [`OPERATIONS`] naming its access [`Rule`], and a rule
//! says, for each [`Who`], whether the call is allowed or how it is refused. The rules
//! restate the domain policy tables (crates/domain/src/policy/*.rs, one table test per
//! area) and docs/api.md ("Endpoints", "Who sees what"); the objects called on belong to
//! mission 1 and to its citizen "owner".

/// The principals of the matrix. Every object a call names belongs to mission 1 and its
/// citizen `Owner` (or is the staff member `StaffM1`); mission 2 has the mirror objects,
/// owned by `Foreigner`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Who {
    /// No token, no client credentials.
    Anonymous,
    /// The citizen of mission 1 who owns the objects.
    Owner,
    /// Another citizen of mission 1.
    Neighbour,
    /// A citizen of mission 2 (who owns its mirror objects).
    Foreigner,
    StaffM1,
    StaffM2,
    AdminM1,
    AdminM2,
    GlobalAdmin,
    /// A citizen token of mission 2 whose principal is the owner's id: what a client
    /// bound to a person of another mission gave (issue 23, item 1), or would give if a
    /// row like it were ever stored. It must reach nothing of the owner's.
    ///
    /// FAILING ON PURPOSE until fixed (a security bug, reported with issue 23 item 1):
    /// its lists of requests, documents and appointments show the owner's, because
    /// `policy::requests::list` gives a citizen token the reach `Citizen(its id)` without
    /// its mission. Clients bound that way before the fix of item 1 still exist.
    Impostor,
    /// The same for staff: a staff token of mission 2 whose principal is staff member
    /// m1's id.
    StaffImpostor,
    /// A citizen of mission 1 calling with `On-Behalf-Of: <the owner>` under a
    /// guardianship in force over every service (docs/representation.md "Acting").
    Representative,
    /// The same under a guardianship in force over another service type only: the owner's
    /// objects (all of the matrix's service type) are out of its scope.
    OutOfScope,
    /// The same whose guardianship was ended: no representation in force.
    EndedRepresentative,
    /// The same whose guardianship starts in a month: none in force yet.
    FutureRepresentative,
}

/// The mission a principal is bound to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    M1,
    M2,
    /// A global admin, or nobody.
    Unbound,
}

impl Who {
    pub const COUNT: usize = 15;

    pub const ALL: [Who; Who::COUNT] = [
        Who::Anonymous,
        Who::Owner,
        Who::Neighbour,
        Who::Foreigner,
        Who::StaffM1,
        Who::StaffM2,
        Who::AdminM1,
        Who::AdminM2,
        Who::GlobalAdmin,
        Who::Impostor,
        Who::StaffImpostor,
        Who::Representative,
        Who::OutOfScope,
        Who::EndedRepresentative,
        Who::FutureRepresentative,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Who::Anonymous => "no token",
            Who::Owner => "owner (citizen, m1)",
            Who::Neighbour => "citizen of m1",
            Who::Foreigner => "citizen of m2",
            Who::StaffM1 => "staff of m1",
            Who::StaffM2 => "staff of m2",
            Who::AdminM1 => "admin of m1",
            Who::AdminM2 => "admin of m2",
            Who::GlobalAdmin => "global admin",
            Who::Impostor => "m2 client as owner",
            Who::StaffImpostor => "m2 client as staff m1",
            Who::Representative => "acting for the owner",
            Who::OutOfScope => "acting, out of scope",
            Who::EndedRepresentative => "acting, ended",
            Who::FutureRepresentative => "acting, not yet valid",
        }
    }

    /// Whether its calls name the owner in `On-Behalf-Of`.
    pub fn acts_for_owner(self) -> bool {
        matches!(
            self,
            Who::Representative | Who::OutOfScope | Who::EndedRepresentative | Who::FutureRepresentative
        )
    }

    pub fn side(self) -> Side {
        match self {
            Who::Owner | Who::Neighbour | Who::StaffM1 | Who::AdminM1 => Side::M1,
            Who::Representative | Who::OutOfScope | Who::EndedRepresentative | Who::FutureRepresentative => {
                Side::M1
            }
            Who::Foreigner | Who::StaffM2 | Who::AdminM2 | Who::Impostor | Who::StaffImpostor => Side::M2,
            Who::Anonymous | Who::GlobalAdmin => Side::Unbound,
        }
    }

    /// Its position in [`Who::ALL`] (the index of its fresh objects).
    pub fn index(self) -> usize {
        Who::ALL.iter().position(|w| *w == self).unwrap_or_default()
    }
}

/// How a call that must not succeed is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// 401: no bearer token.
    NoToken,
    /// 400 or 401: no client credentials at an OAuth endpoint.
    NoClient,
    /// 400 `invalid_grant`: another client's refresh token.
    InvalidGrant,
    /// 403 `insufficient_scope`.
    Scope,
    /// 403 `forbidden`: the scope is right, the reach is not.
    Forbidden,
    /// 404 `not_found`: the caller may not see the object.
    NotFound,
    /// 422 naming the citizen: creating something for a citizen the caller may not act
    /// for (a field error, never a 403: docs/appointments.md "Endpoints and decisions").
    UnknownCitizen,
}

impl Refusal {
    /// The statuses that count as this refusal, and the `code` (problem) or `error`
    /// (OAuth) the body must carry, if one is fixed.
    pub fn expected(self) -> (&'static [u16], Option<&'static str>) {
        match self {
            Refusal::NoToken => (&[401], None),
            Refusal::NoClient => (&[400, 401], None),
            Refusal::InvalidGrant => (&[400], Some("invalid_grant")),
            Refusal::Scope => (&[403], Some("insufficient_scope")),
            Refusal::Forbidden => (&[403], Some("forbidden")),
            Refusal::NotFound => (&[404], Some("not_found")),
            Refusal::UnknownCitizen => (&[422], None),
        }
    }

    pub fn describe(self) -> String {
        let (statuses, code) = self.expected();
        let statuses: Vec<String> = statuses.iter().map(u16::to_string).collect();
        match code {
            Some(code) => format!("{} {code}", statuses.join("|")),
            None => statuses.join("|"),
        }
    }
}

/// What a principal must get from an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A 2xx (or one of the operation's `tolerated` statuses).
    Allowed,
    Denied(Refusal),
    /// 200 without effect: RFC 7009 answers a revocation of another client's token as if
    /// it had worked; the matrix checks afterwards that the token still works.
    Ignored,
}

/// The access rule of an operation, each a column of the policy tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// No authentication at all (health, JWKS, the OpenAPI document).
    Public,
    /// The signed download URL is the credential; a bearer token changes nothing.
    SignedUrl,
    /// `grant_type=client_credentials` with the principal's own client.
    ClientCredentials,
    /// `/auth/refresh` with the owner's refresh token: only the owner's client.
    OwnersRefreshToken,
    /// `/auth/revoke` of the owner's access token: only the owner's client revokes it.
    OwnersRevocation,
    /// Any bearer: the reach narrows what is shown (lists, own inbox), never refuses.
    AnyBearer,
    /// Global configuration: missions, the catalog, the audit log.
    GlobalAdmin,
    /// The `admin` scope: a mission admin's lists show their mission.
    AnyAdmin,
    /// Creating in mission 1 (citizens, staff, slots, clients) or its analytics.
    AdminOfM1,
    /// A client of mission 1: a mission admin elsewhere does not see it.
    ClientOfM1,
    /// The owner's object: the owner, staff and admins of mission 1, global admins; a
    /// representative acting for the owner within the mandate's services.
    OwnerAndWorkers,
    /// The owner's profile: as [`Rule::OwnerAndWorkers`], and a representative acting for
    /// the owner in whatever services (acting needs the name).
    Profile,
    /// The owner's representations: the owner, staff and admins of mission 1, global
    /// admins; never a representative acting (nothing of the other representatives).
    Representations,
    /// The owner's data rights read or started by someone else (their access log, an
    /// export): admins of mission 1 and global admins; not on the owner's behalf.
    DataRights,
    /// Creating for the owner (submission, booking, upload): the same callers; anyone
    /// else names a citizen they cannot act for.
    ForOwner,
    /// Working on the owner's object: staff and admins of mission 1 (status, notes,
    /// verification, attendance, deliveries).
    Workers,
    /// Changing the owner's profile: the owner (contact fields) and admins of mission 1.
    ProfileEditors,
    /// The profile of staff member m1: themself and admins of mission 1.
    StaffProfile,
    /// Assigning staff member m1: admins of mission 1.
    StaffAssignments,
    /// The queue of staff member m1: themself and admins of mission 1.
    StaffQueue,
    /// The availability of mission 1: anyone bound to it, global admins.
    MissionAvailability,
    /// The owner's notification: the owner only.
    Recipient,
    /// The caller's own record as a citizen (`/citizens/me/access-log`): every citizen
    /// token; staff and admins hold the wrong scope; a citizen token carrying the id of a
    /// citizen of another mission has no record there (404).
    Myself,
    /// The caller's own email preferences: any bearer, but a token whose principal id
    /// is a person of another mission or kind is refused (it must not silence them).
    OwnPreferences,
    /// Any citizen for themself (`/citizens/me/...`): a token whose principal id is a
    /// citizen of another mission is refused as unknown.
    Citizens,
    /// The owner's object under `/citizens/me/...`: the owner only; staff and admins
    /// hold the wrong scope.
    OwnCitizen,
    /// Erasing the owner (policy/erasure.rs): admins of mission 1 and global admins; the
    /// admin scope first (the owner themself is refused it), then the owner's mission.
    Erasure,
}

impl Rule {
    pub fn outcome(self, who: Who) -> Outcome {
        use Outcome::{Allowed, Denied, Ignored};
        use Refusal::*;
        use Who::*;
        if who.acts_for_owner() {
            return self.acting(who);
        }
        // An impostor is a citizen (staff member) of mission 2 to every rule, whatever
        // its id, but for the preferences of the person whose id it carries.
        if self == Rule::Myself && who == Impostor {
            return Denied(NotFound);
        }
        if let Impostor | StaffImpostor = who {
            let like = if who == Impostor { Foreigner } else { StaffM2 };
            return if self == Rule::OwnPreferences || (self == Rule::Citizens && who == Impostor) {
                Denied(NotFound)
            } else {
                self.outcome(like)
            };
        }
        let bearer = self.takes_bearer();
        if bearer && who == Anonymous {
            return Denied(NoToken);
        }
        let citizen = matches!(who, Owner | Neighbour | Foreigner);
        let staff = matches!(who, StaffM1 | StaffM2);
        match self {
            Rule::Public | Rule::SignedUrl | Rule::AnyBearer | Rule::OwnPreferences => Allowed,
            Rule::ClientCredentials => {
                if who == Anonymous {
                    Denied(NoClient)
                } else {
                    Allowed
                }
            }
            Rule::OwnersRefreshToken => match who {
                Anonymous => Denied(NoClient),
                Owner => Allowed,
                _ => Denied(InvalidGrant),
            },
            Rule::OwnersRevocation => match who {
                Anonymous => Denied(NoClient),
                Owner => Allowed,
                _ => Ignored,
            },
            Rule::GlobalAdmin => match who {
                GlobalAdmin => Allowed,
                AdminM1 | AdminM2 => Denied(Forbidden),
                _ => Denied(Scope),
            },
            Rule::AnyAdmin => {
                if citizen || staff {
                    Denied(Scope)
                } else {
                    Allowed
                }
            }
            Rule::AdminOfM1 => match who {
                GlobalAdmin | AdminM1 => Allowed,
                AdminM2 => Denied(Forbidden),
                _ => Denied(Scope),
            },
            Rule::ClientOfM1 | Rule::StaffAssignments | Rule::Erasure => match who {
                GlobalAdmin | AdminM1 => Allowed,
                AdminM2 => Denied(NotFound),
                _ => Denied(Scope),
            },
            Rule::OwnerAndWorkers | Rule::Profile | Rule::Representations => match who {
                Owner | StaffM1 | AdminM1 | GlobalAdmin => Allowed,
                _ => Denied(NotFound),
            },
            Rule::ForOwner => match who {
                Owner | StaffM1 | AdminM1 | GlobalAdmin => Allowed,
                _ => Denied(UnknownCitizen),
            },
            Rule::Workers | Rule::StaffQueue => match who {
                StaffM1 | AdminM1 | GlobalAdmin => Allowed,
                _ if citizen => Denied(Scope),
                _ => Denied(NotFound),
            },
            Rule::ProfileEditors | Rule::DataRights => match who {
                Owner | AdminM1 | GlobalAdmin => Allowed,
                StaffM1 => Denied(Scope),
                _ => Denied(NotFound),
            },
            Rule::StaffProfile => match who {
                StaffM1 | AdminM1 | GlobalAdmin => Allowed,
                _ => Denied(NotFound),
            },
            Rule::MissionAvailability => match who {
                Owner | Neighbour | StaffM1 | AdminM1 | GlobalAdmin => Allowed,
                _ => Denied(NotFound),
            },
            Rule::Citizens => {
                if citizen {
                    Allowed
                } else {
                    Denied(Scope)
                }
            }
            Rule::OwnCitizen => match who {
                Owner => Allowed,
                _ if citizen => Denied(NotFound),
                _ => Denied(Scope),
            },
            Rule::Myself => {
                if citizen {
                    Allowed
                } else {
                    Denied(Scope)
                }
            }
            Rule::Recipient => {
                if who == Owner {
                    Allowed
                } else {
                    Denied(NotFound)
                }
            }
        }
    }
}

impl Rule {
    /// Whether the operation is called with a bearer token (the others are public, take
    /// a signed URL, or client credentials at the OAuth endpoints).
    fn takes_bearer(self) -> bool {
        !matches!(
            self,
            Rule::Public
                | Rule::SignedUrl
                | Rule::ClientCredentials
                | Rule::OwnersRefreshToken
                | Rule::OwnersRevocation
        )
    }

    /// What a citizen of mission 1 calling with `On-Behalf-Of: <the owner>` gets
    /// (docs/representation.md "Acting"). Without a representation in force every call
    /// with a bearer token is 404, as for a citizen the caller cannot see; in force, the
    /// owner's objects are theirs within the mandate's services, their profile is read,
    /// and what is the owner's alone is refused. What takes no bearer token ignores the
    /// header: as for the neighbour.
    fn acting(self, who: Who) -> Outcome {
        use Outcome::{Allowed, Denied};
        use Refusal::*;
        let bearer = self.takes_bearer();
        let in_scope = who == Who::Representative;
        match self {
            _ if !bearer => self.outcome(Who::Neighbour),
            _ if matches!(who, Who::EndedRepresentative | Who::FutureRepresentative) => Denied(NotFound),
            Rule::OwnerAndWorkers if in_scope => Allowed,
            Rule::OwnerAndWorkers => Denied(NotFound),
            Rule::ForOwner if in_scope => Allowed,
            Rule::ForOwner => Denied(UnknownCitizen),
            Rule::Profile => Allowed,
            Rule::Representations | Rule::DataRights | Rule::Recipient => Denied(NotFound),
            Rule::Myself | Rule::Citizens | Rule::OwnCitizen | Rule::OwnPreferences => Denied(Forbidden),
            Rule::ProfileEditors => Denied(Scope),
            _ => self.outcome(Who::Neighbour),
        }
    }
}

/// One operation of the OpenAPI document and how the matrix judges it.
#[derive(Debug, Clone, Copy)]
pub struct Operation {
    pub id: &'static str,
    pub method: &'static str,
    pub path: &'static str,
    pub rule: Rule,
    /// Statuses besides 2xx that an allowed caller may get from the state of the object
    /// (each is a refusal that comes after the policy check, so it still shows access).
    pub tolerated: &'static [u16],
    /// Cancels, deletes, disables or revokes: run after every other operation.
    pub destructive: bool,
}

const fn op(id: &'static str, method: &'static str, path: &'static str, rule: Rule) -> Operation {
    Operation { id, method, path, rule, tolerated: &[], destructive: false }
}

const fn last(id: &'static str, method: &'static str, path: &'static str, rule: Rule) -> Operation {
    Operation { id, method, path, rule, tolerated: &[], destructive: true }
}

impl Operation {
    /// The operation, whose allowed calls may also be refused 409 by the state the matrix
    /// leaves (an export running, a representation open or ended, a slot not started).
    const fn or_conflict(self) -> Operation {
        Operation { tolerated: &[409], ..self }
    }
}

/// Every operation of the API. A new endpoint fails the matrix until it has a row here
/// (and a call in `calls.rs`); a row whose operation is gone fails it too.
pub const OPERATIONS: &[Operation] = &[
    // Operations endpoints and OAuth.
    op("get_jwks", "GET", "/.well-known/jwks.json", Rule::Public),
    op("health_live", "GET", "/health/live", Rule::Public),
    op("health_ready", "GET", "/health/ready", Rule::Public),
    op("openapi", "GET", "/api/v1/openapi.json", Rule::Public),
    op("create_token", "POST", "/api/v1/auth/token", Rule::ClientCredentials),
    op("refresh_token", "POST", "/api/v1/auth/refresh", Rule::OwnersRefreshToken),
    last("revoke_token", "POST", "/api/v1/auth/revoke", Rule::OwnersRevocation),
    // Clients (policy/clients.rs).
    op("list_clients", "GET", "/api/v1/auth/clients", Rule::AnyAdmin),
    op("create_client", "POST", "/api/v1/auth/clients", Rule::AdminOfM1),
    op("get_client", "GET", "/api/v1/auth/clients/{id}", Rule::ClientOfM1),
    op("rotate_client_secret", "POST", "/api/v1/auth/clients/{id}/rotate-secret", Rule::ClientOfM1),
    last("disable_client", "POST", "/api/v1/auth/clients/{id}/disable", Rule::ClientOfM1),
    // Missions (policy/missions.rs).
    op("list_missions", "GET", "/api/v1/missions", Rule::AnyBearer),
    op("create_mission", "POST", "/api/v1/missions", Rule::GlobalAdmin),
    op("get_mission", "GET", "/api/v1/missions/{id}", Rule::AnyBearer),
    op("update_mission", "PATCH", "/api/v1/missions/{id}", Rule::GlobalAdmin),
    // The catalog (policy/catalog.rs).
    op("list_services", "GET", "/api/v1/services", Rule::AnyBearer),
    op("create_service", "POST", "/api/v1/services", Rule::GlobalAdmin),
    op("get_service", "GET", "/api/v1/services/{id}", Rule::AnyBearer),
    op("update_service", "PATCH", "/api/v1/services/{id}", Rule::GlobalAdmin),
    // Citizens (policy/citizens.rs).
    op("list_citizens", "GET", "/api/v1/citizens", Rule::AnyAdmin),
    op("register_citizen", "POST", "/api/v1/citizens", Rule::AdminOfM1),
    op("get_citizen", "GET", "/api/v1/citizens/{id}", Rule::Profile),
    op("update_citizen", "PATCH", "/api/v1/citizens/{id}", Rule::ProfileEditors),
    // Access logs (policy/access_log.rs).
    op("list_my_access_log", "GET", "/api/v1/citizens/me/access-log", Rule::Myself),
    op("list_citizen_access_log", "GET", "/api/v1/citizens/{id}/access-log", Rule::DataRights),
    // Exports (policy/exports.rs): a running export makes the next start 409.
    op("start_my_export", "POST", "/api/v1/citizens/me/export", Rule::Citizens).or_conflict(),
    op("get_my_export", "GET", "/api/v1/citizens/me/exports/{export_id}", Rule::OwnCitizen),
    op("start_citizen_export", "POST", "/api/v1/citizens/{id}/export", Rule::DataRights).or_conflict(),
    op("get_citizen_export", "GET", "/api/v1/citizens/{id}/exports/{export_id}", Rule::DataRights),
    op("download_export_archive", "GET", "/api/v1/exports/{export_id}/archive", Rule::SignedUrl),
    // Representations (policy/representation.rs): staff and admins of the dependant's
    // mission create and end them (a citizen's token lacks the scope); the dependant reads
    // them too. The owner's representation by the neighbour is open: every creation after
    // the first is 409, every ending after the first too.
    op("list_my_representatives", "GET", "/api/v1/citizens/me/representatives", Rule::Myself),
    op("list_my_dependants", "GET", "/api/v1/citizens/me/dependants", Rule::Myself),
    op("create_representative", "POST", "/api/v1/citizens/{id}/representatives", Rule::Workers).or_conflict(),
    op("list_representatives", "GET", "/api/v1/citizens/{id}/representatives", Rule::Representations),
    op("get_representative", "GET", "/api/v1/citizens/{id}/representatives/{rid}", Rule::Representations),
    // Staff (policy/staff.rs, policy/requests.rs `queue`).
    op("list_staff", "GET", "/api/v1/staff", Rule::AnyAdmin),
    op("create_staff", "POST", "/api/v1/staff", Rule::AdminOfM1),
    op("get_staff", "GET", "/api/v1/staff/{id}", Rule::StaffProfile),
    op("update_staff_assignments", "PATCH", "/api/v1/staff/{id}/assignments", Rule::StaffAssignments),
    op("get_staff_queue", "GET", "/api/v1/staff/{id}/queue", Rule::StaffQueue),
    // Requests (policy/requests.rs).
    op("list_requests", "GET", "/api/v1/requests", Rule::AnyBearer),
    op("submit_request", "POST", "/api/v1/requests", Rule::ForOwner),
    op("get_request", "GET", "/api/v1/requests/{id}", Rule::OwnerAndWorkers),
    op("change_request_status", "PATCH", "/api/v1/requests/{id}/status", Rule::Workers),
    op("list_request_notes", "GET", "/api/v1/requests/{id}/notes", Rule::Workers),
    op("add_request_note", "POST", "/api/v1/requests/{id}/notes", Rule::Workers),
    op("list_request_messages", "GET", "/api/v1/requests/{id}/messages", Rule::OwnerAndWorkers),
    op("post_request_message", "POST", "/api/v1/requests/{id}/messages", Rule::OwnerAndWorkers),
    op("list_request_documents", "GET", "/api/v1/requests/{id}/documents", Rule::OwnerAndWorkers),
    op("list_request_notifications", "GET", "/api/v1/requests/{id}/notifications", Rule::Workers),
    last("cancel_request", "POST", "/api/v1/requests/{id}/cancel", Rule::OwnerAndWorkers),
    // Documents (policy/documents.rs).
    op("list_documents", "GET", "/api/v1/documents", Rule::AnyBearer),
    op("upload_document", "POST", "/api/v1/documents/upload", Rule::ForOwner),
    op("get_document", "GET", "/api/v1/documents/{id}", Rule::OwnerAndWorkers),
    op("download_document_content", "GET", "/api/v1/documents/{id}/content", Rule::SignedUrl),
    op("verify_document", "PATCH", "/api/v1/documents/{id}/verify", Rule::Workers),
    last("delete_document", "DELETE", "/api/v1/documents/{id}", Rule::OwnerAndWorkers),
    // Appointments (policy/appointments.rs).
    op("submit_slots", "POST", "/api/v1/appointments/slots", Rule::AdminOfM1),
    op("list_slots", "GET", "/api/v1/appointments/slots", Rule::MissionAvailability),
    op("list_appointments", "GET", "/api/v1/appointments", Rule::AnyBearer),
    op("book_appointment", "POST", "/api/v1/appointments", Rule::ForOwner),
    op("get_appointment", "GET", "/api/v1/appointments/{id}", Rule::OwnerAndWorkers),
    op("reschedule_appointment", "PATCH", "/api/v1/appointments/{id}", Rule::OwnerAndWorkers),
    // The slot is in the future: attendance is refused 409 `not_started`, after the
    // policy let the caller through.
    op("record_attendance", "POST", "/api/v1/appointments/{id}/attendance", Rule::Workers).or_conflict(),
    last("cancel_appointment", "DELETE", "/api/v1/appointments/{id}", Rule::OwnerAndWorkers),
    // The audit log (policy/audit.rs).
    op("list_audit_events", "GET", "/api/v1/audit-events", Rule::GlobalAdmin),
    // Notifications (policy/notifications.rs).
    op("list_notifications", "GET", "/api/v1/notifications", Rule::AnyBearer),
    op("mark_notification_read", "PATCH", "/api/v1/notifications/{id}/read", Rule::Recipient),
    op("mark_all_notifications_read", "POST", "/api/v1/notifications/read-all", Rule::AnyBearer),
    op("get_notification_preferences", "GET", "/api/v1/notifications/preferences", Rule::OwnPreferences),
    op("update_notification_preferences", "PUT", "/api/v1/notifications/preferences", Rule::OwnPreferences),
    // Analytics of mission 1 (policy/analytics.rs): another mission's admin is refused.
    op("analytics_overview", "GET", "/api/v1/analytics/overview", Rule::AdminOfM1),
    op("analytics_services", "GET", "/api/v1/analytics/services", Rule::AdminOfM1),
    op("analytics_staff", "GET", "/api/v1/analytics/staff", Rule::AdminOfM1),
    last("end_representative", "POST", "/api/v1/citizens/{id}/representatives/{rid}/end", Rule::Workers)
        .or_conflict(),
    // Erasure (policy/erasure.rs), the last of the destructive operations: after it the
    // owner's data is gone.
    last("erase_citizen", "DELETE", "/api/v1/citizens/{id}", Rule::Erasure),
];

/// The order in which the principals call an operation: those refused first, so that a
/// wrongful write shows as a 2xx rather than being hidden by the state it left.
pub fn call_order(rule: Rule) -> Vec<Who> {
    let rank = |who: &Who| match rule.outcome(*who) {
        Outcome::Denied(_) => 0,
        Outcome::Ignored => 1,
        Outcome::Allowed => 2,
    };
    let mut order = Who::ALL.to_vec();
    order.sort_by_key(rank);
    order
}
