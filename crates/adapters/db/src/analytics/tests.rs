//! The projection's helpers, and the backfill's text against the migrations.

use super::reads::migration_statement;
use super::*;
use crate::shared::sql_types::{DbTime, DbUuid};
use consular_domain::{MissionId, RequestStatus, ServiceType, fixtures};
use time::OffsetDateTime;
use time::macros::datetime;

const T0: OffsetDateTime = datetime!(2026-03-01 09:00 UTC);

/// The backfills the adapter runs again are found in both trees' migrations: whole
/// statements, from their `INSERT` to their `;`.
#[test]
fn the_backfills_are_the_migrations_statements() {
    let statements = [
        <crate::pg::Conn as AnalyticsReads>::backfill_stage_spells(),
        <crate::sqlite::Conn as AnalyticsReads>::backfill_stage_spells(),
        <crate::pg::Conn as AnalyticsReads>::rebuild_spell_days(),
        <crate::sqlite::Conn as AnalyticsReads>::rebuild_spell_days(),
    ];
    for statement in statements {
        let statement = statement.unwrap();
        assert!(statement.starts_with("INSERT INTO "), "{statement}");
        assert!(statement.ends_with(';') && statement.matches(';').count() == 1, "{statement}");
    }
    assert!(
        migration_statement("-- INSERT INTO x;\nSELECT 1;", "INSERT INTO x").is_err(),
        "not in a comment"
    );
}

#[test]
fn spell_items_are_parsed_and_removed_one_occurrence_at_a_time() {
    let items = "1772355600000000:60,1772355600000000:60,-5:0,1772359200123456:3600";
    let parsed: Vec<(i64, i64)> = SpellItems::parse(items).collect::<Result<_, _>>().unwrap();
    assert_eq!(
        parsed,
        [(1_772_355_600_000_000, 60), (1_772_355_600_000_000, 60), (-5, 0), (1_772_359_200_123_456, 3600)]
    );
    assert_eq!(SpellItems::parse("").count(), 0);
    let extremes = format!("{}:{}", i64::MIN, i64::MAX);
    assert_eq!(SpellItems::parse(&extremes).collect::<Result<Vec<_>, _>>().unwrap(), [(i64::MIN, i64::MAX)]);
    for bad in ["12", "a:1", "1:", "1:2:3", ":1", "-:1", "1:2,,3:4", "1 :2", "9223372036854775808:0"] {
        assert!(SpellItems::parse(bad).any(|item| item.is_err()), "{bad}");
    }
    let removed = ["1772355600000000:60".to_owned(), "-5:0".to_owned(), "9:9".to_owned()];
    assert_eq!(SpellItems::without(items, &removed), "1772355600000000:60,1772359200123456:3600");
    assert_eq!(SpellItems::without("-5:0", &removed), "");
}

#[test]
fn a_spell_goes_to_the_utc_day_it_ended_in() {
    let spell = SpellRow {
        request_id: DbUuid(uuid::Uuid::nil()),
        ordinal: 0,
        mission_id: DbUuid(uuid::Uuid::nil()),
        service_type_id: DbUuid(uuid::Uuid::max()),
        stage: 2,
        entered_at: DbTime(datetime!(2026-03-01 23:00 -02:00)),
        left_at: DbTime(datetime!(2026-03-01 23:30:00.000_001_999 -02:00)),
        seconds: 1800,
    };
    let ((day, service_type, stage), item) = SpellItems::of(&spell);
    assert_eq!((day, service_type, stage), (time::macros::date!(2026 - 03 - 02), uuid::Uuid::max(), 2));
    assert_eq!(item, "1772415000000001:1800");
}

fn entry(minutes: i64, to_status: RequestStatus, from_stage: Option<usize>, to_stage: usize) -> HistoryEntry {
    HistoryEntry {
        from_stage,
        ..fixtures::history_entry(T0 + time::Duration::minutes(minutes), to_status, to_stage)
    }
}

fn request(closed_at: Option<OffsetDateTime>) -> ServiceRequest {
    let service_type = ServiceType { stages: Vec::new(), ..fixtures::service_type(T0) };
    ServiceRequest {
        status: if closed_at.is_some() { RequestStatus::Completed } else { RequestStatus::InReview },
        sla_due_at: T0 + time::Duration::days(20),
        closed_at,
        ..fixtures::service_request(MissionId::new(), consular_domain::CitizenId::new(), &service_type, T0)
    }
}

#[test]
fn stage_changes_and_closings_may_end_a_spell_other_entries_do_not() {
    use RequestStatus::*;
    assert!(may_end_a_spell(&entry(0, Submitted, None, 0)));
    assert!(may_end_a_spell(&entry(1, InReview, Some(0), 1)));
    assert!(may_end_a_spell(&entry(1, Cancelled, Some(1), 1)));
    assert!(!may_end_a_spell(&entry(1, ActionRequired, Some(1), 1)));
}

/// The rows each write would store, as `record_spells` applies them.
fn apply(stored: &mut Vec<SpellRow>, request: &ServiceRequest, history: &[HistoryEntry]) -> SpellChange {
    let change = SpellChange::of(request, history, stored).unwrap();
    match &change {
        SpellChange::Append(rows) => stored.extend(rows.iter().cloned()),
        SpellChange::Replace(rows) => *stored = rows.clone(),
    }
    change
}

fn spells(rows: &[SpellRow]) -> Vec<(i32, i32, i64)> {
    rows.iter().map(|r| (r.ordinal, r.stage, r.seconds)).collect()
}

#[test]
fn a_new_request_has_no_spell_and_each_stage_change_appends_one() {
    use RequestStatus::*;
    let open = request(None);
    assert_eq!(SpellRow::of_history(&open, &[entry(0, Submitted, None, 0)]).unwrap(), vec![]);

    let mut stored = Vec::new();
    let mut history = vec![entry(0, Submitted, None, 0), entry(5, InReview, Some(0), 0)];
    assert_eq!(apply(&mut stored, &open, &history), SpellChange::Append(vec![]));

    history.push(entry(65, InReview, Some(0), 1));
    let SpellChange::Append(rows) = apply(&mut stored, &open, &history) else { panic!() };
    assert_eq!(spells(&rows), vec![(0, 0, 3900)]);
    assert_eq!(rows[0].mission_id, DbUuid(open.mission_id.0));

    // Completing in the stage it moves to ends the old spell and a zero-length one.
    let closed = ServiceRequest {
        status: Completed,
        closed_at: Some(T0 + time::Duration::minutes(70)),
        ..open.clone()
    };
    history.push(entry(70, Completed, Some(1), 2));
    let SpellChange::Append(rows) = apply(&mut stored, &closed, &history) else { panic!() };
    assert_eq!(spells(&rows), vec![(1, 1, 300), (2, 2, 0)]);
    assert_eq!(spells(&stored), vec![(0, 0, 3900), (1, 1, 300), (2, 2, 0)]);
}

#[test]
fn an_entry_dated_before_earlier_ones_rewrites_the_requests_spells() {
    use RequestStatus::*;
    let open = request(None);
    let mut stored = Vec::new();
    let mut history = vec![entry(0, Submitted, None, 0), entry(60, InReview, Some(0), 1)];
    apply(&mut stored, &open, &history);
    assert_eq!(spells(&stored), vec![(0, 0, 3600)]);
    history.push(entry(30, InReview, Some(0), 2));
    let SpellChange::Replace(rows) = apply(&mut stored, &open, &history) else { panic!() };
    assert_eq!(spells(&rows), vec![(0, 0, 1800), (1, 2, 1800)]);
}

#[test]
fn rows_the_definition_does_not_give_are_replaced() {
    use RequestStatus::*;
    let open = request(None);
    let history = vec![entry(0, Submitted, None, 0), entry(60, InReview, Some(0), 1)];
    let mut stored = SpellRow::of_history(&open, &history).unwrap();
    stored[0].seconds += 1;
    let SpellChange::Replace(rows) = apply(&mut stored, &open, &history) else { panic!() };
    assert_eq!(spells(&rows), vec![(0, 0, 3600)]);
}
