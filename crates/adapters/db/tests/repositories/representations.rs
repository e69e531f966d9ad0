//! Representations (docs/representation.md): stored and read back as written, a
//! dependant's list paged newest first, what a representative holds (ended ones left
//! out), an ending that happens once, one open representation per dependant,
//! representative and kind decided by the database under real concurrency, the CHECKs,
//! and an erasure of either party deleting them and refusing new ones.

use super::*;
use consular_domain::erasure;
use consular_domain::{
    Document, DocumentId, NewDocument, Representation, RepresentationId, RepresentationKind, ScanStatus,
    ServiceScope,
};
use consular_ports::{
    DocumentRepository, Erasure, ErasureRepository, ONE_REPRESENTATION, RepresentationRepository,
};

on_both_databases!(
    representations_are_stored_as_written_and_listed_newest_first,
    what_a_representative_holds_leaves_out_ended_ones,
    a_representation_ends_once,
    one_open_representation_per_pair_and_kind_even_when_created_at_once,
    the_database_refuses_what_a_representation_cannot_be,
    an_erasure_deletes_the_representations_of_either_party_and_refuses_new_ones,
);

const RESOURCE: &str = "representation";

fn staff() -> Subject {
    Subject { kind: PrincipalKind::Staff, id: PrincipalId::new() }
}

/// A mission and `n` of its citizens, each with a document (the evidence of the
/// representations where they are the dependant).
struct Family {
    mission: MissionId,
    people: Vec<(Citizen, DocumentId)>,
}

impl Family {
    async fn stored(db: &Database, code: &str, n: usize) -> Family {
        let mission = stored_mission(db, code).await.id;
        let mut people = Vec::new();
        for i in 0..n {
            let citizen = stored_citizen(db, mission, &format!("{code}{i:06}")).await;
            let document = stored_document(db, &citizen).await;
            people.push((citizen, document));
        }
        Family { mission, people }
    }

    fn id(&self, i: usize) -> CitizenId {
        self.people[i].0.id
    }

    /// `representative` acts for `dependant` as `kind`, in every service, from 1 January
    /// 2026, with the dependant's document as evidence.
    fn representation(
        &self,
        dependant: usize,
        representative: usize,
        kind: RepresentationKind,
    ) -> Representation {
        Representation {
            id: RepresentationId::new(),
            dependant_id: self.id(dependant),
            representative_id: self.id(representative),
            mission_id: self.mission,
            kind,
            services: ServiceScope::All,
            valid_from: date!(2026 - 01 - 01),
            valid_until: None,
            evidence_document_id: self.people[dependant].1,
            created_by: staff(),
            created_at: now(),
            ended_at: None,
            ended_by: None,
            end_reason: None,
        }
    }
}

async fn stored_document(db: &Database, citizen: &Citizen) -> DocumentId {
    let new = NewDocument {
        mission_id: citizen.mission_id,
        citizen_id: citizen.id,
        request_id: None,
        kind: "birth_certificate".to_owned(),
        file_name: "birth.pdf".to_owned(),
        media_type: "application/pdf".to_owned(),
        size_bytes: 1024,
        sha256: "0123456789abcdef".repeat(4),
        scan: ScanStatus::Clean,
    };
    new.validate().unwrap();
    let owner = Subject { kind: PrincipalKind::Citizen, id: PrincipalId(citizen.id.0) };
    let document = Document::upload(new, consular_domain::document::new_blob_key(), owner, now());
    DocumentRepository::insert(db, &document, &WriteMeta::default()).await.unwrap();
    document.id
}

async fn insert(db: &Database, r: &Representation) -> Result<(), RepoError> {
    RepresentationRepository::insert(db, r, &audited(RESOURCE, r.id.as_uuid())).await
}

fn ids(representations: &[Representation]) -> Vec<RepresentationId> {
    representations.iter().map(|r| r.id).collect()
}

async fn representations_are_stored_as_written_and_listed_newest_first(db: Database) {
    let family = Family::stored(&db, "REPLIST", 4).await;
    let (passport, visa) =
        (stored_service_type(&db, "rep_passport").await, stored_service_type(&db, "rep_visa").await);
    let mut parent = family.representation(0, 1, RepresentationKind::Parent);
    parent.services = ServiceScope::Only(sorted(&[passport.id, visa.id]));
    parent.valid_until = Some(date!(2030 - 12 - 31));
    let guardian = family.representation(0, 2, RepresentationKind::Guardian);
    let mut attorney = family.representation(0, 3, RepresentationKind::AuthorisedRepresentative);
    attorney.services = ServiceScope::Only(vec![visa.id]);
    let elsewhere = family.representation(1, 0, RepresentationKind::Guardian);
    for r in [&parent, &guardian, &attorney, &elsewhere] {
        insert(&db, r).await.unwrap();
    }

    for r in [&parent, &guardian, &attorney] {
        assert_eq!(RepresentationRepository::get(&db, r.id).await.unwrap().as_ref(), Some(r));
        let trail = db.audit_trail(RESOURCE, r.id.as_uuid()).await.unwrap();
        assert_eq!(trail.len(), 1, "the insert's audit entry is stored with it");
    }
    assert_eq!(RepresentationRepository::get(&db, RepresentationId::new()).await.unwrap(), None);

    // Newest first, two to a page, the dependant's only.
    let mut newest_first = [parent.id, guardian.id, attorney.id];
    newest_first.sort_by(|a, b| b.cmp(a));
    let first = db.for_dependant(family.id(0), PageRequest { limit: 2, after: None }).await.unwrap();
    assert_eq!(ids(&first.items), newest_first[..2]);
    let after = first.next_after.expect("a second page");
    let second = db.for_dependant(family.id(0), PageRequest { limit: 2, after: Some(after) }).await.unwrap();
    assert_eq!(ids(&second.items), newest_first[2..]);
    assert_eq!(second.next_after, None);
    let other = db.for_dependant(family.id(1), PageRequest::default()).await.unwrap();
    assert_eq!(ids(&other.items), [elsewhere.id]);
    assert!(db.for_dependant(family.id(3), PageRequest::default()).await.unwrap().items.is_empty());
}

async fn what_a_representative_holds_leaves_out_ended_ones(db: Database) {
    let family = Family::stored(&db, "REPHELD", 4).await;
    // Citizen 1 acts for 0 twice (two kinds) and for 2; citizen 3 acts for 0.
    let for_zero = family.representation(0, 1, RepresentationKind::Parent);
    let also_for_zero = family.representation(0, 1, RepresentationKind::Guardian);
    let for_two = family.representation(2, 1, RepresentationKind::Guardian);
    let by_three = family.representation(0, 3, RepresentationKind::Guardian);
    for r in [&for_zero, &also_for_zero, &for_two, &by_three] {
        insert(&db, r).await.unwrap();
    }
    assert_eq!(
        ids(&db.held_by(family.id(1)).await.unwrap()),
        sorted(&[for_zero.id, also_for_zero.id, for_two.id])
    );
    assert_eq!(
        ids(&db.between(family.id(1), family.id(0)).await.unwrap()),
        sorted(&[for_zero.id, also_for_zero.id])
    );
    // What a call acting for citizen 0 reads, in one statement: the same two, with the
    // dependant's date of birth and the mission's zone.
    let facts = db.acting(family.id(1), family.id(0)).await.unwrap().expect("two open");
    assert_eq!(ids(&facts.representations), sorted(&[for_zero.id, also_for_zero.id]));
    assert_eq!(facts.dependant_born, family.people[0].0.date_of_birth);
    let mission = MissionRepository::get(&db, family.mission).await.unwrap().expect("the mission");
    assert_eq!(facts.timezone, mission.timezone);

    db.end(for_zero.id, now(), staff(), "the child moved abroad", &WriteMeta::default())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(ids(&db.held_by(family.id(1)).await.unwrap()), sorted(&[also_for_zero.id, for_two.id]));
    assert_eq!(ids(&db.between(family.id(1), family.id(0)).await.unwrap()), [also_for_zero.id]);
    assert_eq!(ids(&db.between(family.id(3), family.id(0)).await.unwrap()), [by_three.id]);
    let acting = |representative: usize, dependant: usize| {
        let db = db.clone();
        let (representative, dependant) = (family.id(representative), family.id(dependant));
        async move { db.acting(representative, dependant).await.unwrap().map(|f| ids(&f.representations)) }
    };
    assert_eq!(acting(1, 0).await, Some(vec![also_for_zero.id]));
    assert_eq!(acting(1, 2).await, Some(vec![for_two.id]));
    // The roles are not interchangeable.
    assert_eq!(acting(0, 1).await, None);
    assert!(db.between(family.id(0), family.id(1)).await.unwrap().is_empty());
    assert!(db.held_by(family.id(0)).await.unwrap().is_empty());
    // An ended representation is still listed for the dependant.
    let listed = db.for_dependant(family.id(0), PageRequest::default()).await.unwrap();
    assert!(listed.items.iter().any(|r| r.id == for_zero.id && r.ended_at.is_some()));
}

async fn a_representation_ends_once(db: Database) {
    let family = Family::stored(&db, "REPEND", 2).await;
    let r = family.representation(0, 1, RepresentationKind::Parent);
    insert(&db, &r).await.unwrap();

    let (at, by) = (now(), staff());
    let ended = db.end(r.id, at, by, "a court order", &audited(RESOURCE, r.id.as_uuid())).await.unwrap();
    let expected = Representation {
        ended_at: Some(at),
        ended_by: Some(by),
        end_reason: Some("a court order".to_owned()),
        ..r.clone()
    };
    assert_eq!(ended.as_ref(), Some(&expected));
    assert_eq!(RepresentationRepository::get(&db, r.id).await.unwrap(), Some(expected.clone()));

    // Ended already: nothing changes, and the second ending's audit entry is not stored.
    let again = db.end(r.id, now(), staff(), "twice", &audited(RESOURCE, r.id.as_uuid())).await.unwrap();
    assert_eq!(again, None);
    assert_eq!(RepresentationRepository::get(&db, r.id).await.unwrap(), Some(expected));
    assert_eq!(
        db.audit_trail(RESOURCE, r.id.as_uuid()).await.unwrap().len(),
        2,
        "the insert's and one ending's"
    );
    let unknown = RepresentationId::new();
    assert_eq!(
        db.end(unknown, now(), staff(), "unknown", &audited(RESOURCE, unknown.as_uuid())).await.unwrap(),
        None
    );
    assert!(db.audit_trail(RESOURCE, unknown.as_uuid()).await.unwrap().is_empty());

    // Once ended, the same dependant, representative and kind may be represented again.
    insert(&db, &family.representation(0, 1, RepresentationKind::Parent)).await.unwrap();
}

async fn one_open_representation_per_pair_and_kind_even_when_created_at_once(db: Database) {
    let family = Family::stored(&db, "REPONE", 3).await;
    let first = family.representation(0, 1, RepresentationKind::Guardian);
    insert(&db, &first).await.unwrap();
    let second = family.representation(0, 1, RepresentationKind::Guardian);
    let refused = insert(&db, &second).await;
    assert!(is_duplicate(&refused, ONE_REPRESENTATION), "{refused:?}");
    // Another kind, another representative, or the roles reversed: other representations.
    insert(&db, &family.representation(0, 1, RepresentationKind::Parent)).await.unwrap();
    insert(&db, &family.representation(0, 2, RepresentationKind::Guardian)).await.unwrap();
    insert(&db, &family.representation(1, 0, RepresentationKind::Guardian)).await.unwrap();

    // Eight creations of one representation at once, each on its own pooled connection.
    let attempts: Vec<Representation> =
        (0..8).map(|_| family.representation(2, 1, RepresentationKind::AuthorisedRepresentative)).collect();
    let tasks: Vec<_> = attempts
        .iter()
        .cloned()
        .map(|r| {
            let db = db.clone();
            tokio::spawn(async move { insert(&db, &r).await.map(|()| r.id) })
        })
        .collect();
    let (mut won, mut duplicates) = (Vec::new(), 0);
    for task in tasks {
        match task.await.unwrap() {
            Ok(id) => won.push(id),
            other => {
                assert!(is_duplicate(&other, ONE_REPRESENTATION), "{other:?}");
                duplicates += 1;
            }
        }
    }
    assert_eq!((won.len(), duplicates), (1, 7), "exactly one of eight concurrent creations is stored");
    assert_eq!(ids(&db.between(family.id(1), family.id(2)).await.unwrap()), won);
    // The losers left nothing behind, not even their audit entries.
    for r in attempts.iter().filter(|r| r.id != won[0]) {
        assert_eq!(RepresentationRepository::get(&db, r.id).await.unwrap(), None);
        assert!(db.audit_trail(RESOURCE, r.id.as_uuid()).await.unwrap().is_empty());
    }
}

async fn the_database_refuses_what_a_representation_cannot_be(db: Database) {
    let family = Family::stored(&db, "REPCHK", 2).await;
    let valid = || family.representation(0, 1, RepresentationKind::Guardian);
    let refused = |r: Representation| {
        let db = db.clone();
        async move {
            let result = insert(&db, &r).await;
            assert!(matches!(result, Err(RepoError::Other(_))), "{r:?}: {result:?}");
            assert_eq!(RepresentationRepository::get(&db, r.id).await.unwrap(), None);
        }
    };
    refused(Representation { representative_id: family.id(0), ..valid() }).await;
    refused(Representation { valid_until: Some(date!(2025 - 12 - 31)), ..valid() }).await;
    refused(Representation { services: ServiceScope::Only(Vec::new()), ..valid() }).await;
    let too_many = (0..51).map(|_| ServiceTypeId::new()).collect::<Vec<_>>();
    refused(Representation { services: ServiceScope::Only(sorted(&too_many)), ..valid() }).await;
    refused(Representation { representative_id: CitizenId::new(), ..valid() }).await;
    refused(Representation { evidence_document_id: DocumentId::new(), ..valid() }).await;
    let ended_halfway = Representation { ended_at: Some(now()), ..valid() };
    refused(ended_halfway).await;

    // The boundaries are allowed: one day in force, fifty services.
    let one_day = date!(2026 - 01 - 01);
    let fifty = (0..50).map(|_| ServiceTypeId::new()).collect::<Vec<_>>();
    let r = Representation {
        valid_until: Some(one_day),
        services: ServiceScope::Only(sorted(&fifty)),
        ..valid()
    };
    insert(&db, &r).await.unwrap();
    assert_eq!(RepresentationRepository::get(&db, r.id).await.unwrap(), Some(r.clone()));
    // An ending's reason is 1 to 500 characters.
    for reason in [String::new(), "é".repeat(501)] {
        let result = db.end(r.id, now(), staff(), &reason, &WriteMeta::default()).await;
        assert!(matches!(result, Err(RepoError::Other(_))), "{}: {result:?}", reason.len());
    }
    let longest = "é".repeat(500);
    let ended = db.end(r.id, now(), staff(), &longest, &WriteMeta::default()).await.unwrap().unwrap();
    assert_eq!(ended.end_reason, Some(longest));
}

async fn an_erasure_deletes_the_representations_of_either_party_and_refuses_new_ones(db: Database) {
    let family = Family::stored(&db, "REPERA", 4).await;
    // Citizen 0 is erased: a dependant twice (one ended), a representative once; 2 and 3
    // have a representation of their own, which stays.
    let of_zero = family.representation(0, 1, RepresentationKind::Guardian);
    let ended = family.representation(0, 2, RepresentationKind::Parent);
    let by_zero = family.representation(3, 0, RepresentationKind::Guardian);
    let unrelated = family.representation(3, 2, RepresentationKind::Guardian);
    for r in [&of_zero, &ended, &by_zero, &unrelated] {
        let meta = WriteMeta {
            events: vec![outbox_event("representation.created", r.id.as_uuid())],
            ..audited(RESOURCE, r.id.as_uuid())
        };
        RepresentationRepository::insert(&db, r, &meta).await.unwrap();
    }
    db.end(ended.id, now(), staff(), "of age", &WriteMeta::default()).await.unwrap().unwrap();

    let zero = &family.people[0].0;
    let erasure = Erasure {
        citizen: Some((erasure::erased(zero, now()), zero.version)),
        citizen_id: zero.id,
        requests: Vec::new(),
        at: now(),
    };
    db.erase(&erasure, &audited("citizen", zero.id.as_uuid())).await.unwrap();

    for gone in [&of_zero, &ended, &by_zero] {
        assert_eq!(RepresentationRepository::get(&db, gone.id).await.unwrap(), None);
    }
    assert_eq!(RepresentationRepository::get(&db, unrelated.id).await.unwrap().as_ref(), Some(&unrelated));
    assert!(db.held_by(family.id(0)).await.unwrap().is_empty());
    assert!(db.for_dependant(family.id(0), PageRequest::default()).await.unwrap().items.is_empty());
    assert_eq!(
        ids(&db.for_dependant(family.id(3), PageRequest::default()).await.unwrap().items),
        [unrelated.id]
    );
    // The events filed under them went with them; the audit entries stay.
    let events: Vec<Uuid> = all_outbox_events(&db).await.iter().map(|e| e.aggregate_id).collect();
    assert_eq!(events, [unrelated.id.as_uuid()]);
    assert_eq!(db.audit_trail(RESOURCE, of_zero.id.as_uuid()).await.unwrap().len(), 1);

    // Nothing names the erased citizen again, as dependant or as representative.
    for r in [
        family.representation(0, 1, RepresentationKind::Guardian),
        family.representation(2, 0, RepresentationKind::Guardian),
    ] {
        let refused = insert(&db, &r).await;
        assert!(matches!(refused, Err(RepoError::NotFound)), "{refused:?}");
    }
}
