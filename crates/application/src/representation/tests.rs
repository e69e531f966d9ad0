//! Representations against the port mocks: who creates, reads and ends them, every
//! refused field of a creation at once, the duplicate naming the open one, ending twice,
//! and the dependants a representative acts for now.

use super::*;
use crate::fixtures::{any_mission, principal, service_type};
use consular_domain::fixtures;
use consular_domain::{
    Document, DocumentId, NewDocument, PrincipalId, PrincipalKind, RepresentationKind, ScanStatus,
    ServiceTypeId, Subject,
};
use consular_ports::{
    MockAccessLogRepository, MockCitizenRepository, MockClock, MockDocumentRepository,
    MockRepresentationRepository, MockServiceTypeRepository,
};
use std::sync::Mutex;
use time::macros::{date, datetime};
use uuid::Uuid;

/// 11:00 in Paris: the local date is the UTC one.
const NOW: OffsetDateTime = datetime!(2026-11-27 10:00 UTC);

struct World {
    mission: MissionId,
    /// Born 2015: a minor.
    child: Citizen,
    /// Born 1990 (the fixture's): an adult.
    adult: Citizen,
    /// Another adult of the mission, the representative.
    parent: Citizen,
    /// A citizen of another mission.
    stranger: Citizen,
    /// The child's birth certificate.
    evidence: Document,
    /// The parent's own document.
    parents_document: Document,
    service: consular_domain::ServiceType,
}

fn citizen_of(mission: MissionId, born: Date) -> Citizen {
    Citizen { date_of_birth: born, ..fixtures::citizen(mission, NOW) }
}

fn document_of(c: &Citizen) -> Document {
    let new = NewDocument {
        mission_id: c.mission_id,
        citizen_id: c.id,
        request_id: None,
        kind: "birth_certificate".to_owned(),
        file_name: "birth.pdf".to_owned(),
        media_type: "application/pdf".to_owned(),
        size_bytes: 10,
        sha256: "0".repeat(64),
        scan: ScanStatus::NotConfigured,
    };
    let by = Subject { kind: PrincipalKind::Citizen, id: PrincipalId(c.id.as_uuid()) };
    Document::upload(new, "documents/0123".to_owned(), by, NOW)
}

fn world() -> World {
    let mission = MissionId::new();
    let child = citizen_of(mission, date!(2015 - 03 - 01));
    let parent = citizen_of(mission, date!(1985 - 01 - 01));
    World {
        mission,
        evidence: document_of(&child),
        parents_document: document_of(&parent),
        child,
        adult: citizen_of(mission, date!(1990 - 04 - 12)),
        parent,
        stranger: citizen_of(MissionId::new(), date!(1980 - 01 - 01)),
        service: service_type(true),
    }
}

/// The ports over `w` (citizens, documents and the service type found by id), with
/// `representations` and the access log `log`.
fn ports(
    w: &World,
    representations: MockRepresentationRepository,
    log: MockAccessLogRepository,
) -> RepresentationPorts {
    let people = [w.child.clone(), w.adult.clone(), w.parent.clone(), w.stranger.clone()];
    let mut citizens = MockCitizenRepository::new();
    citizens.expect_get().returning(move |id| Ok(people.iter().find(|c| c.id == id).cloned()));
    let files = [w.evidence.clone(), w.parents_document.clone()];
    let mut documents = MockDocumentRepository::new();
    documents.expect_get().returning(move |id| Ok(files.iter().find(|d| d.id == id).cloned()));
    let known = w.service.clone();
    let mut service_types = MockServiceTypeRepository::new();
    service_types
        .expect_get_many()
        .returning(move |ids| Ok(ids.iter().filter(|id| **id == known.id).map(|_| known.clone()).collect()));
    let mut clock = MockClock::new();
    clock.expect_now().return_const(NOW);
    RepresentationPorts {
        representations: Arc::new(representations),
        citizens: Arc::new(citizens),
        documents: Arc::new(documents),
        service_types: Arc::new(service_types),
        missions: Arc::new(any_mission()),
        access: AccessRecorder::new(Arc::new(log)),
        clock: Arc::new(clock),
    }
}

fn service(w: &World, representations: MockRepresentationRepository) -> RepresentationService {
    RepresentationService::new(ports(w, representations, MockAccessLogRepository::new()))
}

fn staff(mission: MissionId) -> Principal {
    principal(PrincipalKind::Staff, Uuid::now_v7(), "staff", Some(mission))
}

fn citizen_token(c: &Citizen) -> Principal {
    principal(PrincipalKind::Citizen, c.id.as_uuid(), "citizen", Some(c.mission_id))
}

fn parent_of_child(w: &World) -> NewRepresentation {
    NewRepresentation {
        representative_id: w.parent.id,
        kind: RepresentationKind::Parent,
        service_type_ids: None,
        valid_from: date!(2026 - 01 - 01),
        valid_until: None,
        evidence_document_id: w.evidence.id,
    }
}

fn stored(w: &World, kind: RepresentationKind, dependant: &Citizen) -> Representation {
    NewRepresentation { kind, ..parent_of_child(w) }.into_representation(
        dependant.id,
        w.mission,
        staff(w.mission).subject,
        NOW,
    )
}

fn pointers(result: Result<RepresentationView, ServiceError>) -> Vec<(String, String)> {
    match result {
        Err(ServiceError::Validation(e)) => e.0.into_iter().map(|e| (e.pointer, e.code)).collect(),
        other => panic!("not a validation error: {other:?}"),
    }
}

#[tokio::test]
async fn the_missions_staff_create_a_representation_with_its_audit_entry() {
    let w = world();
    let mut representations = MockRepresentationRepository::new();
    let (child, parent, mission, services) = (w.child.id, w.parent.id, w.mission, vec![w.service.id]);
    representations.expect_insert().times(1).returning(move |r, meta| {
        assert_eq!((r.dependant_id, r.representative_id, r.mission_id), (child, parent, mission));
        assert_eq!(r.services, ServiceScope::Only(services.clone()));
        assert!(r.ended_at.is_none());
        let audit = &meta.audit[0];
        assert_eq!((audit.action.as_str(), audit.resource_type.as_str()), ("created", RESOURCE));
        assert_eq!(audit.resource_id, r.id.as_uuid());
        assert!(audit.changed_fields.contains(&"service_type_ids".to_owned()));
        Ok(())
    });
    let svc = service(&w, representations);
    let input = NewRepresentation { service_type_ids: Some(vec![w.service.id]), ..parent_of_child(&w) };
    let created = svc.create(&staff(w.mission), w.child.id, input).await.unwrap();
    assert!(created.in_force);
    assert_eq!(created.representation.mission_id, w.mission);
}

#[tokio::test]
async fn citizens_are_refused_the_scope_and_other_missions_see_nothing() {
    let w = world();
    let svc = service(&w, MockRepresentationRepository::new());
    // The would-be representative and the dependant themself alike.
    for token in [citizen_token(&w.parent), citizen_token(&w.child)] {
        let refused = svc.create(&token, w.child.id, parent_of_child(&w)).await;
        assert!(matches!(refused, Err(ServiceError::InsufficientScope { .. })), "{refused:?}");
    }
    let elsewhere = staff(MissionId::new());
    let refused = svc.create(&elsewhere, w.child.id, parent_of_child(&w)).await;
    assert!(matches!(refused, Err(ServiceError::NotFound)), "{refused:?}");
    let refused = svc.list(&elsewhere, Whose::Citizen(w.child.id), PageRequest::default()).await;
    assert!(matches!(refused, Err(ServiceError::NotFound)), "{refused:?}");
    // Another citizen reading the dependant's list: 404, as for an unknown id.
    let refused =
        svc.list(&citizen_token(&w.parent), Whose::Citizen(w.child.id), PageRequest::default()).await;
    assert!(matches!(refused, Err(ServiceError::NotFound)), "{refused:?}");
}

#[tokio::test]
async fn every_refused_field_of_a_creation_is_reported_at_once() {
    let w = world();
    // Nothing is inserted.
    let svc = service(&w, MockRepresentationRepository::new());
    let input = NewRepresentation {
        // From another mission: unknown, as an id that does not exist.
        representative_id: w.stranger.id,
        // The adult is no minor.
        kind: RepresentationKind::Parent,
        service_type_ids: Some(vec![w.service.id, ServiceTypeId::new()]),
        valid_from: date!(2026 - 05 - 01),
        valid_until: Some(date!(2026 - 04 - 30)),
        // The child's certificate is not the adult's document.
        evidence_document_id: w.evidence.id,
    };
    let expected = [
        ("/evidence_document_id", "unknown"),
        ("/kind", "age_mismatch"),
        ("/representative_id", "unknown"),
        ("/service_type_ids/1", "unknown"),
        ("/valid_until", "before_valid_from"),
    ];
    let expected: Vec<_> = expected.iter().map(|(p, c)| (p.to_string(), c.to_string())).collect();
    assert_eq!(pointers(svc.create(&staff(w.mission), w.adult.id, input).await), expected);

    // Themself, an unknown document, an authorised representative for a minor.
    let input = NewRepresentation {
        representative_id: w.child.id,
        kind: RepresentationKind::AuthorisedRepresentative,
        evidence_document_id: DocumentId::new(),
        ..parent_of_child(&w)
    };
    let expected = [
        ("/evidence_document_id", "unknown"),
        ("/kind", "age_mismatch"),
        ("/representative_id", "same_as_dependant"),
    ];
    let expected: Vec<_> = expected.iter().map(|(p, c)| (p.to_string(), c.to_string())).collect();
    assert_eq!(pointers(svc.create(&staff(w.mission), w.child.id, input).await), expected);

    // The parent's own document is no evidence about the child.
    let input = NewRepresentation { evidence_document_id: w.parents_document.id, ..parent_of_child(&w) };
    let expected = vec![("/evidence_document_id".to_owned(), "unknown".to_owned())];
    assert_eq!(pointers(svc.create(&staff(w.mission), w.child.id, input).await), expected);
}

#[tokio::test]
async fn a_minor_represents_nobody() {
    let w = world();
    let svc = service(&w, MockRepresentationRepository::new());
    let input = NewRepresentation {
        representative_id: w.child.id,
        kind: RepresentationKind::AuthorisedRepresentative,
        evidence_document_id: w.parents_document.id,
        ..parent_of_child(&w)
    };
    let expected = vec![("/representative_id".to_owned(), "minor".to_owned())];
    assert_eq!(pointers(svc.create(&staff(w.mission), w.parent.id, input).await), expected);
}

#[tokio::test]
async fn a_guardian_fits_any_age_and_a_deleted_document_is_no_evidence() {
    let mut w = world();
    w.evidence.deleted_at = Some(NOW);
    let svc = service(&w, MockRepresentationRepository::new());
    let input = NewRepresentation { kind: RepresentationKind::Guardian, ..parent_of_child(&w) };
    let expected = vec![("/evidence_document_id".to_owned(), "unknown".to_owned())];
    assert_eq!(pointers(svc.create(&staff(w.mission), w.child.id, input).await), expected);
}

#[tokio::test]
async fn a_second_open_representation_names_the_first() {
    let w = world();
    let first = stored(&w, RepresentationKind::Parent, &w.child);
    let guardian = stored(&w, RepresentationKind::Guardian, &w.child);
    let mut representations = MockRepresentationRepository::new();
    representations
        .expect_insert()
        .returning(|_, _| Err(RepoError::Duplicate { constraint: ONE_REPRESENTATION.to_owned() }));
    let open = vec![guardian, first.clone()];
    representations.expect_between().returning(move |_, _| Ok(open.clone()));
    let svc = service(&w, representations);
    match svc.create(&staff(w.mission), w.child.id, parent_of_child(&w)).await {
        Err(ServiceError::RepresentationExists { existing, .. }) => assert_eq!(existing, first.id),
        other => panic!("not the duplicate: {other:?}"),
    }
}

#[tokio::test]
async fn ending_is_audited_once_and_a_second_end_conflicts() {
    let w = world();
    let open = stored(&w, RepresentationKind::Parent, &w.child);
    let mut ended = open.clone();
    let actor = staff(w.mission);
    (ended.ended_at, ended.ended_by, ended.end_reason) =
        (Some(NOW), Some(actor.subject), Some("moved".into()));
    let mut representations = MockRepresentationRepository::new();
    let (first, id) = (open.clone(), open.id);
    representations.expect_get().times(1).returning(move |_| Ok(Some(first.clone())));
    let done = ended.clone();
    representations.expect_end().times(1).returning(move |got, at, _, reason, meta| {
        assert_eq!((got, at, reason), (id, NOW, "moved"));
        assert_eq!((meta.audit[0].action.as_str(), meta.audit[0].resource_id), ("ended", id.as_uuid()));
        Ok(Some(done.clone()))
    });
    let svc = service(&w, representations);
    let view = svc.end(&actor, w.child.id, open.id, "moved".into()).await.unwrap();
    assert_eq!((view.representation, view.in_force), (ended.clone(), false));

    // Read back ended: 409, and a blank reason is 422 first.
    let mut representations = MockRepresentationRepository::new();
    representations.expect_get().returning(move |_| Ok(Some(ended.clone())));
    let svc = service(&w, representations);
    let again = svc.end(&actor, w.child.id, open.id, "again".into()).await;
    assert!(matches!(again, Err(ServiceError::Conflict { code: "representation_ended", .. })), "{again:?}");
    let blank = svc.end(&actor, w.child.id, open.id, " ".into()).await;
    assert!(matches!(blank, Err(ServiceError::Validation(_))), "{blank:?}");
    // Under another dependant's id it does not exist.
    let elsewhere = svc.end(&actor, w.adult.id, open.id, "moved".into()).await;
    assert!(matches!(elsewhere, Err(ServiceError::NotFound)), "{elsewhere:?}");
}

#[tokio::test]
async fn an_end_that_loses_the_race_conflicts() {
    let w = world();
    let open = stored(&w, RepresentationKind::Parent, &w.child);
    let mut representations = MockRepresentationRepository::new();
    let first = open.clone();
    representations.expect_get().returning(move |_| Ok(Some(first.clone())));
    representations.expect_end().returning(|_, _, _, _, _| Ok(None));
    let svc = service(&w, representations);
    let lost = svc.end(&staff(w.mission), w.child.id, open.id, "moved".into()).await;
    assert!(matches!(lost, Err(ServiceError::Conflict { code: "representation_ended", .. })), "{lost:?}");
}

#[tokio::test]
async fn the_dependant_reads_their_own_and_not_anothers() {
    let w = world();
    let own = stored(&w, RepresentationKind::Parent, &w.child);
    let others = stored(&w, RepresentationKind::Guardian, &w.adult);
    let mut representations = MockRepresentationRepository::new();
    let stored_ones = [own.clone(), others.clone()];
    representations.expect_get().returning(move |id| Ok(stored_ones.iter().find(|r| r.id == id).cloned()));
    let page = vec![own.clone()];
    representations
        .expect_for_dependant()
        .returning(move |_, _| Ok(Page { items: page.clone(), next_after: None }));
    let svc = service(&w, representations);
    let me = citizen_token(&w.child);
    let listed = svc.list(&me, Whose::Me, PageRequest::default()).await.unwrap();
    assert_eq!(listed.items, [RepresentationView { representation: own.clone(), in_force: true }]);
    assert_eq!(svc.get(&me, Whose::Me, own.id).await.unwrap().representation, own);
    let hidden = svc.get(&me, Whose::Me, others.id).await;
    assert!(matches!(hidden, Err(ServiceError::NotFound)), "{hidden:?}");
}

#[tokio::test]
async fn a_representative_lists_the_dependants_in_force_now_and_each_read_is_logged() {
    let w = world();
    let in_force = stored(&w, RepresentationKind::Parent, &w.child);
    let future = NewRepresentation { valid_from: date!(2027 - 01 - 01), ..parent_of_child(&w) }
        .into_representation(w.child.id, w.mission, staff(w.mission).subject, NOW);
    // A parent's mandate over an adult is no longer in force.
    let aged_out = stored(&w, RepresentationKind::Parent, &w.adult);
    let mut elsewhere = stored(&w, RepresentationKind::Guardian, &w.adult);
    elsewhere.mission_id = MissionId::new();
    let held = vec![in_force.clone(), future, aged_out, elsewhere];
    let mut representations = MockRepresentationRepository::new();
    let parent = w.parent.id;
    representations.expect_held_by().withf(move |id| *id == parent).returning(move |_| Ok(held.clone()));
    let logged = Arc::new(Mutex::new(Vec::new()));
    let mut log = MockAccessLogRepository::new();
    let into = logged.clone();
    log.expect_append().returning(move |entries| {
        into.lock().unwrap().extend(entries.iter().cloned());
        Ok(())
    });
    let ports = ports(&w, representations, log);
    let recorder = ports.access.clone();
    let svc = RepresentationService::new(ports);
    let me = citizen_token(&w.parent);
    let dependants = svc.dependants(&me).await.unwrap();
    assert_eq!(dependants.len(), 1);
    assert_eq!(
        (dependants[0].citizen.id, &dependants[0].representation.representation),
        (w.child.id, &in_force)
    );
    recorder.flushed().await.unwrap();
    let logged = logged.lock().unwrap().clone();
    assert_eq!(logged.len(), 1);
    assert_eq!(
        (logged[0].citizen_id, logged[0].actor, logged[0].what),
        (w.child.id, me.subject, AccessedData::Profile)
    );

    let refused = svc.dependants(&staff(w.mission)).await;
    assert!(matches!(refused, Err(ServiceError::InsufficientScope { .. })), "{refused:?}");
}

/// `acting` answering with `representations` of the child (born 2015), in Paris.
fn acting_on(representations: Vec<Representation>) -> MockRepresentationRepository {
    let mut repo = MockRepresentationRepository::new();
    repo.expect_acting().returning(move |_, _| {
        Ok((!representations.is_empty()).then(|| consular_ports::ActingFacts {
            representations: representations.clone(),
            dependant_born: date!(2015 - 03 - 01),
            timezone: "Europe/Paris".to_owned(),
        }))
    });
    repo
}

#[tokio::test]
async fn a_mandate_is_the_union_of_what_is_in_force_at_the_call() {
    let w = world();
    let parent = citizen_token(&w.parent);
    let passports = ServiceTypeId::new();
    let in_scope = Representation {
        services: ServiceScope::Only(vec![passports]),
        ..stored(&w, RepresentationKind::Parent, &w.child)
    };
    // Not valid yet, and a kind that does not fit a minor: neither counts.
    let future = Representation {
        valid_from: date!(2027 - 01 - 01),
        ..stored(&w, RepresentationKind::Guardian, &w.child)
    };
    let unfit = stored(&w, RepresentationKind::AuthorisedRepresentative, &w.child);
    let held = vec![in_scope.clone(), future, unfit];
    let mandate = service(&w, acting_on(held)).mandate(&parent, w.child.id).await.unwrap();
    assert_eq!(mandate.dependant, w.child.id);
    assert_eq!(mandate.services, ServiceScope::Only(vec![passports]));
    assert_eq!(mandate.representations, vec![in_scope.id]);

    // None in force, none at all, or held in another mission than the token's: 404.
    let future_only = Representation {
        valid_from: date!(2027 - 01 - 01),
        ..stored(&w, RepresentationKind::Parent, &w.child)
    };
    for held in
        [vec![future_only], Vec::new(), vec![Representation { mission_id: MissionId::new(), ..in_scope }]]
    {
        let refused = service(&w, acting_on(held)).mandate(&parent, w.child.id).await;
        assert!(matches!(refused, Err(ServiceError::NotFound)), "{refused:?}");
    }
}

#[tokio::test]
async fn only_a_citizens_own_token_acts_for_someone() {
    let w = world();
    // Nothing is read for staff, nor for a call already acting.
    let svc = service(&w, MockRepresentationRepository::new());
    let refused = svc.mandate(&staff(w.mission), w.child.id).await;
    assert!(matches!(refused, Err(ServiceError::InsufficientScope { .. })), "{refused:?}");
    let mut acting = citizen_token(&w.parent);
    acting.acting_for = Some(consular_domain::Mandate {
        dependant: w.adult.id,
        mission: w.mission,
        services: ServiceScope::All,
        representations: Vec::new(),
    });
    let refused = svc.mandate(&acting, w.child.id).await;
    assert!(matches!(refused, Err(ServiceError::Forbidden(_))), "{refused:?}");
}
