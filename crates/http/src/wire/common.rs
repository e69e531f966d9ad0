//! The wire pieces the areas' files share: the macro that mirrors domain enums, the
//! macro that names a domain enum's texts as a closed set in the OpenAPI document, the
//! macro that declares a problem response, the enums several areas send (scopes,
//! principal kinds, request statuses), the date format, who acted, workflow stages,
//! the client issued with a principal, the list-page envelope, local times, and the
//! serde readers of an explicit `null` and of comma-separated query lists. An area's file
//! imports these from here, never from another area's file nor from `wire` itself
//! (`tests/module_graph.rs` reads a module's use of its parent as a cycle).

use consular_domain::{PrincipalKind, RequestStatus, Scope, Stage};
use serde::de::DeserializeOwned;
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

/// A closed set of strings the server sends as a domain enum's `as_str` (a `text_enum!`
/// of the domain, or any enum with `ALL` and `as_str`), named in the OpenAPI document: a
/// schema `$name`, a string whose `enum` is made from `$domain::ALL`, so that the
/// document lists the values the server can send from the list the server sends them
/// from. A field keeps its `String` and names the schema with
/// `#[schema(value_type = $name)]`: nothing on the wire changes.
macro_rules! closed_set {
    ($(#[$meta:meta])* $name:ident from $domain:ty, $description:literal) => {
        $(#[$meta])*
        pub struct $name;

        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::schema::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .description(Some($description))
                    .enum_values(Some(<$domain>::ALL.iter().map(|value| value.as_str())))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {}
    };
}
pub(crate) use closed_set;

/// Declares problem responses an operation documents beside the conventional ones
/// `spec.rs` adds from the operation's shape (401, 403, 404, 400, 408, 413, 415, 422,
/// 503): each a status, a description, `application/problem+json` with the `Problem`
/// schema, and optional headers. A route names the type in
/// `#[utoipa::path(responses(...))]`; as utoipa's `IntoResponses`, it expands to the same
/// inline response the written-out tuple did (no `components.responses` entry), so the
/// document reads the same.
macro_rules! problem_response {
    ($($(#[$meta:meta])* $name:ident = $status:tt, $description:tt $(, headers $headers:tt)?;)+) => {
        $(
            $(#[$meta])*
            #[derive(utoipa::IntoResponses)]
            #[response(
                status = $status,
                description = $description,
                content_type = "application/problem+json"
                $(, headers $headers)?
            )]
            pub struct $name(pub $crate::problem::Problem);
        )+
    };
}
pub(crate) use problem_response;

wire_enum!(ScopeName mirrors Scope { Admin, Staff, Citizen });
wire_enum!(PrincipalKindName mirrors PrincipalKind { Admin, Staff, Citizen });
wire_enum!(RequestStatusName mirrors RequestStatus { Submitted, InReview, ActionRequired, Approved, Rejected, Completed, Cancelled });

time::serde::format_description!(pub iso_date, Date, "[year]-[month]-[day]");

/// Who acted: the principal's kind and id.
#[derive(Debug, Serialize, ToSchema)]
pub struct ActorBody {
    #[schema(value_type = PrincipalKindName)]
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

/// For `#[serde(default, deserialize_with = "present")]` on an `Option<Option<T>>`: an
/// absent member stays `None` (no change), an explicit `null` becomes `Some(None)`.
pub fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(deserializer).map(Some)
}

/// For `#[serde(default, deserialize_with = "comma_separated")]` on an `Option<Vec<T>>`
/// query parameter: `status=submitted,in_review`; `status=` is the empty list (no
/// filter); inside a list every entry must be a value of `T`. Declare the parameter
/// `style = Form, explode`: `ApiQuery` then joins its repeated form
/// (`status=submitted&status=in_review`) into this one (docs/api.md "List filters").
pub fn comma_separated<'de, D: serde::Deserializer<'de>, T: DeserializeOwned>(
    deserializer: D,
) -> Result<Option<Vec<T>>, D::Error> {
    let Some(list) = Option::<String>::deserialize(deserializer)? else { return Ok(None) };
    if list.is_empty() {
        return Ok(Some(Vec::new()));
    }
    list.split(',')
        .map(|s| {
            serde_json::from_value::<T>(serde_json::Value::String(s.trim().to_owned()))
                .map_err(|_| serde::de::Error::custom(format!("unknown value `{s}`")))
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}
