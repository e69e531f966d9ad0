//! The definitions of docs/analytics.md, table by table: range validation, buckets across
//! daylight-saving changes (Europe/Paris, America/Santiago) and a half-hour offset
//! (Asia/Kolkata), ISO weeks across a year boundary, clipped months, percentiles of 0 to
//! n values, rates with a zero denominator, and a request's state at an instant.

use super::*;
use time::UtcOffset;
use time::macros::{date, datetime};

const TODAY: Date = date!(2026 - 06 - 15);

fn period(from: Date, to: Date, granularity: Granularity) -> Period {
    Period { from, to, granularity }
}

/// The pointers and codes of a failure, in order.
fn failures(errors: ValidationErrors) -> Vec<(String, String)> {
    errors.0.into_iter().map(|e| (e.pointer, e.code)).collect()
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected.iter().map(|(p, c)| ((*p).to_owned(), (*c).to_owned())).collect()
}

#[test]
fn granularity_is_text() {
    for (granularity, text) in
        [(Granularity::Day, "day"), (Granularity::Week, "week"), (Granularity::Month, "month")]
    {
        assert_eq!(granularity.as_str(), text);
        assert_eq!(text.parse::<Granularity>(), Ok(granularity));
    }
    assert!("hour".parse::<Granularity>().is_err());
    assert_eq!(Granularity::default(), Granularity::Day);
}

#[test]
fn period_rules() {
    use Granularity::{Day, Month, Week};
    let long_ago = TODAY - Duration::days(MAX_DAYS - 1);
    type Row = (Date, Date, Granularity, &'static [(&'static str, &'static str)]);
    let table: &[Row] = &[
        (TODAY, TODAY, Day, &[]),
        (date!(2025 - 06 - 15), TODAY, Day, &[]),
        (date!(2025 - 06 - 14), TODAY, Day, &[("/granularity", "too_fine")]),
        (date!(2025 - 06 - 14), TODAY, Week, &[]),
        (long_ago, TODAY, Month, &[]),
        (long_ago - Duration::days(1), TODAY, Month, &[("/to", "out_of_range")]),
        (long_ago - Duration::days(1), TODAY, Day, &[("/to", "out_of_range")]),
        (date!(2026 - 06 - 10), date!(2026 - 06 - 09), Day, &[("/to", "before_from")]),
        (date!(2026 - 06 - 10), date!(2026 - 06 - 16), Day, &[("/to", "in_future")]),
        (date!(2026 - 06 - 16), date!(2026 - 06 - 20), Week, &[("/from", "in_future"), ("/to", "in_future")]),
        (date!(2026 - 06 - 17), date!(2026 - 06 - 16), Day, &[("/from", "in_future"), ("/to", "in_future")]),
    ];
    for (from, to, granularity, expected) in table {
        let got = Period::new(*from, *to, *granularity, TODAY);
        match got {
            Ok(p) => {
                assert!(expected.is_empty(), "{from}..{to} {granularity}: accepted");
                assert_eq!((p.from(), p.to(), p.granularity()), (*from, *to, *granularity));
            }
            Err(errors) => assert_eq!(failures(errors), pairs(expected), "{from}..{to} {granularity}"),
        }
    }
    assert_eq!(period(date!(2025 - 06 - 15), TODAY, Day).days(), 366);
}

#[test]
fn parsing_a_query_with_its_defaults() {
    use Granularity::{Day, Month, Week};
    type Row<'a> = (
        Option<&'a str>,
        Option<&'a str>,
        Option<&'a str>,
        Result<(Date, Date, Granularity), &'a [(&'a str, &'a str)]>,
    );
    let table: &[Row] = &[
        (None, None, None, Ok((date!(2026 - 05 - 17), TODAY, Day))),
        (Some("2026-06-01"), None, Some("week"), Ok((date!(2026 - 06 - 01), TODAY, Week))),
        (None, Some("2026-03-31"), None, Ok((date!(2026 - 03 - 02), date!(2026 - 03 - 31), Day))),
        (
            Some("2025-01-01"),
            Some("2025-12-31"),
            Some("month"),
            Ok((date!(2025 - 01 - 01), date!(2025 - 12 - 31), Month)),
        ),
        (Some("2026-3-5"), None, None, Err(&[("/from", "invalid")])),
        (Some("2026-02-30"), None, None, Err(&[("/from", "invalid")])),
        (Some(" 2026-06-01"), None, None, Err(&[("/from", "invalid")])),
        (Some("2026-06-01T00:00:00Z"), None, None, Err(&[("/from", "invalid")])),
        (
            Some("yesterday"),
            Some("x"),
            Some("hour"),
            Err(&[("/from", "invalid"), ("/granularity", "invalid"), ("/to", "invalid")]),
        ),
        (None, None, Some("Day"), Err(&[("/granularity", "invalid")])),
        // A `to` left out is today: a later `from` is the only failure.
        (Some("2026-06-20"), None, None, Err(&[("/from", "in_future")])),
        (None, Some("2026-06-16"), None, Err(&[("/to", "in_future")])),
        (Some("2025-01-01"), None, None, Err(&[("/granularity", "too_fine")])),
        (Some("2020-01-01"), None, Some("month"), Err(&[("/to", "out_of_range")])),
        (
            Some("2020-01-01"),
            Some("2026-01-01"),
            Some("hour"),
            Err(&[("/granularity", "invalid"), ("/to", "out_of_range")]),
        ),
        (Some("2026-06-02"), Some("2026-06-01"), Some("day"), Err(&[("/to", "before_from")])),
    ];
    for (from, to, granularity, expected) in table {
        let got = Period::parse(*from, *to, *granularity, TODAY)
            .map(|p| (p.from(), p.to(), p.granularity()))
            .map_err(failures);
        assert_eq!(got, expected.map_err(pairs), "{from:?} {to:?} {granularity:?}");
    }
}

/// A bucket as a line: label, first and last day, start and end instants (UTC).
fn show(b: &Bucket) -> String {
    let instant = format_description!("[year]-[month]-[day]T[hour]:[minute]Z");
    let (starts_at, ends_at) = (b.starts_at.to_offset(UtcOffset::UTC), b.ends_at.to_offset(UtcOffset::UTC));
    format!(
        "{} {}..{} {}..{}",
        b.label,
        b.first_day,
        b.last_day,
        starts_at.format(instant).unwrap(),
        ends_at.format(instant).unwrap()
    )
}

fn assert_buckets(zone: &str, p: Period, expected: &[&str]) {
    let got: Vec<String> = buckets(&p, zone).unwrap().iter().map(show).collect();
    assert_eq!(got, expected, "{zone} {}..{} {}", p.from, p.to, p.granularity);
}

#[test]
fn days_across_daylight_saving_changes() {
    use Granularity::Day;
    // Paris springs forward on 2026-03-29 (23 hours) and falls back on 2026-10-25 (25 hours).
    assert_buckets(
        "Europe/Paris",
        period(date!(2026 - 03 - 28), date!(2026 - 03 - 30), Day),
        &[
            "2026-03-28 2026-03-28..2026-03-28 2026-03-27T23:00Z..2026-03-28T23:00Z",
            "2026-03-29 2026-03-29..2026-03-29 2026-03-28T23:00Z..2026-03-29T22:00Z",
            "2026-03-30 2026-03-30..2026-03-30 2026-03-29T22:00Z..2026-03-30T22:00Z",
        ],
    );
    assert_buckets(
        "Europe/Paris",
        period(date!(2026 - 10 - 25), date!(2026 - 10 - 25), Day),
        &["2026-10-25 2026-10-25..2026-10-25 2026-10-24T22:00Z..2026-10-25T23:00Z"],
    );
    // UTC+05:30, no change.
    assert_buckets(
        "Asia/Kolkata",
        period(date!(2026 - 03 - 01), date!(2026 - 03 - 02), Day),
        &[
            "2026-03-01 2026-03-01..2026-03-01 2026-02-28T18:30Z..2026-03-01T18:30Z",
            "2026-03-02 2026-03-02..2026-03-02 2026-03-01T18:30Z..2026-03-02T18:30Z",
        ],
    );
    // Santiago skips midnight on 2026-09-06: that day starts at 01:00 (-03) and lasts 23 hours.
    assert_buckets(
        "America/Santiago",
        period(date!(2026 - 09 - 05), date!(2026 - 09 - 06), Day),
        &[
            "2026-09-05 2026-09-05..2026-09-05 2026-09-05T04:00Z..2026-09-06T04:00Z",
            "2026-09-06 2026-09-06..2026-09-06 2026-09-06T04:00Z..2026-09-07T03:00Z",
        ],
    );
}

#[test]
fn iso_weeks_across_year_boundaries() {
    use Granularity::Week;
    // 2024-12-30 is the Monday of 2025-W01; both ends clipped.
    assert_buckets(
        "UTC",
        period(date!(2024 - 12 - 25), date!(2025 - 01 - 06), Week),
        &[
            "2024-W52 2024-12-25..2024-12-29 2024-12-25T00:00Z..2024-12-30T00:00Z",
            "2025-W01 2024-12-30..2025-01-05 2024-12-30T00:00Z..2025-01-06T00:00Z",
            "2025-W02 2025-01-06..2025-01-06 2025-01-06T00:00Z..2025-01-07T00:00Z",
        ],
    );
    // 2026 has a week 53, which ends on Sunday 2027-01-03.
    assert_buckets(
        "Europe/Paris",
        period(date!(2026 - 12 - 30), date!(2027 - 01 - 05), Week),
        &[
            "2026-W53 2026-12-30..2027-01-03 2026-12-29T23:00Z..2027-01-03T23:00Z",
            "2027-W01 2027-01-04..2027-01-05 2027-01-03T23:00Z..2027-01-05T23:00Z",
        ],
    );
    // The week of the spring change lasts 167 hours.
    assert_buckets(
        "Europe/Paris",
        period(date!(2026 - 03 - 23), date!(2026 - 03 - 29), Week),
        &["2026-W13 2026-03-23..2026-03-29 2026-03-22T23:00Z..2026-03-29T22:00Z"],
    );
}

#[test]
fn months_clipped_at_both_ends() {
    use Granularity::Month;
    assert_buckets(
        "Europe/Paris",
        period(date!(2026 - 01 - 15), date!(2026 - 04 - 10), Month),
        &[
            "2026-01 2026-01-15..2026-01-31 2026-01-14T23:00Z..2026-01-31T23:00Z",
            "2026-02 2026-02-01..2026-02-28 2026-01-31T23:00Z..2026-02-28T23:00Z",
            // 743 hours: the spring change.
            "2026-03 2026-03-01..2026-03-31 2026-02-28T23:00Z..2026-03-31T22:00Z",
            "2026-04 2026-04-01..2026-04-10 2026-03-31T22:00Z..2026-04-10T22:00Z",
        ],
    );
    // Across a year, with a leap February, one day at each end.
    assert_buckets(
        "UTC",
        period(date!(2023 - 12 - 31), date!(2024 - 03 - 01), Month),
        &[
            "2023-12 2023-12-31..2023-12-31 2023-12-31T00:00Z..2024-01-01T00:00Z",
            "2024-01 2024-01-01..2024-01-31 2024-01-01T00:00Z..2024-02-01T00:00Z",
            "2024-02 2024-02-01..2024-02-29 2024-02-01T00:00Z..2024-03-01T00:00Z",
            "2024-03 2024-03-01..2024-03-01 2024-03-01T00:00Z..2024-03-02T00:00Z",
        ],
    );
    // One day, in a month.
    assert_buckets(
        "Asia/Kolkata",
        period(date!(2026 - 02 - 14), date!(2026 - 02 - 14), Month),
        &["2026-02 2026-02-14..2026-02-14 2026-02-13T18:30Z..2026-02-14T18:30Z"],
    );
}

#[test]
fn buckets_are_contiguous_and_exactly_the_period() {
    let zones =
        ["UTC", "Europe/Paris", "Asia/Kolkata", "America/New_York", "America/Santiago", "Pacific/Chatham"];
    let ranges = [
        (date!(2025 - 12 - 20), date!(2026 - 01 - 10)),
        (date!(2026 - 03 - 01), date!(2026 - 04 - 30)),
        (date!(2025 - 06 - 15), TODAY),
        (date!(2021 - 06 - 16), TODAY),
    ];
    for zone in zones {
        for (from, to) in ranges {
            for granularity in Granularity::ALL {
                let Ok(p) = Period::new(from, to, granularity, TODAY) else { continue };
                let all = buckets(&p, zone).unwrap();
                let (start, end) = p.instants(zone).unwrap();
                assert_eq!(all.first().map(|b| (b.first_day, b.starts_at)), Some((from, start)));
                assert_eq!(all.last().map(|b| (b.last_day, b.ends_at)), Some((to, end)));
                for pair in all.windows(2) {
                    assert_eq!(pair[0].ends_at, pair[1].starts_at, "{zone} {granularity} {}", pair[0].label);
                    assert_eq!(pair[0].last_day.next_day(), Some(pair[1].first_day));
                    assert!(pair[0].label < pair[1].label);
                }
                for b in &all {
                    let hours = (b.ends_at - b.starts_at).whole_minutes() as f64 / 60.0;
                    let days = span(b.first_day, b.last_day) as f64;
                    assert!((hours - 24.0 * days).abs() <= 1.0, "{zone} {} lasts {hours} h", b.label);
                }
            }
        }
    }
}

#[test]
fn unknown_zones_make_no_buckets() {
    let p = period(TODAY, TODAY, Granularity::Day);
    assert_eq!(buckets(&p, "Mars/Olympus_Mons"), None);
    assert_eq!(p.instants(""), None);
    assert_eq!(local_date("Europe/Pariss", datetime!(2026-01-01 00:00 UTC)), None);
}

#[test]
fn an_instant_on_a_boundary_is_in_the_later_bucket() {
    let all =
        buckets(&period(date!(2026 - 03 - 28), date!(2026 - 03 - 30), Granularity::Day), "Europe/Paris")
            .unwrap();
    let table = [
        (datetime!(2026-03-27 22:59:59.999 UTC), None),
        (datetime!(2026-03-27 23:00 UTC), Some(0)),
        (datetime!(2026-03-28 22:59:59 UTC), Some(0)),
        (datetime!(2026-03-28 23:00 UTC), Some(1)),
        (datetime!(2026-03-29 21:59 UTC), Some(1)),
        (datetime!(2026-03-29 22:00 UTC), Some(2)),
        (datetime!(2026-03-30 21:59:59.999999 UTC), Some(2)),
        (datetime!(2026-03-30 22:00 UTC), None),
    ];
    for (instant, expected) in table {
        assert_eq!(bucket_index(&all, instant), expected, "{instant}");
        assert_eq!(all.iter().position(|b| b.contains(instant)), expected, "{instant}");
    }
    assert_eq!(bucket_index(&[], datetime!(2026-03-28 12:00 UTC)), None);
}

#[test]
fn local_dates() {
    let table = [
        ("Europe/Paris", datetime!(2026-03-28 22:59 UTC), date!(2026 - 03 - 28)),
        ("Europe/Paris", datetime!(2026-03-28 23:00 UTC), date!(2026 - 03 - 29)),
        ("Asia/Kolkata", datetime!(2026-03-01 18:29:59 UTC), date!(2026 - 03 - 01)),
        ("Asia/Kolkata", datetime!(2026-03-01 18:30 UTC), date!(2026 - 03 - 02)),
        ("America/New_York", datetime!(2026-01-01 04:59 UTC), date!(2025 - 12 - 31)),
        ("UTC", datetime!(2026-01-01 00:00 UTC), date!(2026 - 01 - 01)),
    ];
    for (zone, instant, expected) in table {
        assert_eq!(local_date(zone, instant), Some(expected), "{zone} {instant}");
    }
}

fn close_to(got: Option<f64>, expected: Option<f64>) -> bool {
    match (got, expected) {
        (Some(g), Some(e)) => (g - e).abs() < 1e-9,
        (None, None) => true,
        _ => false,
    }
}

#[test]
fn percentiles_interpolate_like_percentile_cont() {
    let month = 30 * 86_400;
    let table: &[(&[i64], f64, Option<f64>)] = &[
        (&[], 0.5, None),
        (&[], 0.0, None),
        (&[7], 0.0, Some(7.0)),
        (&[7], 0.5, Some(7.0)),
        (&[7], 0.9, Some(7.0)),
        (&[7], 1.0, Some(7.0)),
        (&[1, 3], 0.0, Some(1.0)),
        (&[1, 3], 0.5, Some(2.0)),
        (&[1, 3], 0.9, Some(2.8)),
        (&[1, 3], 1.0, Some(3.0)),
        (&[1, 2, 10], 0.5, Some(2.0)),
        (&[1, 2, 10], 0.9, Some(8.4)),
        (&[1, 2, 3, 4], 0.5, Some(2.5)),
        (&[1, 2, 3, 4], 0.25, Some(1.75)),
        (&[1, 2, 3, 4], 0.9, Some(3.7)),
        (&[5, 5, 5, 5, 5], 0.9, Some(5.0)),
        (&[0, 86_400, 172_800, 259_200, month], 0.5, Some(172_800.0)),
        (&[0, 86_400, 172_800, 259_200, month], 0.9, Some(1_658_880.0)),
        (&[1, 2, 3], -0.1, None),
        (&[1, 2, 3], 1.1, None),
        (&[1, 2, 3], f64::NAN, None),
    ];
    for (sorted, p, expected) in table {
        let got = percentile(sorted, *p);
        assert!(close_to(got, *expected), "percentile({sorted:?}, {p}) = {got:?}, expected {expected:?}");
    }
    // The same floating-point steps as PostgreSQL's: exact where the inputs allow it.
    assert_eq!(percentile(&[1, 2, 3, 4], 0.5), Some(2.5));
    assert_eq!(percentile(&[10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110], 0.9), Some(100.0));
}

#[test]
fn medians() {
    let table: &[(&[i64], Option<f64>)] = &[
        (&[], None),
        (&[4], Some(4.0)),
        (&[1, 9], Some(5.0)),
        (&[1, 2, 9], Some(2.0)),
        (&[1, 2, 4, 9], Some(3.0)),
        (&[2, 3], Some(2.5)),
    ];
    for (sorted, expected) in table {
        assert_eq!(median(sorted), *expected, "{sorted:?}");
    }
}

#[test]
fn summaries_sort_their_durations() {
    let summary = DurationSummary::of(vec![30, 10, 20]);
    assert_eq!((summary.count, summary.median_seconds), (3, Some(20.0)));
    assert!(close_to(summary.p90_seconds, Some(28.0)));
    assert_eq!(
        DurationSummary::of(Vec::new()),
        DurationSummary { count: 0, median_seconds: None, p90_seconds: None }
    );
}

#[test]
fn rates_are_null_without_a_denominator() {
    let table = [
        (0, 0, None),
        (5, 0, None),
        (0, 4, Some(0.0)),
        (1, 4, Some(0.25)),
        (3, 3, Some(1.0)),
        (2, 3, Some(2.0 / 3.0)),
    ];
    for (numerator, denominator, expected) in table {
        assert_eq!(rate(numerator, denominator), expected, "{numerator}/{denominator}");
    }
}

#[test]
fn durations_are_whole_seconds_between_whole_second_instants() {
    let table = [
        (datetime!(2026-03-01 10:00:00.9 UTC), datetime!(2026-03-01 10:00:01.1 UTC), 1),
        (datetime!(2026-03-01 10:00:00.1 UTC), datetime!(2026-03-01 10:00:00.9 UTC), 0),
        (datetime!(2026-03-01 10:00 UTC), datetime!(2026-03-03 10:00 UTC), 172_800),
        // Across the spring change in Paris: elapsed time, not wall-clock time.
        (datetime!(2026-03-29 00:00 +01:00), datetime!(2026-03-30 00:00 +02:00), 82_800),
        (datetime!(2026-03-01 10:00 UTC), datetime!(2026-03-01 10:00 UTC), 0),
    ];
    for (start, end, expected) in table {
        assert_eq!(seconds_between(start, end), expected, "{start} → {end}");
    }
}

#[test]
fn sla_is_met_on_the_due_instant() {
    let due = datetime!(2026-03-10 12:00 UTC);
    assert!(closed_on_time(datetime!(2026-03-10 11:59:59 UTC), due));
    assert!(closed_on_time(due, due));
    assert!(!closed_on_time(datetime!(2026-03-10 12:00:00.000001 UTC), due));
}

#[test]
fn backlog_at_the_end_of_each_bucket() {
    let all =
        buckets(&period(date!(2026 - 03 - 01), date!(2026 - 03 - 03), Granularity::Day), "UTC").unwrap();
    let (d1, d2) = (datetime!(2026-03-02 00:00 UTC), datetime!(2026-03-03 00:00 UTC));
    // (submitted_at, closed_at)
    let requests = [
        (datetime!(2026-02-20 09:00 UTC), None), // open throughout
        (datetime!(2026-02-20 09:00 UTC), Some(datetime!(2026-03-01 09:00 UTC))),
        (datetime!(2026-03-01 09:00 UTC), Some(d1)), // closed on the boundary: open at d1
        (d1, None),                                  // submitted on the boundary: not open at d1
        (datetime!(2026-03-02 10:00 UTC), Some(datetime!(2026-03-02 11:00 UTC))),
        (datetime!(2026-03-02 10:00 UTC), Some(d2)),
        (datetime!(2026-03-03 23:59 UTC), None),
    ];
    let backlog: Vec<usize> =
        all.iter().map(|b| requests.iter().filter(|(s, c)| open_at(*s, *c, b.ends_at)).count()).collect();
    assert_eq!(backlog, [2, 3, 3]);
    let count =
        |b: &Bucket, instant: fn(&(OffsetDateTime, Option<OffsetDateTime>)) -> Option<OffsetDateTime>| {
            requests.iter().filter_map(instant).filter(|t| b.contains(*t)).count() as i64
        };
    let opened_before = requests.iter().filter(|(s, c)| open_at(*s, *c, all[0].starts_at)).count() as i64;
    let mut expected = opened_before;
    for (b, backlog) in all.iter().zip(&backlog) {
        expected += count(b, |r| Some(r.0)) - count(b, |r| r.1);
        assert_eq!(*backlog as i64, expected, "{}", b.label);
    }
}

fn entry(at: OffsetDateTime, to_status: RequestStatus, to_stage: usize) -> HistoryEntry {
    crate::fixtures::history_entry(at, to_status, to_stage)
}

/// A request through three stages, with a wait for the citizen in stage 1.
fn completed_history() -> Vec<HistoryEntry> {
    use RequestStatus::*;
    vec![
        entry(datetime!(2026-03-01 09:00 UTC), Submitted, 0),
        entry(datetime!(2026-03-02 09:00 UTC), InReview, 0),
        entry(datetime!(2026-03-03 09:00 UTC), InReview, 1),
        entry(datetime!(2026-03-04 09:00 UTC), ActionRequired, 1),
        entry(datetime!(2026-03-06 09:00 UTC), InReview, 1),
        entry(datetime!(2026-03-07 09:00 UTC), InReview, 2),
        entry(datetime!(2026-03-08 09:00 UTC), Approved, 2),
        entry(datetime!(2026-03-09 09:00 UTC), Completed, 2),
    ]
}

#[test]
fn status_at_an_instant() {
    use RequestStatus::*;
    let history = completed_history();
    let table = [
        (datetime!(2026-03-01 09:00 UTC), None),
        (datetime!(2026-03-01 09:00:01 UTC), Some(Submitted)),
        (datetime!(2026-03-04 09:00 UTC), Some(InReview)),
        (datetime!(2026-03-05 00:00 UTC), Some(ActionRequired)),
        (datetime!(2026-03-09 09:00 UTC), Some(Approved)),
        (datetime!(2026-04-01 00:00 UTC), Some(Completed)),
    ];
    for (instant, expected) in table {
        assert_eq!(status_at(&history, instant), expected, "{instant}");
    }
    let mut reversed = history.clone();
    reversed.reverse();
    assert_eq!(status_at(&reversed, datetime!(2026-03-05 00:00 UTC)), Some(ActionRequired));
    // Two entries at one instant: the later one in order wins.
    let tied = [
        entry(datetime!(2026-03-01 09:00 UTC), Submitted, 0),
        entry(datetime!(2026-03-01 09:00 UTC), Cancelled, 0),
    ];
    assert_eq!(status_at(&tied, datetime!(2026-03-02 00:00 UTC)), Some(Cancelled));
}

fn spell(stage: usize, entered_at: OffsetDateTime, left_at: OffsetDateTime) -> StageSpell {
    StageSpell { stage, entered_at, left_at }
}

#[test]
fn stage_spells_from_the_history() {
    use RequestStatus::*;
    let history = completed_history();
    let expected = vec![
        spell(0, datetime!(2026-03-01 09:00 UTC), datetime!(2026-03-03 09:00 UTC)),
        // The two days in action_required count in stage 1.
        spell(1, datetime!(2026-03-03 09:00 UTC), datetime!(2026-03-07 09:00 UTC)),
        spell(2, datetime!(2026-03-07 09:00 UTC), datetime!(2026-03-09 09:00 UTC)),
    ];
    assert_eq!(stage_spells(&history, Some(datetime!(2026-03-09 09:00 UTC))), expected);
    assert_eq!(expected.iter().map(StageSpell::seconds).collect::<Vec<_>>(), [172_800, 345_600, 172_800]);
    // In any order.
    let mut shuffled = history.clone();
    shuffled.rotate_left(3);
    assert_eq!(stage_spells(&shuffled, Some(datetime!(2026-03-09 09:00 UTC))), expected);
    // Still open: the current stage is no spell yet.
    assert_eq!(stage_spells(&history[..6], None), expected[..2]);
    // A history that stops before the final entry ends at closed_at.
    assert_eq!(stage_spells(&history[..7], Some(datetime!(2026-03-09 09:00 UTC))), expected);
    // Cancelled straight after submission.
    let cancelled = [
        entry(datetime!(2026-03-01 09:00 UTC), Submitted, 0),
        entry(datetime!(2026-03-01 10:30 UTC), Cancelled, 0),
    ];
    assert_eq!(
        stage_spells(&cancelled, Some(datetime!(2026-03-01 10:30 UTC))),
        [spell(0, datetime!(2026-03-01 09:00 UTC), datetime!(2026-03-01 10:30 UTC))]
    );
    assert_eq!(stage_spells(&[], None), []);
    assert_eq!(stage_spells(&[], Some(datetime!(2026-03-01 10:30 UTC))), []);
}
