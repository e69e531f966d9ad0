//! How the appointment use cases report the domain's refusals of a booking, a
//! cancellation, a move or an attendance (docs/appointments.md).

use crate::ServiceError;
use consular_domain::{
    AppointmentAction, AppointmentRefused, BookingRefused, CancelRefused, RescheduleRefused, ValidationErrors,
};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

fn invalid(pointer: &str, code: &str, message: &str) -> ServiceError {
    ValidationErrors::single(pointer, code, message).into()
}

fn rfc3339(at: OffsetDateTime) -> String {
    at.format(&Rfc3339).unwrap_or_else(|_| at.to_string())
}

/// A slot that does not take the booking: 409 with the rule's code (`slot_not_released`
/// with the instant it opens), except a service type the slot does not serve, which is
/// a field error.
pub(super) fn booking_refused(refused: BookingRefused) -> ServiceError {
    match refused {
        BookingRefused::Full => ServiceError::conflict("slot_full", "the slot has no free seat"),
        BookingRefused::Closed => ServiceError::conflict("slot_closed", "the slot is closed"),
        BookingRefused::NotReleased { release_at } => ServiceError::SlotNotReleased {
            release_at,
            detail: format!("the slot opens for booking at {}", rfc3339(release_at)),
        },
        BookingRefused::BookingClosed { closes_at } => ServiceError::conflict(
            "booking_closed",
            format!("booking this slot closed at {}", rfc3339(closes_at)),
        ),
        BookingRefused::ServiceNotServed => {
            invalid("/service_type_id", "not_served", "the slot does not serve this service type")
        }
    }
}

fn cancel_refused(refused: CancelRefused) -> ServiceError {
    let CancelRefused::InsideCutoff { closes_at } = refused;
    ServiceError::conflict(
        "cancellation_closed",
        format!(
            "citizens cannot cancel or move this appointment after {} (the cancellation cut-off)",
            rfc3339(closes_at)
        ),
    )
}

pub(super) fn refused(refused: AppointmentRefused) -> ServiceError {
    match refused {
        AppointmentRefused::Illegal { ref allowed, .. } => ServiceError::IllegalTransition {
            allowed: allowed.iter().map(|a| action_name(*a).to_owned()).collect(),
            detail: refused.to_string(),
        },
        AppointmentRefused::Cancel(c) | AppointmentRefused::Reschedule(RescheduleRefused::Leave(c)) => {
            cancel_refused(c)
        }
        AppointmentRefused::Reschedule(RescheduleRefused::Join(b)) => booking_refused(b),
        AppointmentRefused::Reschedule(RescheduleRefused::SameSlot) => {
            invalid("/slot_id", "same_slot", "the appointment is already in that slot")
        }
        AppointmentRefused::Reschedule(RescheduleRefused::OtherMission) => {
            ServiceError::unknown("/slot_id", "no such slot in the appointment's mission")
        }
        AppointmentRefused::NotStarted { starts_at } => ServiceError::conflict(
            "not_started",
            format!("attendance can be recorded from {} on", rfc3339(starts_at)),
        ),
        AppointmentRefused::WrongSlot => ServiceError::Internal("an appointment's slot mismatch".to_owned()),
    }
}

fn action_name(action: AppointmentAction) -> &'static str {
    match action {
        AppointmentAction::Reschedule => "reschedule",
        AppointmentAction::Cancel => "cancel",
        AppointmentAction::Attend => "attend",
        AppointmentAction::MarkNoShow => "mark_no_show",
    }
}
