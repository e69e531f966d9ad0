//! The demo's fixed vocabulary: where missions are, the services of the catalog and how
//! their cases behave, names and addresses, and the weights and shares the generator
//! draws by (`generate.rs`).

/// The country whose consular network the demo is (the citizens' nationality).
pub(super) const HOME_COUNTRY: &str = "FR";

/// A place a mission is in: country, city, IANA zone, kind of post, calling code. Zones
/// with daylight saving time in both hemispheres, with offsets of half and three
/// quarters of an hour, and one that skips midnight (America/Santiago).
pub(super) struct Place {
    pub(super) country: &'static str,
    pub(super) city: &'static str,
    pub(super) timezone: &'static str,
    pub(super) embassy: bool,
    pub(super) calling_code: &'static str,
}

pub(super) const fn place(
    country: &'static str,
    city: &'static str,
    timezone: &'static str,
    embassy: bool,
    calling_code: &'static str,
) -> Place {
    Place { country, city, timezone, embassy, calling_code }
}

pub(super) const PLACES: &[Place] = &[
    place("GB", "London", "Europe/London", true, "44"),
    place("US", "New York", "America/New_York", false, "1"),
    place("IN", "New Delhi", "Asia/Kolkata", true, "91"),
    place("NP", "Kathmandu", "Asia/Kathmandu", true, "977"),
    place("AU", "Adelaide", "Australia/Adelaide", false, "61"),
    place("CA", "St. John's", "America/St_Johns", false, "1"),
    place("JP", "Tokyo", "Asia/Tokyo", true, "81"),
    place("BR", "São Paulo", "America/Sao_Paulo", false, "55"),
    place("KE", "Nairobi", "Africa/Nairobi", true, "254"),
    place("CL", "Santiago", "America/Santiago", true, "56"),
    place("IR", "Tehran", "Asia/Tehran", true, "98"),
    place("NZ", "Wellington", "Pacific/Auckland", true, "64"),
    place("DE", "Berlin", "Europe/Berlin", true, "49"),
    place("SG", "Singapore", "Asia/Singapore", true, "65"),
    place("MA", "Rabat", "Africa/Casablanca", true, "212"),
    place("MX", "Mexico City", "America/Mexico_City", true, "52"),
    place("AE", "Dubai", "Asia/Dubai", false, "971"),
    place("ES", "Barcelona", "Europe/Madrid", false, "34"),
    place("CN", "Shanghai", "Asia/Shanghai", false, "86"),
    place("US", "San Francisco", "America/Los_Angeles", false, "1"),
];

/// One service of the catalog and how its cases behave.
pub(super) struct Profile {
    pub(super) code: &'static str,
    pub(super) name: &'static str,
    pub(super) description: &'static str,
    pub(super) fee_cents: i64,
    pub(super) sla_days: i32,
    /// Stage names and the median hours a case spends in each.
    pub(super) stages: &'static [(&'static str, u64)],
    /// The stage at whose end the decision (approve or reject) is taken.
    pub(super) decision_stage: usize,
    /// Median hours from submission to the first review.
    pub(super) pickup_hours: u64,
    /// Share of the requests (relative weight).
    pub(super) popularity: u32,
    /// Per mille of decisions that are rejections.
    pub(super) reject_per_mille: u32,
    /// Per mille of requests that go through `action_required` once.
    pub(super) action_per_mille: u32,
}

pub(super) const PROFILES: &[Profile] = &[
    Profile {
        code: "passport_renewal",
        name: "Passport renewal",
        description: "Renewal of an expiring or expired passport.",
        fee_cents: 8_600,
        sla_days: 21,
        stages: &[("Document check", 30), ("Biometrics", 72), ("Printing", 96), ("Dispatch", 48)],
        decision_stage: 1,
        pickup_hours: 18,
        popularity: 35,
        reject_per_mille: 20,
        action_per_mille: 180,
    },
    Profile {
        code: "visa",
        name: "Visa application",
        description: "A short-stay visa for a foreign national.",
        fee_cents: 8_000,
        sla_days: 15,
        stages: &[("Application review", 48), ("Interview", 120), ("Decision letter", 24)],
        decision_stage: 1,
        pickup_hours: 24,
        popularity: 25,
        reject_per_mille: 180,
        action_per_mille: 120,
    },
    Profile {
        code: "birth_registration",
        name: "Birth registration",
        description: "Registration of a birth abroad in the civil registry.",
        fee_cents: 0,
        sla_days: 30,
        stages: &[("Verification", 96), ("Registration", 120)],
        decision_stage: 0,
        pickup_hours: 48,
        popularity: 8,
        reject_per_mille: 30,
        action_per_mille: 250,
    },
    Profile {
        code: "notarial_act",
        name: "Notarial act",
        description: "Certification of a signature, a copy or a power of attorney.",
        fee_cents: 2_500,
        sla_days: 10,
        stages: &[("Document review", 24), ("Signing appointment", 72)],
        decision_stage: 0,
        pickup_hours: 12,
        popularity: 12,
        reject_per_mille: 40,
        action_per_mille: 100,
    },
    Profile {
        code: "emergency_travel_document",
        name: "Emergency travel document",
        description: "A single-journey document for a citizen whose passport was lost or stolen.",
        fee_cents: 4_500,
        sla_days: 3,
        stages: &[("Identity check", 6), ("Issuance", 10)],
        decision_stage: 0,
        pickup_hours: 2,
        popularity: 5,
        reject_per_mille: 50,
        action_per_mille: 60,
    },
    Profile {
        code: "civil_status_certificate",
        name: "Civil status certificate",
        description: "A copy or extract of a birth, marriage or death certificate.",
        fee_cents: 0,
        sla_days: 14,
        stages: &[("Records search", 72), ("Verification", 48), ("Issuance", 24)],
        decision_stage: 1,
        pickup_hours: 24,
        popularity: 15,
        reject_per_mille: 60,
        action_per_mille: 80,
    },
];

pub(super) const GIVEN_NAMES: &[&str] = &[
    "Alice", "Louis", "Camille", "Hugo", "Chloe", "Jules", "Manon", "Lucas", "Ines", "Gabriel", "Lea",
    "Arthur", "Emma", "Nathan", "Sarah", "Paul", "Julie", "Thomas", "Clara", "Antoine", "Zoe", "Mathis",
    "Lina", "Raphael", "Anna", "Leo", "Eva", "Adam", "Lou", "Noah",
];

pub(super) const FAMILY_NAMES: &[&str] = &[
    "Martin", "Bernard", "Dubois", "Thomas", "Robert", "Richard", "Petit", "Durand", "Leroy", "Moreau",
    "Simon", "Laurent", "Lefebvre", "Michel", "Garcia", "David", "Bertrand", "Roux", "Vincent", "Fournier",
    "Morel", "Girard", "Andre", "Mercier", "Dupont", "Lambert", "Bonnet", "Francois", "Martinez", "Legrand",
];

pub(super) const BIRTH_PLACES: &[&str] = &[
    "Paris",
    "Lyon",
    "Marseille",
    "Toulouse",
    "Nantes",
    "Lille",
    "Bordeaux",
    "Strasbourg",
    "Rennes",
    "Nice",
];

pub(super) const STREETS: &[&str] = &[
    "High Street",
    "Station Road",
    "Park Avenue",
    "Main Street",
    "Church Lane",
    "Harbour Road",
    "Hill View",
];

pub(super) const JOB_TITLES: &[&str] =
    &["Consular officer", "Consular assistant", "Vice-consul", "Registrar", "Visa officer", "Passport clerk"];

pub(super) const RELATIONSHIPS: &[&str] = &["Spouse", "Parent", "Sibling", "Friend", "Child"];

/// Relative weights of the weekdays, Monday first: offices are closed at weekends, but
/// online submissions still come in.
pub(super) const WEEKDAY_WEIGHTS: [u32; 7] = [100, 95, 92, 90, 80, 12, 6];

/// Relative weights of the local hours of the day (0 to 23) at which requests are submitted.
pub(super) const HOUR_WEIGHTS: [u32; 24] =
    [1, 1, 1, 1, 1, 2, 4, 10, 30, 60, 75, 70, 45, 50, 65, 60, 45, 30, 18, 12, 9, 6, 4, 2];

/// A log-normal law (σ = 0.75) as multipliers of its median, per mille, at the quantiles
/// 0, 1/16, …, 1 (clipped at z = −2.3 and z = +2.6); drawn by linear interpolation.
pub(super) const SPREAD: [u64; 17] =
    [178, 316, 422, 514, 603, 693, 787, 889, 1000, 1125, 1270, 1443, 1658, 1945, 2370, 3160, 7029];

// Streams of the ChaCha generator, one per part of the data set.
pub(super) const STREAM_REFERENCE: u64 = 1;
pub(super) const STREAM_CITIZENS: u64 = 2;
pub(super) const STREAM_REQUESTS: u64 = 3;

/// Per mille of requests stuck once for a long time (most overdue cases come from them).
pub(super) const STALLED_PER_MILLE: u32 = 30;
/// Per mille of requests submitted with nobody assigned (picked up by a member later).
pub(super) const UNASSIGNED_PER_MILLE: u32 = 40;
/// Per mille of requests the citizen cancels before they are reviewed.
pub(super) const EARLY_CANCEL_PER_MILLE: u32 = 20;
/// Per mille of requests waiting on the citizen that the citizen cancels instead.
pub(super) const ACTION_CANCEL_PER_MILLE: u32 = 100;
/// Per mille of requests cancelled by staff at the decision (a duplicate, a withdrawal).
pub(super) const STAFF_CANCEL_PER_MILLE: u32 = 15;
/// Median hours a citizen takes to answer an `action_required`.
pub(super) const CITIZEN_RESPONSE_HOURS: u64 = 96;
/// Median hours from a decision to the next stage's start.
pub(super) const AFTER_DECISION_HOURS: u64 = 2;

pub(super) const HOUR: u64 = 3_600;

/// At most this many items are reserved for a batch up front (a batch may be asked as
/// "everything").
pub(super) const PREALLOCATED: usize = 4_096;
