//! The wire types more than one route module shares: the macro that mirrors domain enums,
//! the date format, who acted, workflow stages, the client issued with a principal and
//! the list-page envelope. Route modules import these from here and never from each
//! other, so that each area can change on its own.

use consular_domain::{Scope, Stage};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use uuid::Uuid;

/// An enum of the wire that mirrors a domain enum (the domain does not depend on utoipa
/// or serde naming): snake_case values, an OpenAPI schema, and conversions both ways.
/// The domain enum must be in scope under `$domain`.
macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident mirrors $domain:ident { $($variant:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($variant),+
        }

        impl From<$name> for $domain {
            fn from(value: $name) -> Self {
                match value {
                    $($name::$variant => $domain::$variant),+
                }
            }
        }

        impl From<$domain> for $name {
            fn from(value: $domain) -> Self {
                match value {
                    $($domain::$variant => $name::$variant),+
                }
            }
        }
    };
}
pub(crate) use wire_enum;

wire_enum!(ScopeName mirrors Scope { Admin, Staff, Citizen });

time::serde::format_description!(pub iso_date, Date, "[year]-[month]-[day]");

/// RFC 3339 timestamps (`#[serde(with = "crate::wire::rfc3339")]`), as
/// `time::serde::rfc3339` writes and reads them, but formatted on the stack: time's own
/// serializer builds a `String` for every timestamp, four per service request in a list
/// page (docs/benchmarks.md "Connections kept on their thread", rendering).
pub mod rfc3339 {
    use serde::{Deserializer, Serializer, ser::Error as _};
    use time::OffsetDateTime;
    use time::format_description::well_known::Rfc3339;

    /// Longer than any timestamp RFC 3339 can express (a four-digit year, nanoseconds and
    /// an offset take 35 bytes); one that did not fit would be a serialization error.
    const MAX_LEN: usize = 64;

    pub fn serialize<S: Serializer>(at: &OffsetDateTime, serializer: S) -> Result<S::Ok, S::Error> {
        let mut buffer = [0u8; MAX_LEN];
        let mut out = &mut buffer[..];
        at.format_into(&mut out, &Rfc3339).map_err(S::Error::custom)?;
        // The length written is what the slice advanced by: the count `format_into`
        // returns leaves out the fraction of a second (time 0.3.55).
        let len = MAX_LEN - out.len();
        let text = std::str::from_utf8(&buffer[..len]).map_err(S::Error::custom)?;
        serializer.serialize_str(text)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<OffsetDateTime, D::Error> {
        time::serde::rfc3339::deserialize(deserializer)
    }

    /// The same for an `Option`: `null` when absent.
    pub mod option {
        use serde::{Deserializer, Serializer};
        use time::OffsetDateTime;

        pub fn serialize<S: Serializer>(
            at: &Option<OffsetDateTime>,
            serializer: S,
        ) -> Result<S::Ok, S::Error> {
            match at {
                Some(at) => serializer.serialize_some(&Timestamp(*at)),
                None => serializer.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(
            deserializer: D,
        ) -> Result<Option<OffsetDateTime>, D::Error> {
            time::serde::rfc3339::option::deserialize(deserializer)
        }

        struct Timestamp(OffsetDateTime);

        impl serde::Serialize for Timestamp {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                crate::wire::rfc3339::serialize(&self.0, serializer)
            }
        }
    }
}

/// Who acted: the principal's kind and id.
#[derive(Debug, Serialize, ToSchema)]
pub struct ActorBody {
    /// `admin`, `staff` or `citizen`.
    pub kind: String,
    pub id: Uuid,
}

impl From<consular_domain::Subject> for ActorBody {
    fn from(s: consular_domain::Subject) -> Self {
        ActorBody { kind: s.kind.as_str().to_owned(), id: s.id.as_uuid() }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StageBody {
    #[schema(
        min_length = 1,
        max_length = 100,
        pattern = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
    )]
    pub name: String,
    #[serde(default)]
    #[schema(max_length = 1000)]
    pub description: String,
}

impl From<StageBody> for Stage {
    fn from(s: StageBody) -> Self {
        Stage { name: s.name, description: s.description }
    }
}

/// The API client issued together with a citizen or staff member.
#[derive(Debug, Serialize, ToSchema)]
pub struct IssuedClientBody {
    pub client_id: Uuid,
    /// Shown once, in the response that created the client; never in a replay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    pub scopes: Vec<ScopeName>,
}

impl From<&consular_application::clients::IssuedClient> for IssuedClientBody {
    fn from(issued: &consular_application::clients::IssuedClient) -> Self {
        IssuedClientBody {
            client_id: issued.client.id.as_uuid(),
            client_secret: issued.secret.clone(),
            scopes: issued.client.scopes.iter().map(ScopeName::from).collect(),
        }
    }
}

/// A list page: `{items, next_cursor}` and the list's own fields (`extra`, flattened:
/// the inbox's `unread_count`; nothing for most lists).
#[derive(Debug, Serialize)]
pub struct ListBody<T, E> {
    pub items: Vec<T>,
    pub next_cursor: Option<String>,
    #[serde(flatten)]
    pub extra: E,
}

/// No fields besides the page's.
#[derive(Debug, Serialize)]
pub struct NoExtra {}

/// A slot's or an appointment's times in the mission's time zone (UTC if the zone is
/// unknown, which a validated mission never has).
pub fn local_times(
    starts_at: time::OffsetDateTime,
    ends_at: time::OffsetDateTime,
    timezone: &str,
) -> consular_domain::LocalSlot {
    consular_domain::LocalSlot::between(starts_at, ends_at, timezone)
        .unwrap_or(consular_domain::LocalSlot { starts_at, ends_at })
}

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use time::OffsetDateTime;
    use time::macros::{datetime, offset};

    #[derive(Serialize)]
    struct Ours {
        #[serde(with = "super::rfc3339")]
        at: OffsetDateTime,
        #[serde(with = "super::rfc3339::option")]
        maybe: Option<OffsetDateTime>,
    }

    #[derive(Serialize)]
    struct Times {
        #[serde(with = "time::serde::rfc3339")]
        at: OffsetDateTime,
        #[serde(with = "time::serde::rfc3339::option")]
        maybe: Option<OffsetDateTime>,
    }

    /// Written exactly as `time::serde::rfc3339` writes it, fractions and offsets included.
    #[test]
    fn timestamps_are_written_as_time_writes_them() {
        let cases = [
            datetime!(2026-11-26 06:38:38 UTC),
            datetime!(2026-11-26 06:38:38.8 UTC),
            datetime!(2026-11-26 06:38:38.812_345 UTC),
            datetime!(2026-11-26 06:38:38.123_456_789 UTC),
            datetime!(1970-01-01 00:00:00.000_001 UTC),
            datetime!(9999-12-31 23:59:59.999_999_999 UTC),
            datetime!(2026-03-29 02:30:00.5 UTC).to_offset(offset!(+05:45)),
            datetime!(2026-03-29 02:30:00 UTC).to_offset(offset!(-09:30)),
        ];
        for at in cases {
            for maybe in [None, Some(at)] {
                let ours = serde_json::to_string(&Ours { at, maybe }).expect("ours");
                let times = serde_json::to_string(&Times { at, maybe }).expect("time's");
                assert_eq!(ours, times, "{at}");
            }
        }
    }

    /// A year RFC 3339 cannot express is an error, as with time's serializer, not a panic.
    #[test]
    fn an_inexpressible_year_is_an_error() {
        let at = datetime!(2026-01-01 00:00 UTC).replace_year(-1).expect("year -1");
        assert!(serde_json::to_string(&Ours { at, maybe: None }).is_err());
        assert!(serde_json::to_string(&Times { at, maybe: None }).is_err());
    }
}
