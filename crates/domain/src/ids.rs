//! Typed identifiers. Every id is a UUIDv7, so ids sort by creation time and keyset
//! pagination can page on the id alone.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use uuid::Uuid;

macro_rules! id_type {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub Uuid);

        impl $name {
            /// A fresh, time-ordered id.
            pub fn new() -> Self {
                Self(Uuid::now_v7())
            }
            pub fn as_uuid(&self) -> Uuid {
                self.0
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl From<Uuid> for $name {
            fn from(value: Uuid) -> Self {
                Self(value)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl FromStr for $name {
            type Err = uuid::Error;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Uuid::parse_str(s).map(Self)
            }
        }
    };
}

id_type!(
    /// An embassy or consulate.
    MissionId
);
id_type!(
    /// An API client (the OAuth `client_id`).
    ClientId
);
id_type!(
    /// The citizen, staff member or admin a client acts for.
    PrincipalId
);
id_type!(
    /// One entry of the audit log.
    AuditEventId
);
id_type!(
    /// One entry of a citizen's access log.
    AccessEntryId
);
id_type!(
    /// An entry of the service catalog.
    ServiceTypeId
);
id_type!(
    /// A registered citizen; also the principal id of the citizen's API clients.
    CitizenId
);
id_type!(
    /// A staff member; also the principal id of the member's API clients.
    StaffId
);
id_type!(
    /// A service request.
    RequestId
);
id_type!(
    /// A representation: who acts for whom (docs/representation.md).
    RepresentationId
);
id_type!(
    /// An uploaded document (its metadata row; the bytes are in the blob store).
    DocumentId
);
id_type!(
    /// A bookable slot of counter time at a mission (docs/appointments.md).
    SlotId
);
id_type!(
    /// A citizen's booking of a seat in a slot.
    AppointmentId
);
id_type!(
    /// An in-app notification (docs/notifications.md).
    NotificationId
);
id_type!(
    /// The email of a notification.
    EmailId
);
id_type!(
    /// A citizen's export of their data (docs/data-protection.md "Export").
    ExportId
);
