//! The demo data set, generated without I/O: missions around the world, a catalog of six
//! consular services, their staff and citizens, and requests spread over a past period
//! whose histories are walked through the domain's own state machine.
//!
//! **Deterministic**: the same [`DemoPlan`] gives the same data, byte for byte, on every
//! platform. Every random draw comes from `ChaCha8Rng` (portable output) through integer
//! ranges of fixed width; durations are drawn from a table (integer arithmetic, no
//! floating-point `exp`/`ln`, whose last bit may differ between C libraries); ids are
//! UUIDv7 built from the instant they stand for and drawn bytes. The three parts (reference
//! data, citizens, requests) draw from separate ChaCha streams, so the requests do not
//! depend on the batch sizes or on how many citizens were read.
//!
//! **Streamed**: the reference data (missions, service types, staff) is small and held;
//! citizens and requests come in batches from iterators, so a million requests never sit
//! in memory at once. A citizen is addressed by (mission, index) and its id is a pure
//! function of the seed and that pair, so the requests need no list of citizens.

use consular_domain::analytics::local_date;
use consular_domain::appointment::local_day;
use consular_domain::rules;
use consular_domain::{
    Action, Address, Citizen, CitizenId, EmergencyContact, HistoryEntry, IllegalTransition, Mission,
    MissionId, Money, NewCitizen, NewMission, NewRequest, NewServiceType, NewStaffMember, PrincipalId,
    PrincipalKind, RegistrationStatus, RequestChange, RequestId, RequestStatus, Role, ServiceRequest,
    ServiceType, ServiceTypeId, StaffId, StaffMember, Stage, Subject, ValidationErrors,
};
use consular_ports::SeededRequest;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use time::{Date, Duration, OffsetDateTime};
use uuid::Uuid;
use validator::Validate;

use super::vocabulary::*;

/// What to generate.
#[derive(Debug, Clone, PartialEq, Eq, Validate)]
pub struct DemoPlan {
    /// Missions (1 to [`DemoPlan::MAX_MISSIONS`]).
    #[validate(range(min = 1, max = Self::MAX_MISSIONS, code = "out_of_range", message = "must be 1 to 999"))]
    pub missions: u32,
    /// Requests, spread over the missions by their size.
    #[validate(range(max = Self::MAX_REQUESTS, code = "out_of_range", message = "must be at most 100000000"))]
    pub requests: u64,
    /// The same seed (and the rest of the plan) gives the same data.
    pub seed: u64,
    /// The past period the requests are submitted in, in days before `now`.
    #[validate(range(min = 1, max = Self::MAX_DAYS, code = "out_of_range", message = "must be 1 to 1827"))]
    pub days: u32,
    /// The end of the period; truncated to whole seconds (every generated instant is whole
    /// seconds, so what is read back from either database equals what was generated).
    pub now: OffsetDateTime,
}

impl DemoPlan {
    pub const DEFAULT_DAYS: u32 = 365;
    pub const MAX_MISSIONS: u32 = 999;
    pub const MAX_DAYS: u32 = 1827;
    pub const MAX_REQUESTS: u64 = 100_000_000;

    /// Every field out of its range at once, in the order of the fields.
    pub fn validate(&self) -> Result<(), ValidationErrors> {
        rules::flatten_in_order(Validate::validate(self), &["missions", "requests", "days"])
    }
}

/// Why nothing (more) could be generated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DemoError {
    #[error("invalid plan: {0}")]
    Plan(ValidationErrors),
    #[error("instant out of range: {0}")]
    Time(String),
    #[error("unknown time zone `{0}`")]
    TimeZone(String),
    /// A bug of the generator: the state machine refused a step of a walk.
    #[error("the generator asked for an illegal transition: {0}")]
    Transition(#[from] IllegalTransition),
}

// ------------------------------------------------------------------ helpers

fn rng(seed: u64, stream: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream);
    rng
}

/// SplitMix64: the ids and creation times of citizens as pure functions of their address.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A UUIDv7 of the instant `at` with the given random bytes.
fn v7(at: OffsetDateTime, random: [u8; 10]) -> Uuid {
    let millis = u64::try_from(at.unix_timestamp()).unwrap_or(0) * 1_000 + u64::from(at.millisecond());
    uuid::Builder::from_unix_timestamp_millis(millis, &random).into_uuid()
}

fn drawn_v7(rng: &mut ChaCha8Rng, at: OffsetDateTime) -> Uuid {
    v7(at, rng.random::<[u8; 10]>())
}

fn chance(rng: &mut ChaCha8Rng, per_mille: u32) -> bool {
    rng.random_range(0..1000u32) < per_mille
}

fn pick<'a, T>(rng: &mut ChaCha8Rng, items: &'a [T]) -> &'a T {
    let len = u32::try_from(items.len()).unwrap_or(u32::MAX);
    &items[rng.random_range(0..len) as usize]
}

/// An index drawn from relative weights (`weights` not all zero).
fn weighted(rng: &mut ChaCha8Rng, weights: &[u32]) -> usize {
    let total: u64 = weights.iter().map(|w| u64::from(*w)).sum();
    let mut draw = rng.random_range(0..total.max(1));
    for (i, w) in weights.iter().enumerate() {
        let w = u64::from(*w);
        if draw < w {
            return i;
        }
        draw -= w;
    }
    weights.len().saturating_sub(1)
}

/// A duration around `median_seconds` (log-normal, at least a minute), in whole seconds.
fn spread(rng: &mut ChaCha8Rng, median_seconds: u64) -> Duration {
    let draw = rng.random_range(0..1024u64);
    let (segment, within) = ((draw / 64) as usize, draw % 64);
    let (low, high) = (SPREAD[segment], SPREAD[segment + 1]);
    let per_mille = low + (high - low) * within / 64;
    let seconds = (median_seconds.saturating_mul(per_mille) / 1_000).max(60);
    Duration::seconds(i64::try_from(seconds).unwrap_or(i64::MAX / 2))
}

fn seconds(at: OffsetDateTime) -> Result<OffsetDateTime, DemoError> {
    OffsetDateTime::from_unix_timestamp(at.unix_timestamp()).map_err(|e| DemoError::Time(e.to_string()))
}

fn slug(text: &str) -> String {
    text.chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect()
}

fn staff_subject(id: StaffId) -> Subject {
    Subject { kind: PrincipalKind::Staff, id: PrincipalId(id.0) }
}

fn citizen_subject(id: CitizenId) -> Subject {
    Subject { kind: PrincipalKind::Citizen, id: PrincipalId(id.0) }
}

// ------------------------------------------------------------------ the generator

/// The members of one mission who handle one service type, with cumulative weights (some
/// members carry more of the load than others).
#[derive(Debug, Clone, Default)]
struct Handlers {
    members: Vec<(StaffId, u32)>,
}

impl Handlers {
    fn pick(&self, rng: &mut ChaCha8Rng) -> Option<StaffId> {
        let weights: Vec<u32> = self.members.iter().map(|(_, w)| *w).collect();
        if weights.is_empty() {
            return None;
        }
        self.members.get(weighted(rng, &weights)).map(|(id, _)| *id)
    }
}

/// The generated data set: the reference data, held, and the citizens and requests as
/// iterators of batches.
#[derive(Debug)]
pub struct Generator {
    plan: DemoPlan,
    missions: Vec<Mission>,
    service_types: Vec<ServiceType>,
    staff: Vec<StaffMember>,
    /// Relative size of each mission (its share of the requests).
    mission_weights: Vec<u32>,
    /// How many citizens each mission has.
    citizens_per_mission: Vec<u64>,
    /// [mission][service type]: who handles it.
    handlers: Vec<Vec<Handlers>>,
    /// The mission's local date at `now`.
    today: Vec<Date>,
    /// The start of the period, `now − days`.
    start: OffsetDateTime,
}

impl Generator {
    /// The reference data of `plan`; citizens and requests follow from [`Generator::citizens`]
    /// and [`Generator::requests`].
    pub fn new(plan: DemoPlan) -> Result<Generator, DemoError> {
        plan.validate().map_err(DemoError::Plan)?;
        let plan = DemoPlan { now: seconds(plan.now)?, ..plan };
        let start = plan.now - Duration::days(i64::from(plan.days));
        let mut rng = rng(plan.seed, STREAM_REFERENCE);

        let catalog_created = start - Duration::days(500);
        let service_types: Vec<ServiceType> = PROFILES
            .iter()
            .map(|p| {
                let id = ServiceTypeId(drawn_v7(&mut rng, catalog_created));
                NewServiceType {
                    code: format!("demo_s{}_{}", plan.seed, p.code),
                    name: p.name.to_owned(),
                    description: p.description.to_owned(),
                    fee: Money { amount_minor: p.fee_cents, currency: "EUR".to_owned() },
                    sla_days: p.sla_days,
                    retention_days: consular_domain::DEFAULT_RETENTION_DAYS,
                    required_documents: Vec::new(),
                    stages: p
                        .stages
                        .iter()
                        .map(|(name, _)| Stage { name: (*name).to_owned(), description: String::new() })
                        .collect(),
                    active: true,
                }
                .into_service_type(id, catalog_created)
            })
            .collect();

        let mut missions = Vec::new();
        let mut mission_weights = Vec::new();
        let mut staff = Vec::new();
        let mut handlers = Vec::new();
        let mut today = Vec::new();
        for index in 0..plan.missions as usize {
            let place = &PLACES[index % PLACES.len()];
            let round = index / PLACES.len();
            let created = start - Duration::days(400) + Duration::hours(rng.random_range(0..240i64));
            let kind = if place.embassy { "Embassy" } else { "Consulate General" };
            let suffix = if round == 0 { String::new() } else { format!(" ({})", round + 1) };
            let mission = NewMission {
                code: format!("{}-demo-s{}-{:03}", place.country.to_ascii_lowercase(), plan.seed, index + 1),
                name: format!("{kind} in {}{suffix}", place.city),
                country: place.country.to_owned(),
                city: place.city.to_owned(),
                timezone: place.timezone.to_owned(),
            }
            .into_mission(MissionId(drawn_v7(&mut rng, created)), created);
            today.push(
                local_date(&mission.timezone, plan.now)
                    .ok_or_else(|| DemoError::TimeZone(mission.timezone.clone()))?,
            );
            mission_weights.push(rng.random_range(2..=12u32));

            // 3 to 10 members; every service type has at least one handler.
            let count = rng.random_range(3..=10u32) as usize;
            let mut members: Vec<StaffMember> = Vec::with_capacity(count);
            let mut loads = Vec::with_capacity(count);
            for k in 0..count {
                let joined = created + Duration::days(rng.random_range(1..=300i64));
                let given = *pick(&mut rng, GIVEN_NAMES);
                let family = *pick(&mut rng, FAMILY_NAMES);
                let mut types: Vec<ServiceTypeId> = service_types
                    .iter()
                    .enumerate()
                    .filter(|(t, _)| t % count == k)
                    .map(|(_, s)| s.id)
                    .collect();
                for _ in 0..rng.random_range(1..=2u32) {
                    let extra = pick(&mut rng, &service_types).id;
                    if !types.contains(&extra) {
                        types.push(extra);
                    }
                }
                let member = NewStaffMember {
                    mission_id: mission.id,
                    name: format!("{given} {family}"),
                    email: format!(
                        "{}.{}.{}@{}.consular.example",
                        slug(given),
                        slug(family),
                        k + 1,
                        mission.code
                    ),
                    job_title: (*pick(&mut rng, JOB_TITLES)).to_owned(),
                    service_type_ids: types,
                }
                .into_staff_member(StaffId(drawn_v7(&mut rng, joined)), joined);
                loads.push(rng.random_range(1..=5u32));
                members.push(member);
            }
            handlers.push(
                service_types
                    .iter()
                    .map(|t| Handlers {
                        members: members
                            .iter()
                            .zip(&loads)
                            .filter(|(m, _)| m.service_type_ids.contains(&t.id))
                            .map(|(m, load)| (m.id, *load))
                            .collect(),
                    })
                    .collect(),
            );
            staff.extend(members);
            missions.push(mission);
        }

        // About five requests per citizen, at least one citizen per mission.
        let total: u128 = mission_weights.iter().map(|w| u128::from(*w)).sum();
        let citizens_per_mission = mission_weights
            .iter()
            .map(|w| {
                let expected = u128::from(plan.requests) * u128::from(*w) / total.max(1);
                u64::try_from(expected / 5).unwrap_or(u64::MAX).max(1)
            })
            .collect();
        Ok(Generator {
            plan,
            missions,
            service_types,
            staff,
            mission_weights,
            citizens_per_mission,
            handlers,
            today,
            start,
        })
    }

    /// The plan, `now` truncated to whole seconds.
    pub fn plan(&self) -> &DemoPlan {
        &self.plan
    }

    /// The period's start: `now − days`.
    pub fn start(&self) -> OffsetDateTime {
        self.start
    }

    pub fn missions(&self) -> &[Mission] {
        &self.missions
    }

    pub fn service_types(&self) -> &[ServiceType] {
        &self.service_types
    }

    /// Every mission's staff, mission by mission.
    pub fn staff(&self) -> &[StaffMember] {
        &self.staff
    }

    /// How many citizens [`Generator::citizens`] yields.
    pub fn citizen_count(&self) -> u64 {
        self.citizens_per_mission.iter().sum()
    }

    /// The citizens, mission by mission, in batches of at most `batch` (at least 1).
    pub fn citizens(&self, batch: usize) -> CitizenBatches<'_> {
        CitizenBatches {
            generator: self,
            rng: rng(self.plan.seed, STREAM_CITIZENS),
            mission: 0,
            index: 0,
            batch: batch.max(1),
        }
    }

    /// The requests with their histories, in batches of at most `batch` (at least 1). The
    /// sequence does not depend on `batch`.
    pub fn requests(&self, batch: usize) -> RequestBatches<'_> {
        RequestBatches {
            generator: self,
            rng: rng(self.plan.seed, STREAM_REQUESTS),
            produced: 0,
            batch: batch.max(1),
            stand_in: None,
        }
    }

    /// The id and creation instant of citizen `index` of mission `mission`: a function of
    /// the seed and the pair only (registered up to three years before the period).
    fn citizen_identity(&self, mission: usize, index: u64) -> (CitizenId, OffsetDateTime) {
        let h = mix(self.plan.seed ^ mix(((mission as u64) << 40) ^ index ^ 0x0c17_12e4));
        let back = 1 + (h % (3 * 365)) as i64;
        let created = self.start - Duration::days(back) + Duration::seconds(((h >> 20) % 86_400) as i64);
        let bytes = mix(h).to_le_bytes();
        let more = mix(h ^ 0x5eed).to_le_bytes();
        let random = [
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], more[0], more[1],
        ];
        (CitizenId(v7(created, random)), created)
    }

    fn citizen(&self, rng: &mut ChaCha8Rng, mission: usize, index: u64) -> Citizen {
        let (id, created) = self.citizen_identity(mission, index);
        let m = &self.missions[mission];
        let place = &PLACES[mission % PLACES.len()];
        let given = *pick(rng, GIVEN_NAMES);
        let family = *pick(rng, FAMILY_NAMES);
        let born = Date::from_julian_day(rng.random_range(2_431_457..=2_457_024i32)).unwrap_or(Date::MIN);
        let today = self.today[mission];
        let expiry = today.checked_add(Duration::days(rng.random_range(-200..=3_650i64))).unwrap_or(today);
        let phone = |rng: &mut ChaCha8Rng| {
            format!("+{}{}", place.calling_code, rng.random_range(200_000_000..=999_999_999u32))
        };
        let letters = [b'A' + rng.random_range(0..26u8), b'A' + rng.random_range(0..26u8)];
        let emergency_contact = chance(rng, 500).then(|| EmergencyContact {
            name: format!("{} {}", pick(rng, GIVEN_NAMES), family),
            phone: phone(rng),
            relationship: (*pick(rng, RELATIONSHIPS)).to_owned(),
        });
        NewCitizen {
            mission_id: m.id,
            given_name: given.to_owned(),
            family_name: family.to_owned(),
            date_of_birth: born,
            place_of_birth: (*pick(rng, BIRTH_PLACES)).to_owned(),
            nationality: HOME_COUNTRY.to_owned(),
            // Two letters and seven digits: the index makes it unique in the mission.
            passport_number: format!("{}{index:07}", String::from_utf8_lossy(&letters)),
            passport_expiry: expiry.max(born.next_day().unwrap_or(born)),
            email: format!("{}.{}{index}@example.org", slug(given), slug(family)),
            phone: phone(rng),
            address: Address {
                line1: format!("{} {}", rng.random_range(1..=250u32), pick(rng, STREETS)),
                line2: None,
                city: m.city.clone(),
                region: None,
                postal_code: Some(format!("{:05}", rng.random_range(1_000..=99_999u32))),
                country: m.country.clone(),
            },
            emergency_contact,
            preferred_language: if chance(rng, 700) { "fr" } else { "en" }.to_owned(),
            registration_status: RegistrationStatus::Active,
        }
        .into_citizen(id, created)
    }

    /// A submission instant in `mission`'s office pattern: a day of the period by weekday
    /// weight, a local hour by hour weight, before `now`.
    fn submitted_at(&self, rng: &mut ChaCha8Rng, mission: usize) -> Result<OffsetDateTime, DemoError> {
        let timezone = &self.missions[mission].timezone;
        for _ in 0..64 {
            let back = rng.random_range(0..self.plan.days);
            let day = self.today[mission] - Duration::days(i64::from(back));
            let weekday = day.weekday().number_days_from_monday() as usize;
            if rng.random_range(0..100u32) >= WEEKDAY_WEIGHTS[weekday] {
                continue;
            }
            let hour = weighted(rng, &HOUR_WEIGHTS) as i64;
            let (midnight, _) =
                local_day(timezone, day).ok_or_else(|| DemoError::TimeZone(timezone.clone()))?;
            let at = midnight + Duration::seconds(hour * 3_600 + rng.random_range(0..3_600i64));
            if at < self.plan.now && at > self.start {
                return Ok(at);
            }
        }
        // A weekend-heavy or very short period: anywhere in it.
        let span = (self.plan.now - self.start).whole_seconds().max(2);
        Ok(self.start + Duration::seconds(rng.random_range(1..span)))
    }

    fn request(&self, rng: &mut ChaCha8Rng, stand_in: &mut [Citizen]) -> Result<SeededRequest, DemoError> {
        let mission = weighted(rng, &self.mission_weights);
        let popularity: Vec<u32> = PROFILES.iter().map(|p| p.popularity).collect();
        let kind = weighted(rng, &popularity);
        let (profile, service_type) = (&PROFILES[kind], &self.service_types[kind]);
        let (citizen_id, _) =
            self.citizen_identity(mission, rng.random_range(0..self.citizens_per_mission[mission]));
        let handler = self.handlers[mission][kind].pick(rng);
        let unassigned = chance(rng, UNASSIGNED_PER_MILLE);
        let submitted = self.submitted_at(rng, mission)?;

        // `submit` reads the citizen's id and mission only: a stand-in per mission.
        let citizen = &mut stand_in[mission];
        citizen.id = citizen_id;
        let (mut request, first, _) = ServiceRequest::submit(
            &NewRequest::for_service(service_type.id),
            citizen,
            service_type,
            if unassigned { None } else { handler },
            citizen_subject(citizen_id),
            submitted,
        );
        // The domain draws a fresh id; a generated one is reproducible (and sorts by time).
        request.id = RequestId(drawn_v7(rng, submitted));
        let mut walk = Walk { request, history: vec![first], at: submitted, now: self.plan.now };
        walk.run(rng, profile, handler, citizen_id)?;
        Ok(SeededRequest { request: walk.request, history: walk.history })
    }

    fn stand_ins(&self) -> Vec<Citizen> {
        self.missions
            .iter()
            .map(|m| {
                NewCitizen {
                    mission_id: m.id,
                    given_name: String::new(),
                    family_name: String::new(),
                    date_of_birth: Date::MIN,
                    place_of_birth: String::new(),
                    nationality: HOME_COUNTRY.to_owned(),
                    passport_number: String::new(),
                    passport_expiry: Date::MIN,
                    email: String::new(),
                    phone: String::new(),
                    address: Address::default(),
                    emergency_contact: None,
                    preferred_language: String::new(),
                    registration_status: RegistrationStatus::Active,
                }
                .into_citizen(CitizenId(Uuid::nil()), self.start)
            })
            .collect()
    }
}

/// One request's way through the workflow: every step is the domain's `apply` (or
/// `change`), at an instant a drawn duration after the previous one; the walk stops, and
/// the request stays open, when the next step would be after `now`.
struct Walk {
    request: ServiceRequest,
    history: Vec<HistoryEntry>,
    at: OffsetDateTime,
    now: OffsetDateTime,
}

/// Whether the walk goes on.
type Step = Result<bool, DemoError>;

impl Walk {
    /// Waits a duration around `median` hours; false (the walk stops) past `now`.
    fn wait(&mut self, rng: &mut ChaCha8Rng, median_hours: u64, stalled: bool) -> bool {
        let factor = if stalled { 8 } else { 1 };
        self.at += spread(rng, median_hours * HOUR * factor);
        self.at < self.now
    }

    fn act(
        &mut self,
        role: Role,
        action: Action,
        actor: Subject,
        reason: Option<&str>,
    ) -> Result<(), DemoError> {
        let entry = self.request.apply(role, action, Some(actor), reason.map(str::to_owned), self.at)?;
        self.history.push(entry);
        Ok(())
    }

    fn run(
        &mut self,
        rng: &mut ChaCha8Rng,
        profile: &Profile,
        handler: Option<StaffId>,
        citizen: CitizenId,
    ) -> Result<(), DemoError> {
        let citizen = citizen_subject(citizen);
        // Nobody handles this type at the mission: the request waits.
        let Some(handler) = handler else { return Ok(()) };
        let staff = staff_subject(handler);
        let stalls = rng.random_range(0..1000u32) < STALLED_PER_MILLE;
        let stalled_stage = rng.random_range(0..=profile.stages.len() as u32) as usize;

        if chance(rng, EARLY_CANCEL_PER_MILLE) {
            if self.wait(rng, profile.pickup_hours / 2 + 1, false) {
                self.act(
                    Role::Citizen,
                    Action::To(RequestStatus::Cancelled),
                    citizen,
                    Some("No longer needed"),
                )?;
            }
            return Ok(());
        }
        if !self.wait(rng, profile.pickup_hours, stalls && stalled_stage == profile.stages.len()) {
            return Ok(());
        }
        // The first review; an unassigned request is taken by its handler at the same time.
        let change = RequestChange {
            action: Some(Action::To(RequestStatus::InReview)),
            reason: consular_domain::Reason::optional(Some("Application received and complete".to_owned()))
                .map_err(DemoError::Plan)?,
            assignee: self.request.assignee_id.is_none().then_some(Some(handler)),
        };
        let changed = self.request.change(Role::Staff, change, Some(staff.into()), self.at)?;
        self.history.extend(changed.entry);

        let last = profile.stages.len() - 1;
        for (stage, (_, median)) in profile.stages.iter().enumerate() {
            if stage == profile.decision_stage {
                if !self.decide(rng, profile, *median, stalls && stalled_stage == stage, staff, citizen)? {
                    return Ok(());
                }
                if stage == last {
                    // Decided at the last stage: completed soon after the approval.
                    if self.wait(rng, AFTER_DECISION_HOURS, false) {
                        self.act(Role::Staff, Action::To(RequestStatus::Completed), staff, Some("Issued"))?;
                    }
                    return Ok(());
                }
                if !self.wait(rng, AFTER_DECISION_HOURS, false) {
                    return Ok(());
                }
                self.act(Role::Staff, Action::AdvanceStage, staff, None)?;
                continue;
            }
            if !self.wait(rng, *median, stalls && stalled_stage == stage) {
                return Ok(());
            }
            if stage == last {
                self.act(
                    Role::Staff,
                    Action::To(RequestStatus::Completed),
                    staff,
                    Some("Issued and handed over"),
                )?;
            } else {
                self.act(Role::Staff, Action::AdvanceStage, staff, None)?;
            }
        }
        Ok(())
    }

    /// The work of the decision stage, an `action_required` round trip now and then, and
    /// the decision. True when approved (the walk goes on).
    fn decide(
        &mut self,
        rng: &mut ChaCha8Rng,
        profile: &Profile,
        median: u64,
        stalled: bool,
        staff: Subject,
        citizen: Subject,
    ) -> Step {
        if chance(rng, profile.action_per_mille) {
            if !self.wait(rng, median / 2 + 1, false) {
                return Ok(false);
            }
            self.act(
                Role::Staff,
                Action::To(RequestStatus::ActionRequired),
                staff,
                Some("A supporting document is missing"),
            )?;
            if !self.wait(rng, CITIZEN_RESPONSE_HOURS, false) {
                return Ok(false);
            }
            if chance(rng, ACTION_CANCEL_PER_MILLE) {
                self.act(Role::Citizen, Action::To(RequestStatus::Cancelled), citizen, None)?;
                return Ok(false);
            }
            self.act(Role::Staff, Action::To(RequestStatus::InReview), staff, Some("Document received"))?;
        }
        if !self.wait(rng, median, stalled) {
            return Ok(false);
        }
        if chance(rng, STAFF_CANCEL_PER_MILLE) {
            self.act(
                Role::Staff,
                Action::To(RequestStatus::Cancelled),
                staff,
                Some("Duplicate application"),
            )?;
            return Ok(false);
        }
        if chance(rng, profile.reject_per_mille) {
            self.act(
                Role::Staff,
                Action::To(RequestStatus::Rejected),
                staff,
                Some("The conditions are not met"),
            )?;
            return Ok(false);
        }
        self.act(Role::Staff, Action::To(RequestStatus::Approved), staff, Some("Approved"))?;
        Ok(true)
    }
}

/// The citizens of [`Generator::citizens`].
#[derive(Debug)]
pub struct CitizenBatches<'a> {
    generator: &'a Generator,
    rng: ChaCha8Rng,
    mission: usize,
    index: u64,
    batch: usize,
}

impl Iterator for CitizenBatches<'_> {
    type Item = Vec<Citizen>;

    fn next(&mut self) -> Option<Vec<Citizen>> {
        let g = self.generator;
        let mut batch = Vec::with_capacity(self.batch.min(PREALLOCATED));
        while batch.len() < self.batch && self.mission < g.missions.len() {
            if self.index >= g.citizens_per_mission[self.mission] {
                self.mission += 1;
                self.index = 0;
                continue;
            }
            batch.push(g.citizen(&mut self.rng, self.mission, self.index));
            self.index += 1;
        }
        (!batch.is_empty()).then_some(batch)
    }
}

/// The requests of [`Generator::requests`].
#[derive(Debug)]
pub struct RequestBatches<'a> {
    generator: &'a Generator,
    rng: ChaCha8Rng,
    produced: u64,
    batch: usize,
    stand_in: Option<Vec<Citizen>>,
}

impl Iterator for RequestBatches<'_> {
    type Item = Result<Vec<SeededRequest>, DemoError>;

    fn next(&mut self) -> Option<Self::Item> {
        let g = self.generator;
        let left = g.plan.requests - self.produced;
        if left == 0 {
            return None;
        }
        let size = left.min(self.batch as u64);
        let stand_in = self.stand_in.get_or_insert_with(|| g.stand_ins());
        let mut batch = Vec::with_capacity((size as usize).min(PREALLOCATED));
        for _ in 0..size {
            match g.request(&mut self.rng, stand_in) {
                Ok(request) => batch.push(request),
                Err(error) => {
                    // Stop for good: the sequence cannot go on consistently.
                    self.produced = g.plan.requests;
                    return Some(Err(error));
                }
            }
        }
        self.produced += size;
        Some(Ok(batch))
    }
}
