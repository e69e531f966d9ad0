//! `consular`: serve the API, migrate the database, deliver notifications, manage API clients.

use clap::Parser;
use consular_app::cli::{Cli, ClientsCommand, Command, CreateArgs};
use consular_app::{Application, Settings, services, telemetry};
use consular_application::clients::Actor;
use consular_domain::{ClientId, NewClient, PageRequest, ScopeSet};
use serde_json::json;
use std::process::ExitCode;

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
    }
}

/// Notification delivery without the HTTP server, for deployments that separate them.
async fn worker(settings: &Settings) -> Result<(), String> {
    let services = services::build(settings).await.map_err(|e| e.to_string())?;
    let poll = std::time::Duration::from_millis(settings.outbox_poll_ms);
    let tasks = consular_app::spawn_notification_tasks(&services.notifications, poll);
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| format!("cannot listen for SIGTERM: {e}"))?;
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
    }
    // At-least-once: a batch cut short is claimed again when its lease expires, and what
    // it produced is never produced twice.
    for task in &tasks {
        task.abort();
    }
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
