//! Which of a citizen's representatives hear of what concerns the citizen
//! (docs/representation.md "Notifications"): those holding a representation in force at
//! delivery whose services cover the event's. Whether the citizen hears it too is
//! [`produce`](super::produce)'s.

use crate::representation::Representation;
use crate::{CitizenId, ServiceTypeId};
use time::{Date, OffsetDateTime};

/// The representatives of a citizen born on `born` who hear of an event about `service`
/// (the request's service type, an appointment's, a document's request's; `None`: a
/// document of no request, which only a mandate over every service covers), delivered at
/// `now`, `today` being its date in the citizen's mission's time zone. `representations`
/// are the citizen's (ended ones are passed over); each representative is named once, in
/// the order of their first representation that qualifies. Several representations of one
/// representative unite their services, so one covering the service is enough.
pub fn representatives_hearing(
    representations: &[Representation],
    service: Option<ServiceTypeId>,
    now: OffsetDateTime,
    today: Date,
    born: Date,
) -> Vec<CitizenId> {
    let mut hearing: Vec<CitizenId> = Vec::new();
    for r in representations {
        if r.in_force(now, today, born)
            && r.services.covers(service)
            && !hearing.contains(&r.representative_id)
        {
            hearing.push(r.representative_id);
        }
    }
    hearing
}
