//! The command line: `serve`, `migrate`, `worker`, `clients`, `keys` and `demo`.

use clap::{Args, Parser, Subcommand, ValueEnum};
use consular_domain::{MissionId, PrincipalId, Scope};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(name = "consular", version, about = "The consular services API")]
pub struct Cli {
    /// A TOML configuration file (default: ./consular.toml when it exists). Environment
    /// variables `CONSULAR_*` override it.
    #[arg(long, global = true, env = "CONSULAR_CONFIG")]
    pub config: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve the API (migrating the database first).
    Serve {
        /// The address to listen on, overriding the configuration.
        #[arg(long)]
        bind: Option<SocketAddr>,
    },
    /// Apply pending database migrations and exit.
    Migrate,
    /// Deliver notifications only (the outbox worker, email sender and reminders that
    /// `serve` also runs), until SIGTERM or SIGINT.
    Worker,
    /// Manage API clients.
    #[command(subcommand)]
    Clients(ClientsCommand),
    /// Token signing keys.
    #[command(subcommand)]
    Keys(KeysCommand),
    /// The demo data set.
    #[command(subcommand)]
    Demo(DemoCommand),
}

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Store a new signing key. Every node starts signing with it within seconds; the
    /// previous key keeps verifying until the tokens it signed have expired, then is
    /// retired.
    Rotate,
    /// List the stored signing keys, newest first: kid, creation, protection at rest, and
    /// when each older key retires. Never the private keys.
    List {
        /// Print one JSON object per line.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum DemoCommand {
    /// Generate a realistic data set (missions, catalog, staff, citizens, requests with
    /// their histories over a past period) and store it, without audit entries or
    /// notifications. Deterministic: the same arguments on the same day give the same
    /// data. Every code carries the seed (missions `gb-demo-s1-001`): seeding the same
    /// seed twice into one database is refused and stores nothing more; another seed adds
    /// another data set.
    Seed(SeedArgs),
}

#[derive(Debug, Clone, Copy, Args)]
pub struct SeedArgs {
    /// Missions (1 to 999).
    #[arg(long)]
    pub missions: u32,
    /// Requests, spread over the missions (about one citizen per five).
    #[arg(long)]
    pub requests: u64,
    /// The random seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The past period the requests are submitted in, in days up to now.
    #[arg(long, default_value_t = 365)]
    pub days: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScopeArg {
    Admin,
    Staff,
    Citizen,
}

impl From<ScopeArg> for Scope {
    fn from(s: ScopeArg) -> Self {
        match s {
            ScopeArg::Admin => Scope::Admin,
            ScopeArg::Staff => Scope::Staff,
            ScopeArg::Citizen => Scope::Citizen,
        }
    }
}

#[derive(Debug, Subcommand)]
pub enum ClientsCommand {
    /// Create a client and print its secret (shown only now).
    Create(CreateArgs),
    /// List clients.
    List {
        /// Print one JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Disable a client: its tokens stop working within a second.
    Disable {
        /// The client id.
        id: uuid::Uuid,
    },
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    /// A name to recognise the client by.
    #[arg(long, default_value = "command-line client")]
    pub name: String,
    /// Scopes the client may request (repeat for admin + staff).
    #[arg(long = "scope", value_enum, required = true)]
    pub scopes: Vec<ScopeArg>,
    /// The mission the client belongs to (required for staff and citizen clients;
    /// absent for a global admin).
    #[arg(long)]
    pub mission: Option<MissionId>,
    /// The staff member or citizen the client acts for.
    #[arg(long)]
    pub principal: Option<PrincipalId>,
    /// Print exactly one JSON object with `client_id` and `client_secret`.
    #[arg(long)]
    pub json: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        let cli = Cli::parse_from([
            "consular", "clients", "create", "--scope", "admin", "--scope", "staff", "--json",
        ]);
        match cli.command {
            Command::Clients(ClientsCommand::Create(args)) => {
                assert_eq!(args.scopes, [ScopeArg::Admin, ScopeArg::Staff]);
                assert!(args.json);
            }
            other => panic!("{other:?}"),
        }
        let cli = Cli::parse_from(["consular", "keys", "list", "--json"]);
        assert!(matches!(cli.command, Command::Keys(KeysCommand::List { json: true })));
        let cli = Cli::parse_from(["consular", "keys", "rotate"]);
        assert!(matches!(cli.command, Command::Keys(KeysCommand::Rotate)));
        let cli = Cli::parse_from(["consular", "demo", "seed", "--missions", "3", "--requests", "1000"]);
        match cli.command {
            Command::Demo(DemoCommand::Seed(args)) => {
                assert_eq!((args.missions, args.requests, args.seed, args.days), (3, 1000, 1, 365));
            }
            other => panic!("{other:?}"),
        }
    }
}
