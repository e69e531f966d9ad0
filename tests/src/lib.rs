//! The harness of the end-to-end tests in `tests/tests/*.rs`: a real server on a free
//! port of 127.0.0.1, on a fresh SQLite file or a fresh PostgreSQL database, driven over
//! HTTP with `reqwest` (and with the `oauth2` crate, through [`OAuthHttp`]).
//!
//! Every test is an `async fn(Backend)`; [`both!`] turns it into `name::sqlite` and
//! `name::postgres`, so each one runs on both databases.
//!
//! The document tests also run a server on S3 (moto, [`moto`]) with a real clamd
//! ([`clamd`]), and the real `consular` binary as a child process that a test can SIGKILL
//! and start again on the same database and storage ([`child`], [`TestApp::spawn_process`]);
//! [`stacks!`] runs a test on SQLite + local files and on PostgreSQL + S3; [`files`] builds
//! uploads. Tokens, API clients and forged tokens are in `tokens.rs`, the objects most
//! tests build on in `world.rs`.
//!
//! This file only declares the modules, re-exports what the tests name from the crate
//! root (`consular_tests::TestApp`) and defines the two macros: the harness itself is in
//! leaf modules that the others use, never the root (no import cycle between modules,
//! `crates/http/tests/module_graph.rs`): the server node in `app.rs`, the databases and
//! blob stores in `backend.rs`, the settings in `settings.rs`, the HTTP client and the
//! response checks in `http.rs`, `eventually` in `wait.rs`, `merge` in `json.rs`, the
//! target directory in `target.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod app;
mod backend;
pub mod bench;
pub mod blobs;
pub mod child;
pub mod clamd;
pub mod files;
mod http;
mod json;
pub mod moto;
mod oauth;
mod settings;
mod target;
mod tokens;
mod wait;
mod world;

pub use app::{Storage, TestApp};
pub use backend::{Backend, Stack};
pub use http::{expect_problem, header, http_client};
pub use json::merge;
pub use oauth::{OAuthHttp, OAuthHttpError};
pub use settings::set_setting;
pub use target::target_dir;
pub use tokens::*;
pub use wait::eventually;
pub use world::*;

pub use consular_app;
pub use consular_application;
pub use consular_db;
pub use consular_domain;
pub use consular_ports;
pub use consular_storage;
pub use oauth2;
pub use reqwest;
pub use serde_json;

/// Generates `$name::sqlite` and `$name::postgres`, two multi-thread tokio tests that call
/// `async fn $name(backend: Backend)` (defined next to the macro call) with each backend.
/// Attributes given before the name (`#[ignore = "..."]`) apply to both.
#[macro_export]
macro_rules! both {
    ($(#[$meta:meta])* $name:ident) => {
        mod $name {
            $(#[$meta])*
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                super::$name($crate::Backend::Sqlite).await
            }

            $(#[$meta])*
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                super::$name($crate::Backend::Postgres).await
            }
        }
    };
}

/// Generates `$name::sqlite_local` and `$name::postgres_s3`, two multi-thread tokio tests
/// that call `async fn $name(stack: Stack)`; start the server with
/// [`TestApp::spawn_stack`]. Attributes given before the name apply to both.
#[macro_export]
macro_rules! stacks {
    ($(#[$meta:meta])* $name:ident) => {
        mod $name {
            $(#[$meta])*
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite_local() {
                super::$name($crate::Stack::SQLITE_LOCAL).await
            }

            $(#[$meta])*
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres_s3() {
                super::$name($crate::Stack::POSTGRES_S3).await
            }
        }
    };
}
