//! `consular`: serve the API, migrate the database, deliver notifications, manage API clients
//! and signing keys, seed a demo data set.

use clap::Parser;
use consular_app::cli::{Cli, ClientsCommand, Command, CreateArgs, DemoCommand, KeysCommand, SeedArgs};
use consular_app::{Application, Settings, ShutdownSignals, services, telemetry};
use consular_application::clients::Actor;
use consular_application::demo::{SeedCounts, SeedOptions};
use consular_domain::{ClientId, NewClient, PageRequest, ScopeSet};
use serde_json::json;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Exit code of a configuration error.
const CONFIG_ERROR: u8 = 2;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut settings = match Settings::load(cli.config.as_deref()) {
        Ok(settings) => settings,
        Err(error) => {
            eprintln!("consular: {error}");
            return ExitCode::from(CONFIG_ERROR);
        }
    };
    if let Command::Serve { bind: Some(bind) } = &cli.command {
        settings.bind = *bind;
    }
    telemetry::init(&settings);
    match run(cli.command, &settings).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("consular: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command, settings: &Settings) -> Result<(), String> {
    match command {
        Command::Serve { .. } => serve(settings).await,
        Command::Migrate => {
            services::build(settings).await.map_err(|e| e.to_string())?;
            println!("migrations applied");
            Ok(())
        }
        Command::Worker => worker(settings).await,
        Command::Clients(command) => clients(command, settings).await,
        Command::Keys(command) => keys(command, settings).await,
        Command::Demo(DemoCommand::Seed(args)) => seed(args, settings).await,
    }
}

/// `consular demo seed`: the counts, and the time taken, on standard output; progress on
/// standard error.
async fn seed(args: SeedArgs, settings: &Settings) -> Result<(), String> {
    let demo = services::demo(settings).await.map_err(|e| e.to_string())?;
    let options =
        SeedOptions { missions: args.missions, requests: args.requests, seed: args.seed, days: args.days };
    let started = Instant::now();
    let mut reported = 0;
    let counts = demo
        .seed(options, |counts: &SeedCounts| {
            // About every 50,000 requests.
            if counts.requests >= reported + 50_000 {
                reported = counts.requests;
                eprintln!("  {} of {} requests ({:.1} s)", counts.requests, args.requests, started.elapsed().as_secs_f64());
            }
        })
        .await
        .map_err(|e| match e {
            consular_application::ServiceError::Conflict { .. } => format!(
                "{}: seed {} is already in this database (its codes are taken); use another --seed or a fresh database",
                describe(&e),
                args.seed
            ),
            other => describe(&other),
        })?;
    let elapsed = started.elapsed();
    println!("seeded (seed {}, {} days up to now) in {:.1} s:", args.seed, args.days, elapsed.as_secs_f64());
    println!("  missions:        {}", counts.missions);
    println!("  service types:   {}", counts.service_types);
    println!("  staff members:   {}", counts.staff);
    println!("  citizens:        {}", counts.citizens);
    println!("  requests:        {}", counts.requests);
    println!("  history entries: {}", counts.history_entries);
    if elapsed.as_secs_f64() > 0.0 {
        println!("  ({:.0} requests per second)", counts.requests as f64 / elapsed.as_secs_f64());
    }
    Ok(())
}

/// Notification delivery without the HTTP server, for deployments that separate them.
/// Stops like `serve` (docs/operations.md "Shutdown"): on SIGTERM or SIGINT each task
/// finishes the batch it is in, within `shutdown_grace_secs`, then the pool closes.
async fn worker(settings: &Settings) -> Result<(), String> {
    let mut signals =
        ShutdownSignals::listen().map_err(|e| format!("cannot listen for SIGTERM and SIGINT: {e}"))?;
    let (services, database) = services::build_with_database(settings).await.map_err(|e| e.to_string())?;
    let poll = Duration::from_millis(settings.outbox_poll_ms);
    let stop = CancellationToken::new();
    let tasks = consular_app::spawn_notification_tasks(&stop, &services.notifications, poll);
    let signal = signals.recv().await;
    let grace = Duration::from_secs(u64::from(settings.shutdown_grace_secs));
    tracing::info!(
        signal,
        grace_secs = grace.as_secs(),
        "worker stopping: each task finishes the batch it is in"
    );
    // At-least-once: a batch cut short at the end of the grace period is claimed again
    // when its lease expires, and what it produced is never produced twice.
    consular_app::stop_tasks(&stop, tasks, tokio::time::Instant::now() + grace).await;
    database.close();
    tracing::info!("worker stopped");
    Ok(())
}

async fn serve(settings: &Settings) -> Result<(), String> {
    let app = Application::build(settings).await.map_err(|e| e.to_string())?;
    if let Some(admin) = &app.bootstrap_admin {
        println!("First start on an empty database: a global admin client was created.");
        println!("Its secret is shown only now; keep it safe.");
        println!("  client_id:     {}", admin.client.id);
        println!("  client_secret: {}", admin.secret);
    }
    tracing::info!(port = app.port(), "serving");
    if let Some(addr) = app.metrics_addr() {
        // Not worded like the line above, which scripts and tests read the API's port from.
        tracing::info!(%addr, metrics_port = addr.port(), "metrics listening");
    }
    app.run().await.map_err(|e| e.to_string())
}

async fn clients(command: ClientsCommand, settings: &Settings) -> Result<(), String> {
    let services = services::build(settings).await.map_err(|e| e.to_string())?;
    match command {
        ClientsCommand::Create(CreateArgs { name, scopes, mission, principal, json }) => {
            let input = NewClient {
                name,
                scopes: scopes.into_iter().map(Into::into).collect::<ScopeSet>(),
                mission,
                principal,
            };
            let created = services.clients.create_by_operator(input).await.map_err(|e| describe(&e))?;
            if json {
                println!("{}", json!({ "client_id": created.client.id, "client_secret": created.secret }));
            } else {
                println!("client_id:     {}", created.client.id);
                println!("client_secret: {}", created.secret);
                println!("scopes:        {}", created.client.scopes);
            }
            Ok(())
        }
        ClientsCommand::List { json } => {
            let mut page = PageRequest { limit: 100, after: None };
            loop {
                let clients = services.clients.list(Actor::Operator, page).await.map_err(|e| describe(&e))?;
                for c in &clients.items {
                    if json {
                        println!(
                            "{}",
                            json!({ "client_id": c.id, "name": c.name, "scopes": c.scopes.to_string(),
                                    "mission_id": c.mission, "status": c.status.as_str() })
                        );
                    } else {
                        let mission = c.mission.map_or_else(|| "global".to_owned(), |m| m.to_string());
                        println!(
                            "{}  {:8}  {:12}  {:36}  {}",
                            c.id,
                            c.status,
                            c.scopes.to_string(),
                            mission,
                            c.name
                        );
                    }
                }
                match clients.next_after {
                    Some(after) => page.after = Some(after),
                    None => return Ok(()),
                }
            }
        }
        ClientsCommand::Disable { id } => {
            let client =
                services.clients.disable(Actor::Operator, ClientId(id)).await.map_err(|e| describe(&e))?;
            println!("client {} is {}", client.id, client.status);
            Ok(())
        }
    }
}

/// `consular keys …`, on the database the configuration names (with its KEK: the keys are
/// loaded, and a new one sealed, like a server does).
async fn keys(command: KeysCommand, settings: &Settings) -> Result<(), String> {
    use consular_application::auth::Rotation;
    let services = services::build(settings).await.map_err(|e| e.to_string())?;
    let keys = services.tokens.signing_keys();
    match command {
        KeysCommand::Rotate => match keys.rotate().await.map_err(|e| e.to_string())? {
            Rotation::Rotated { kid } => {
                println!("new signing key {kid}: every node signs with it within seconds");
                Ok(())
            }
            Rotation::Concurrent => {
                Err("another rotation stored a new key at the same moment; `consular keys list` shows it"
                    .into())
            }
        },
        KeysCommand::List { json } => {
            let rfc3339 = |at: time::OffsetDateTime| {
                at.format(&time::format_description::well_known::Rfc3339).unwrap_or_else(|_| at.to_string())
            };
            for key in keys.list().await.map_err(|e| e.to_string())? {
                let retires = key.retires_at.map(rfc3339);
                if json {
                    println!(
                        "{}",
                        json!({ "kid": key.kid, "created_at": rfc3339(key.created_at),
                                "protection": key.protection.as_str(), "retires_at": retires })
                    );
                } else {
                    println!(
                        "{}  created {}  {:11}  {}",
                        key.kid,
                        rfc3339(key.created_at),
                        key.protection.as_str(),
                        retires.map_or_else(|| "signing".to_owned(), |at| format!("retires {at}"))
                    );
                }
            }
            Ok(())
        }
    }
}

fn describe(error: &consular_application::ServiceError) -> String {
    match error {
        consular_application::ServiceError::Validation(errors) => errors
            .0
            .iter()
            .map(|e| format!("{}: {}", e.pointer.trim_start_matches('/'), e.message))
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    }
}
