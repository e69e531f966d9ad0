//! The statements the adapter sends, as pgbench runs them, and the check that the server
//! ran the same ones (`pg_stat_activity`).

use super::*;

/// A statement as the adapter sends it, with `$n` placeholders, and the pgbench
/// variable that fills each.
pub(crate) struct Statement {
    pub(crate) sql: String,
    pub(crate) vars: Vec<&'static str>,
}

impl Statement {
    /// The pgbench form: `$n` becomes `:var` (from the highest, so `$1` does not eat `$10`),
    /// or the literal `NULL` for the variable [`NULL`] (pgbench has no null variable).
    pub(crate) fn pgbench(&self) -> String {
        let mut script = self.sql.clone();
        for (n, var) in self.vars.iter().enumerate().rev() {
            let value = if *var == NULL { NULL.to_owned() } else { format!(":{var}") };
            script = script.replace(&format!("${}", n + 1), &value);
        }
        script
    }

    /// The text as `pg_stat_activity` shows it (whitespace runs folded).
    pub(crate) fn folded(&self) -> String {
        self.sql.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}

/// The variable of a parameter bound to NULL.
pub(crate) const NULL: &str = "NULL";

/// The columns of `SlotRow::as_select()`, as diesel writes them.
const SLOT_COLUMNS: &str = r#""slots"."id", "slots"."mission_id", "slots"."starts_at", "slots"."ends_at", "slots"."capacity", "slots"."booked", "slots"."is_open", "slots"."booking_cutoff_minutes", "slots"."cancellation_cutoff_minutes", "slots"."booking_closes_at", "slots"."version", "slots"."created_at", "slots"."updated_at", "slots"."release_at""#;

/// `availability_query` of crates/adapters/db/src/appointments/queries.rs, first page.
pub(crate) fn availability_statement() -> Statement {
    Statement {
        sql: format!(
            r#"SELECT {SLOT_COLUMNS} FROM ("slot_service_types" INNER JOIN "slots" ON ("slot_service_types"."slot_id" = "slots"."id")) WHERE (((((((("slot_service_types"."mission_id" = $1) AND ("slot_service_types"."service_type_id" = $2)) AND ("slot_service_types"."starts_at" >= $3)) AND ("slot_service_types"."starts_at" < $4)) AND ("slots"."is_open" = $5)) AND ("slots"."booked" < "slots"."capacity")) AND ("slots"."booking_closes_at" > $6)) AND (("slots"."release_at" IS NULL) OR ("slots"."release_at" <= $7))) ORDER BY "slot_service_types"."starts_at" ASC, "slot_service_types"."slot_id" ASC LIMIT $8"#
        ),
        vars: vec!["mission", "service", "from", "to", "yes", "now", "now", "limit"],
    }
}

/// `with_service_types`: the service types of the page's slots.
pub(crate) fn service_types_statement() -> Statement {
    Statement {
        sql: r#"SELECT "slot_service_types"."slot_id", "slot_service_types"."service_type_id" FROM "slot_service_types" WHERE ("slot_service_types"."slot_id" = ANY($1))"#.to_owned(),
        vars: vec!["ids"],
    }
}

/// `take_seat`: the guarded seat statement, the one statement that can fill a slot.
pub(crate) fn take_seat_statement() -> Statement {
    Statement {
        sql: r#"UPDATE "slots" SET "booked" = ("slots"."booked" + $1) WHERE (((((("slots"."id" = $2) AND ("slots"."is_open" = $3)) AND ("slots"."booked" < "slots"."capacity")) AND ("slots"."booking_closes_at" > $4)) AND (("slots"."release_at" IS NULL) OR ("slots"."release_at" <= $5))) AND EXISTS (SELECT "slot_service_types"."slot_id", "slot_service_types"."service_type_id", "slot_service_types"."mission_id", "slot_service_types"."starts_at" FROM "slot_service_types" WHERE (("slot_service_types"."slot_id" = $6) AND ("slot_service_types"."service_type_id" = $7))))"#.to_owned(),
        vars: vec!["one", "slot", "yes", "now", "now", "slot", "service"],
    }
}

/// The statements of a booking's write transaction after the guarded seat statement's
/// predecessors, in the adapter's order (crates/adapters/db/src/write_meta/queries.rs
/// `store`, then crates/adapters/db/src/appointments/queries.rs `book`), as diesel sends
/// them for a staff booking with an `Idempotency-Key` (a citizen's also locks its row).
/// The texts are those `log_statement = all` shows for `POST /api/v1/appointments`.
pub(crate) fn booking_writes() -> Vec<Statement> {
    let text = |sql: &str, vars: &[&'static str]| Statement { sql: sql.to_owned(), vars: vars.to_vec() };
    vec![
        text(
            r#"DELETE FROM "idempotency_keys" WHERE ((("idempotency_keys"."owner" = $1) AND ("idempotency_keys"."key" = $2)) AND ("idempotency_keys"."expires_at" <= $3))"#,
            &["owner", "key", "now"],
        ),
        text(
            r#"INSERT INTO "idempotency_keys" ("owner", "key", "fingerprint", "resource_id", "outcome", "created_at", "expires_at") VALUES ($1, $2, $3, $4, $5, $6, $7)"#,
            &["owner", "key", "fingerprint", "appt", "outcome", "now", "expires"],
        ),
        text(
            r#"INSERT INTO "audit_events" ("id", "at", "actor_kind", "actor_id", "client_id", "action", "resource_type", "resource_id", "changed_fields", "client_address") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"#,
            &["audit", "now", "staff", "actor", "owner", "created", "resource", "appt", "fields", "address"],
        ),
        text(
            r#"INSERT INTO "outbox_events" ("id", "kind", "aggregate_id", "payload", "created_at") VALUES ($1, $2, $3, $4, $5)"#,
            &["event", "kind", "appt", "payload", "now"],
        ),
        take_seat_statement(),
        text(
            r#"INSERT INTO "appointments" ("id", "slot_id", "mission_id", "citizen_id", "service_type_id", "request_id", "starts_at", "ends_at", "status", "booked_by_kind", "booked_by_id", "cancelled_by", "cancelled_at", "version", "created_at", "updated_at") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)"#,
            &[
                "appt", "slot", "mission", "citizen", "service", NULL, "starts", "ends", "booked", "staff",
                "actor", NULL, NULL, "one", "now", "now",
            ],
        ),
        text(
            r#"INSERT INTO "appointment_history" ("appointment_id", "version", "request_id", "change", "actor_kind", "actor_id", "at", "slot_id", "starts_at", "ends_at") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"#,
            &["appt", "one", NULL, "booked", "staff", "actor", "now", "slot", "starts", "ends"],
        ),
    ]
}

/// A timestamptz parameter as text.
pub(crate) fn sql_time(at: OffsetDateTime) -> Result<String> {
    at.format(&Rfc3339).map_err(|e| format!("{at}: {e}"))
}

// --------------------------------------------------------------------------- HTTP load

/// The distinct statements on slots the server's connections run (or last ran) during
/// `window`, sampled from `pg_stat_activity` every 20 ms: a booking's last statement
/// is its COMMIT, so only a sample taken while it runs (or waits) shows the UPDATE.
pub(crate) async fn sample_statements(url: String, window: Duration) -> Result<BTreeSet<String>> {
    let mut script = String::new();
    for _ in 0..(window.as_millis() / 20).max(1) {
        script.push_str(
            "SELECT DISTINCT regexp_replace(query, '\\s+', ' ', 'g') FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid() \
             AND (query LIKE 'SELECT \"slots\".%' OR query LIKE 'SELECT \"slot_service_types\".%' \
             OR query LIKE 'UPDATE \"slots\"%');\nSELECT pg_sleep(0.02);\n",
        );
    }
    let out = psql(&url, &script).await?;
    Ok(out.lines().map(str::trim).filter(|l| !l.is_empty()).map(str::to_owned).collect())
}

/// Our statement must be among those the server ran. `pg_stat_activity` keeps the first
/// `track_activity_query_size` bytes (1024 by default) of a statement: a longer one is
/// compared on that prefix.
pub(crate) fn ran(seen: &BTreeSet<String>, statement: &Statement, what: &str) -> Result<()> {
    let ours = statement.folded();
    let exact = seen.contains(&ours);
    let prefix = seen.iter().find(|s| s.len() >= 1000 && ours.starts_with(s.as_str()));
    match (exact, prefix) {
        (true, _) => println!("   SQL    the server ran exactly the bench's {what} (pg_stat_activity)"),
        (false, Some(p)) => println!(
            "   SQL    the server ran the bench's {what} (pg_stat_activity keeps its first {} bytes)",
            p.len()
        ),
        (false, None) => {
            return Err(format!(
                "the server's SQL is not the bench's {what} (update tests/benches/appointments.rs)\n\
                 bench:  {ours}\nserver: {}",
                seen.iter().cloned().collect::<Vec<_>>().join("\n        ")
            ));
        }
    }
    Ok(())
}
