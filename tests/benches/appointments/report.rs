//! The printed results.

use super::*;

pub(crate) fn print_db(db: &DbRun, what: &str) {
    println!(
        "   pgbench{:>8.0} tps    avg {:>7.3} ms  ({} transactions, {} clients, -M prepared; {what})",
        db.tps,
        db.latency_ms,
        db.transactions,
        clients()
    );
    for (ms, command) in &db.commands {
        let short: String = command.chars().take(90).collect();
        println!("          {ms:>7.3} ms  {short}{}", if command.len() > 90 { "..." } else { "" });
    }
    println!("          CPU: {}", db.cpu.per_unit(db.tps * db.cpu.seconds, "transaction"));
}

pub(crate) fn print_http(http: &HttpRun, what: &str) {
    println!(
        "   HTTP   {:>8.0} req/s  p50 {:>7.2} ms  p99 {:>7.2} ms  ({} requests, {} clients; {what})",
        http.per_second,
        http.p50_ms,
        http.p99_ms,
        http.requests,
        clients()
    );
    println!("          CPU: {}", http.cpu.per_unit(http.requests as f64, "request"));
}

pub(crate) fn print_summary(
    world: &World,
    timing: Timing,
    availability: &Availability,
    spread: &Booking,
    hot: &Booking,
) {
    let clients = clients();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nappointments on PostgreSQL, {} slots ({MISSIONS} missions x {DAYS} days x {}; capacity {}, hot {HOT_CAPACITY}); \
         {clients} keep-alive clients for {} s after {} s of warm-up; pgbench -c {clients} -j 2 -T {} -M prepared",
        world.slots, world.per_day, world.capacity, timing.seconds, timing.warmup, timing.seconds
    );
    let _ = writeln!(
        out,
        "{:<34} {:>9} {:>8} {:>8} {:>9} {:>8} {:>9} {:>7} {:>9} {:>8} {:>7}",
        "scenario",
        "HTTP r/s",
        "p50 ms",
        "p99 ms",
        "DB tps",
        "DB ms",
        "UPDATE ms",
        "HTTP/DB",
        "TX tps",
        "TX ms",
        "HTTP/TX"
    );
    let mut line = |name: &str, http: &HttpRun, db: &DbRun, update: Option<f64>, writes: Option<&DbRun>| {
        let dash = || "-".to_owned();
        let _ = writeln!(
            out,
            "{:<34} {:>9.0} {:>8.2} {:>8.2} {:>9.0} {:>8.3} {:>9} {:>7.2} {:>9} {:>8} {:>7}",
            name,
            http.per_second,
            http.p50_ms,
            http.p99_ms,
            db.tps,
            db.latency_ms,
            update.map_or_else(dash, |ms| format!("{ms:.3}")),
            http.per_second / db.tps,
            writes.map_or_else(dash, |w| format!("{:.0}", w.tps)),
            writes.map_or_else(dash, |w| format!("{:.3}", w.latency_ms)),
            writes.map_or_else(dash, |w| format!("{:.2}", http.per_second / w.tps)),
        );
    };
    line("availability (a week)", &availability.http, &availability.db, None, None);
    line("booking, spread slots", &spread.http, &spread.db, Some(spread.update_ms), Some(&spread.writes));
    line("booking, one hot slot", &hot.http, &hot.db, Some(hot.update_ms), Some(&hot.writes));
    let p99 = availability.http.p99_ms;
    let _ = writeln!(
        out,
        "\navailability p99 {p99:.2} ms: {} (limit {AVAILABILITY_P99_MS} ms)",
        if p99 < AVAILABILITY_P99_MS { "PASS" } else { "FAIL" }
    );
    for (name, booking) in [("spread slots", spread), ("one hot slot", hot)] {
        let ratio = booking.http.per_second / booking.writes.tps;
        let _ = writeln!(
            out,
            "booking on {name} at {ratio:.2} of pgbench on a booking's writes ({:.2} of the UPDATE alone): {} (aim {SPREAD_AIM}, not enforced)",
            booking.http.per_second / booking.db.tps,
            if ratio >= SPREAD_AIM { "aim met" } else { "aim NOT met" }
        );
    }
    cpu_table(
        &mut out,
        34,
        &[
            ("availability (a week)", &availability.http, &availability.db),
            ("booking, spread slots", &spread.http, &spread.db),
            ("booking, one hot slot", &hot.http, &hot.db),
            ("spread: a booking's writes", &spread.http, &spread.writes),
            ("hot: a booking's writes", &hot.http, &hot.writes),
        ],
    );
    let _ = writeln!(out, "\navailability plan: {}", availability.plan);
    print!("{out}");
}
