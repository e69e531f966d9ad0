//! Representations: who acts for whom (docs/representation.md). Rows are inserted and
//! ended, never deleted: an ended representation stays as the trace of who could act.

use crate::{RepoError, WriteMeta};
use async_trait::async_trait;
use consular_domain::{CitizenId, Page, PageRequest, Representation, RepresentationId, Subject};
use time::{Date, OffsetDateTime};

/// What judging a call that acts for a dependant needs (docs/representation.md
/// "Acting"), read in one statement: the representations not ended between the two, the
/// dependant's date of birth (whether each kind fits their age today) and their
/// mission's time zone (what today is).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActingFacts {
    /// Oldest first; never empty.
    pub representations: Vec<Representation>,
    pub dependant_born: Date,
    pub timezone: String,
}

/// The partial unique index that keeps one representation not ended per dependant,
/// representative and kind: the `constraint` of the `Duplicate` that
/// [`RepresentationRepository::insert`] reports.
pub const ONE_REPRESENTATION: &str = "representations_one_open";

#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait RepresentationRepository: Send + Sync {
    /// Inserts a new representation in one transaction with `meta`. Another one not
    /// ended with the same dependant, representative and kind is
    /// `Duplicate { constraint: ONE_REPRESENTATION }`, whichever of two concurrent
    /// inserts loses.
    async fn insert(&self, representation: &Representation, meta: &WriteMeta) -> Result<(), RepoError>;
    async fn get(&self, id: RepresentationId) -> Result<Option<Representation>, RepoError>;
    /// A dependant's representations, ended ones included, newest first (id descending),
    /// keyset-paged on the id.
    async fn for_dependant(
        &self,
        dependant: CitizenId,
        page: PageRequest,
    ) -> Result<Page<Representation>, RepoError>;
    /// The representations not ended that `representative` holds (whether each is in
    /// force is the caller's judgement: dates and age), oldest first.
    async fn held_by(&self, representative: CitizenId) -> Result<Vec<Representation>, RepoError>;
    /// The representations not ended that `representative` holds for `dependant`: read
    /// at each action of an acting principal, always from the primary, so an ending
    /// stops access at once on every node.
    async fn between(
        &self,
        representative: CitizenId,
        dependant: CitizenId,
    ) -> Result<Vec<Representation>, RepoError>;
    /// The representations not ended that `representative` holds for `dependant`, a
    /// citizen of their mission who is not erased, with what judging them needs, in one
    /// statement on the primary: read at each call acting for someone, so that an ending
    /// stops the next call on every node. `None` when there are none.
    async fn acting(
        &self,
        representative: CitizenId,
        dependant: CitizenId,
    ) -> Result<Option<ActingFacts>, RepoError>;
    /// Ends `id` at `at` by `by` for `reason`, in one transaction with `meta`, if it is
    /// not ended yet: the row as stored after; `None` when no such row is open (the
    /// caller tells an unknown id from an ended one by reading it).
    async fn end(
        &self,
        id: RepresentationId,
        at: OffsetDateTime,
        by: Subject,
        reason: &str,
        meta: &WriteMeta,
    ) -> Result<Option<Representation>, RepoError>;
}
