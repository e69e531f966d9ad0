//! The wire of `/api/v1/appointments/slots`: a mission's availability as submitted (a
//! recurring schedule or explicit slots, in its local time) and read back into what the
//! use case takes, the report of a submission, an open slot, the list parameters, and the
//! problems these operations document.

use crate::wire::common::{local_times, problem_response};
use consular_application::appointments::{SlotPart, SlotReport, SlotSubmission};
use consular_domain::{
    Availability, Cutoffs, ExplicitSlots, MissionId, OpeningHours, RecurringSchedule, ServiceTypeId, Slot,
    SlotTemplate, ValidationErrors,
};
use serde::{Deserialize, Serialize};
use time::macros::format_description;
use time::{Date, OffsetDateTime, PrimitiveDateTime, Time, Weekday};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// The most explicit slots one submission lists.
const MAX_EXPLICIT: usize = 200;

/// A day of the week.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum WeekdayName {
    Mon,
    Tue,
    Wed,
    Thu,
    Fri,
    Sat,
    Sun,
}

impl From<WeekdayName> for Weekday {
    fn from(day: WeekdayName) -> Self {
        match day {
            WeekdayName::Mon => Weekday::Monday,
            WeekdayName::Tue => Weekday::Tuesday,
            WeekdayName::Wed => Weekday::Wednesday,
            WeekdayName::Thu => Weekday::Thursday,
            WeekdayName::Fri => Weekday::Friday,
            WeekdayName::Sat => Weekday::Saturday,
            WeekdayName::Sun => Weekday::Sunday,
        }
    }
}

/// The booking and cancellation cut-offs, in minutes before the start.
#[derive(Debug, Clone, Copy, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CutoffsBody {
    /// Booking closes this long before the start (default 60).
    #[schema(minimum = 0, maximum = 43200)]
    pub booking_minutes: u32,
    /// Citizens cannot cancel or move a booking this long before the start (default 1440).
    #[schema(minimum = 0, maximum = 43200)]
    pub cancellation_minutes: u32,
}

/// One daily opening interval, local wall-clock times.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct HoursBody {
    /// `HH:MM`, e.g. `09:00`.
    #[schema(pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$", example = "09:00")]
    pub from: String,
    /// `HH:MM`, after `from`.
    #[schema(pattern = "^([01][0-9]|2[0-3]):[0-5][0-9]$", example = "12:00")]
    pub to: String,
}

/// A recurring schedule in the mission's local time.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleBody {
    /// First local day (inclusive).
    #[schema(format = Date, example = "2026-03-23")]
    pub from: String,
    /// Last local day (inclusive); at most 366 days after `from`.
    #[schema(format = Date, example = "2026-04-03")]
    pub to: String,
    #[schema(min_items = 1, max_items = 7)]
    pub weekdays: Vec<WeekdayName>,
    #[schema(min_items = 1, max_items = 8)]
    pub hours: Vec<HoursBody>,
    #[schema(minimum = 5, maximum = 480)]
    pub slot_minutes: u32,
    #[schema(minimum = 1, maximum = 1000)]
    pub capacity: u32,
    #[schema(min_items = 1, max_items = 50)]
    pub service_type_ids: Vec<Uuid>,
    /// Local days without slots.
    #[serde(default)]
    #[schema(value_type = Vec<String>, format = Date, max_items = 366)]
    pub excluded_dates: Vec<String>,
}

/// One explicit slot in the mission's local time.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExplicitSlotBody {
    /// A local date and time without offset, e.g. `2026-03-30T09:00`.
    #[schema(
        pattern = "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2})?$",
        example = "2026-03-30T09:00"
    )]
    pub starts_at: String,
    #[schema(minimum = 5, maximum = 480)]
    pub minutes: u32,
    #[schema(minimum = 1, maximum = 1000)]
    pub capacity: u32,
    #[schema(min_items = 1, max_items = 50)]
    pub service_type_ids: Vec<Uuid>,
    /// `false` closes the slot (default `true`).
    pub open: Option<bool>,
}

/// Availability to create or update: exactly one of `schedule` and `slots`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitSlots {
    pub mission_id: Uuid,
    /// Cancel the bookings a lower capacity or a closed slot no longer holds (each
    /// citizen gets `appointment.cancelled_by_mission`) instead of answering 409.
    #[serde(default)]
    pub cancel_bookings: bool,
    pub cutoffs: Option<CutoffsBody>,
    /// When every slot the submission makes or updates opens to availability and booking
    /// (RFC 3339 with offset); before it, the slots are listed to nobody and booked by
    /// nobody. Absent: at once (re-submitting without it releases the slots). Must be
    /// before the booking cut-off of every slot; a past instant releases at once.
    #[serde(default, with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime, example = "2026-12-01T09:00:00+01:00")]
    pub release_at: Option<OffsetDateTime>,
    pub schedule: Option<ScheduleBody>,
    /// At most 200 (a longer list is a recurring schedule, or several submissions).
    #[schema(min_items = 1, max_items = 200)]
    pub slots: Option<Vec<ExplicitSlotBody>>,
}

/// What a submission did.
#[derive(Debug, Serialize, ToSchema)]
pub struct SlotReportBody {
    pub created: usize,
    pub updated: usize,
    pub unchanged: usize,
    /// The bookings cancelled by the mission to make room (`cancel_bookings`).
    pub cancelled_appointments: Vec<Uuid>,
    /// When the submission's slots open (UTC); null: released at once.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub release_at: Option<OffsetDateTime>,
}

impl From<SlotReport> for SlotReportBody {
    fn from(r: SlotReport) -> Self {
        SlotReportBody {
            created: r.created,
            updated: r.updated,
            unchanged: r.unchanged,
            cancelled_appointments: r.cancelled_appointments.iter().map(|a| a.as_uuid()).collect(),
            release_at: r.release_at,
        }
    }
}

/// An open slot with free seats.
#[derive(Debug, Serialize, ToSchema)]
pub struct SlotBody {
    pub id: Uuid,
    pub mission_id: Uuid,
    /// UTC.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub starts_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub ends_at: OffsetDateTime,
    /// The mission's local time, with its offset.
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub local_starts_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    #[schema(value_type = String, format = DateTime)]
    pub local_ends_at: OffsetDateTime,
    /// The mission's IANA time zone.
    pub timezone: String,
    pub capacity: u32,
    pub remaining: u32,
    pub service_type_ids: Vec<Uuid>,
    /// When the slot opened to availability and booking (UTC, in the past for a listed
    /// slot); null: released when it was made.
    #[serde(with = "time::serde::rfc3339::option")]
    #[schema(value_type = Option<String>, format = DateTime)]
    pub release_at: Option<OffsetDateTime>,
}

impl SlotBody {
    /// `timezone`: the mission's.
    pub fn new(s: &Slot, timezone: &str) -> Self {
        let l = local_times(s.starts_at, s.ends_at, timezone);
        SlotBody {
            id: s.id.as_uuid(),
            mission_id: s.mission_id.as_uuid(),
            starts_at: s.starts_at,
            ends_at: s.ends_at,
            local_starts_at: l.starts_at,
            local_ends_at: l.ends_at,
            timezone: timezone.to_owned(),
            capacity: s.capacity,
            remaining: s.remaining(),
            service_type_ids: s.service_types.iter().map(|t| t.as_uuid()).collect(),
            release_at: s.release_at,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SlotList {
    pub items: Vec<SlotBody>,
    pub next_cursor: Option<String>,
}

fn parse_date(errors: &mut ValidationErrors, pointer: &str, text: &str) -> Option<Date> {
    let parsed = Date::parse(text, format_description!("[year]-[month]-[day]")).ok();
    if parsed.is_none() {
        errors.add(pointer, "invalid_date", "must be a date YYYY-MM-DD");
    }
    parsed
}

fn parse_time(errors: &mut ValidationErrors, pointer: &str, text: &str) -> Option<Time> {
    let parsed = Time::parse(text, format_description!("[hour]:[minute]")).ok();
    if parsed.is_none() {
        errors.add(pointer, "invalid_time", "must be a time HH:MM");
    }
    parsed
}

fn parse_local(errors: &mut ValidationErrors, pointer: &str, text: &str) -> Option<PrimitiveDateTime> {
    let parsed = PrimitiveDateTime::parse(text, format_description!("[year]-[month]-[day]T[hour]:[minute]"))
        .or_else(|_| {
            PrimitiveDateTime::parse(
                text,
                format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]"),
            )
        })
        .ok();
    if parsed.is_none() {
        errors.add(
            pointer,
            "invalid_local_time",
            "must be a local date and time YYYY-MM-DDTHH:MM, without offset",
        );
    }
    parsed
}

fn service_types(ids: &[Uuid]) -> Vec<ServiceTypeId> {
    ids.iter().copied().map(ServiceTypeId).collect()
}

/// The submission as the use case takes it; every malformed date or time at once.
impl TryFrom<SubmitSlots> for SlotSubmission {
    type Error = ValidationErrors;

    fn try_from(body: SubmitSlots) -> Result<Self, ValidationErrors> {
        let mut errors = ValidationErrors::new();
        let cutoffs = body
            .cutoffs
            .map(|c| Cutoffs {
                booking_minutes: c.booking_minutes,
                cancellation_minutes: c.cancellation_minutes,
            })
            .unwrap_or_default();
        let mut parts = Vec::new();
        match (body.schedule, body.slots) {
            (Some(s), None) => {
                let first = parse_date(&mut errors, "/schedule/from", &s.from);
                let last = parse_date(&mut errors, "/schedule/to", &s.to);
                let mut hours = Vec::new();
                for (i, h) in s.hours.iter().enumerate() {
                    let opens = parse_time(&mut errors, &format!("/schedule/hours/{i}/from"), &h.from);
                    let closes = parse_time(&mut errors, &format!("/schedule/hours/{i}/to"), &h.to);
                    if let (Some(opens), Some(closes)) = (opens, closes) {
                        hours.push(OpeningHours { opens, closes });
                    }
                }
                let excluded: Vec<Date> = s
                    .excluded_dates
                    .iter()
                    .enumerate()
                    .filter_map(|(i, d)| parse_date(&mut errors, &format!("/schedule/excluded_dates/{i}"), d))
                    .collect();
                if let (Some(first_day), Some(last_day)) = (first, last) {
                    parts.push(SlotPart {
                        pointer: "/schedule".to_owned(),
                        availability: Availability::Recurring(RecurringSchedule {
                            first_day,
                            last_day,
                            weekdays: s.weekdays.iter().map(|d| (*d).into()).collect(),
                            hours,
                            excluded_dates: excluded,
                            template: SlotTemplate {
                                slot_minutes: s.slot_minutes,
                                capacity: s.capacity,
                                service_types: service_types(&s.service_type_ids),
                                open: true,
                                cutoffs,
                            },
                        }),
                    });
                }
            }
            (None, Some(slots)) => {
                if slots.is_empty() || slots.len() > MAX_EXPLICIT {
                    errors.add("/slots", "out_of_range", "must list 1 to 200 slots");
                }
                for (i, slot) in slots.iter().enumerate() {
                    let pointer = format!("/slots/{i}");
                    if let Some(start) =
                        parse_local(&mut errors, &format!("{pointer}/starts_at"), &slot.starts_at)
                    {
                        parts.push(SlotPart {
                            pointer,
                            availability: Availability::Explicit(ExplicitSlots {
                                starts: vec![start],
                                template: SlotTemplate {
                                    slot_minutes: slot.minutes,
                                    capacity: slot.capacity,
                                    service_types: service_types(&slot.service_type_ids),
                                    open: slot.open.unwrap_or(true),
                                    cutoffs,
                                },
                            }),
                        });
                    }
                }
            }
            _ => errors.add("/", "one_of", "send exactly one of `schedule` and `slots`"),
        }
        errors.into_result()?;
        Ok(SlotSubmission {
            mission_id: MissionId(body.mission_id),
            cancel_bookings: body.cancel_bookings,
            release_at: body.release_at,
            parts,
        })
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SlotListParams {
    pub mission_id: Uuid,
    pub service_type_id: Uuid,
    /// Slots starting at or after this instant (RFC 3339; default now).
    #[serde(default, with = "time::serde::rfc3339::option")]
    #[param(value_type = Option<String>, format = DateTime)]
    pub from: Option<OffsetDateTime>,
    /// Slots starting before this instant (RFC 3339; default a year after `from`).
    #[serde(default, with = "time::serde::rfc3339::option")]
    #[param(value_type = Option<String>, format = DateTime)]
    pub to: Option<OffsetDateTime>,
    /// Page size, 1 to 100 (default 20).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page.
    #[param(min_length = 43, max_length = 43, pattern = "^[A-Za-z0-9_-]{43}$")]
    pub cursor: Option<String>,
}

problem_response! {
    /// 409 of a submission.
    SeatsBooked = 409, "The change would drop booked seats (`slot_has_bookings`; `errors` names the slots)";
    /// 404 of the list.
    NoSuchMission = 404, "No such mission, or another mission than the caller's";
}
