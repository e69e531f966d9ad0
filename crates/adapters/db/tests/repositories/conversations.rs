//! Notes and messages on a service request.

use super::*;

async fn notes_and_messages_are_paged_oldest_first(db: Database) {
    let paris = stored_mission(&db, "fr-paris").await;
    let passport = stored_service_type(&db, "passport").await;
    let alice = stored_citizen(&db, paris.id, "AA1").await;
    let r = stored_request(&db, request(paris.id, alice.id, &passport)).await;
    let other = stored_request(&db, request(paris.id, alice.id, &passport)).await;

    let mut notes = Vec::new();
    for i in 0..5 {
        let n = note(r.id, &format!("note {i}: Quotes \" and ünïcode ✓"));
        let meta = WriteMeta {
            events: vec![outbox_event("note.added", r.id.0)],
            ..audited("service_request", r.id.0)
        };
        RequestRepository::add_note(&db, &n, &meta).await.unwrap();
        notes.push(n);
    }
    RequestRepository::add_note(&db, &note(other.id, "elsewhere"), &WriteMeta::default()).await.unwrap();
    let mut messages = Vec::new();
    for (i, kind) in
        [PrincipalKind::Citizen, PrincipalKind::Staff, PrincipalKind::Admin].into_iter().enumerate()
    {
        let m = message(r.id, &format!("message {i}"), kind);
        let meta = with_events(vec![outbox_event("message.posted", r.id.0)]);
        RequestRepository::add_message(&db, &m, &meta).await.unwrap();
        messages.push(m);
    }
    assert_eq!(db.count_rows("audit_events").await.unwrap(), 5);
    assert_eq!(all_outbox_events(&db).await.len(), 8);

    let page = |after: Option<Uuid>| PageRequest { limit: 2, after };
    let first = RequestRepository::notes(&db, r.id, page(None)).await.unwrap();
    assert_eq!(first, Page { items: notes[..2].to_vec(), next_after: Some(notes[1].id) });
    let second = RequestRepository::notes(&db, r.id, page(first.next_after)).await.unwrap();
    assert_eq!(second, Page { items: notes[2..4].to_vec(), next_after: Some(notes[3].id) });
    let last = RequestRepository::notes(&db, r.id, page(second.next_after)).await.unwrap();
    assert_eq!(last, Page { items: notes[4..].to_vec(), next_after: None });
    let all = RequestRepository::notes(&db, r.id, PageRequest::default()).await.unwrap();
    assert_eq!(all, Page { items: notes.clone(), next_after: None });

    let first = RequestRepository::messages(&db, r.id, page(None)).await.unwrap();
    assert_eq!(first, Page { items: messages[..2].to_vec(), next_after: Some(messages[1].id) });
    let last = RequestRepository::messages(&db, r.id, page(first.next_after)).await.unwrap();
    assert_eq!(last, Page { items: messages[2..].to_vec(), next_after: None });
    assert_eq!(RequestRepository::messages(&db, other.id, PageRequest::default()).await.unwrap().items, []);
    assert_eq!(RequestRepository::notes(&db, other.id, PageRequest::default()).await.unwrap().items.len(), 1);
    assert_eq!(
        RequestRepository::notes(&db, RequestId::new(), PageRequest::default()).await.unwrap().items,
        []
    );

    // The detail: the same request, history, thread and notes in one read; the notes only
    // when asked for; nothing for an unknown request.
    let detail = RequestRepository::detail(&db, r.id, true).await.unwrap().unwrap();
    assert_eq!(detail.request, RequestRepository::get(&db, r.id).await.unwrap().unwrap());
    assert_eq!(detail.required_documents, passport.required_documents);
    assert_eq!(detail.history, db.history(r.id).await.unwrap());
    assert_eq!(detail.history.len(), 1);
    assert_eq!((detail.messages, detail.notes), (messages, Some(notes)));
    assert_eq!((detail.documents, detail.appointments), (vec![], vec![]));
    let without_notes = RequestRepository::detail(&db, other.id, false).await.unwrap().unwrap();
    assert_eq!((without_notes.request.id, without_notes.notes), (other.id, None));
    assert_eq!(RequestRepository::detail(&db, RequestId::new(), true).await.unwrap(), None);
}

async fn a_note_or_message_on_an_unknown_request_stores_nothing(db: Database) {
    let unknown = RequestId::new();
    let meta = WriteMeta {
        events: vec![outbox_event("note.added", unknown.0)],
        ..audited("service_request", unknown.0)
    };
    let refused = RequestRepository::add_note(&db, &note(unknown, "lost"), &meta).await;
    assert!(matches!(refused, Err(RepoError::Other(_))), "{refused:?}");
    let refused =
        RequestRepository::add_message(&db, &message(unknown, "lost", PrincipalKind::Citizen), &meta).await;
    assert!(matches!(refused, Err(RepoError::Other(_))), "{refused:?}");
    for table in ["request_notes", "request_messages", "audit_events", "outbox_events"] {
        assert_eq!(db.count_rows(table).await.unwrap(), 0, "{table}");
    }
}

on_both_databases!(
    notes_and_messages_are_paged_oldest_first,
    a_note_or_message_on_an_unknown_request_stores_nothing,
);
