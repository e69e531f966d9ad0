#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use time::macros::datetime;

fn email(kind: NotificationKind, language: Language, details: Details) -> Email {
    let now = datetime!(2027-03-01 09:00 UTC);
    Email { language, details, ..consular_domain::fixtures::email("citizen@example.org", kind, now) }
}

fn full_details() -> Details {
    Details {
        service: Some("Passport renewal".to_owned()),
        status: Some("in_review".to_owned()),
        reason: Some("The photo is <script>alert(1)</script> & blurred".to_owned()),
        stage: Some("Biometrics".to_owned()),
        document_id: Some(uuid::Uuid::now_v7()),
        document_kind: Some("passport_photo".to_owned()),
        appointment_id: Some(uuid::Uuid::now_v7()),
        starts_at: Some(datetime!(2027-03-02 09:00 UTC)),
        local_time: Some("2027-03-02 10:00".to_owned()),
        timezone: Some("Europe/Paris".to_owned()),
        mission: Some("Consulate General in Lyon".to_owned()),
    }
}

#[test]
fn every_kind_renders_in_every_language_with_full_and_empty_details() {
    for kind in NotificationKind::ALL {
        for language in Language::ALL {
            for details in [full_details(), Details::default()] {
                let full = details != Details::default();
                let what = format!("{kind} in {language} (full details: {full})");
                let rendered =
                    render(&email(kind, language, details)).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(!rendered.subject.is_empty() && !rendered.subject.contains('\n'), "{what}");
                assert!(rendered.text.lines().count() >= 4, "{what}: {}", rendered.text);
                assert!(rendered.html.contains("<p>"), "{what}: {}", rendered.html);
                for part in [&rendered.subject, &rendered.text, &rendered.html] {
                    let lower = part.to_lowercase();
                    assert!(!lower.contains("none") && !lower.contains("undefined"), "{what}: {part}");
                    assert!(!lower.contains("http") && !lower.contains("www."), "{what}: a link in {part}");
                }
                for loads in ["href", "src=", "url(", "<img", "<link", "<script"] {
                    assert!(!rendered.html.contains(loads), "{what}: {loads} in {}", rendered.html);
                }
                assert!(rendered.html.contains(&format!("<html lang=\"{language}\">")), "{what}");
                let footer = match language {
                    Language::En => "This is an automated message from the consular services; do not reply.",
                    Language::Fr => "Ce message est envoyé automatiquement par les services consulaires",
                };
                assert!(rendered.text.contains(footer) && rendered.html.contains(footer), "{what}");
            }
        }
    }
}

#[test]
fn every_kind_has_its_own_template_in_every_language() {
    let env = ENVIRONMENT.as_ref().unwrap();
    for kind in NotificationKind::ALL {
        for language in Language::ALL {
            for format in ["txt", "html"] {
                let name = format!("{language}/{kind}.{format}");
                assert!(env.get_template(&name).is_ok(), "{name} is missing");
            }
        }
    }
}

#[test]
fn a_kind_missing_in_a_language_falls_back_to_english() {
    let mut env = Environment::new();
    env.add_template("en/request_submitted.txt", "x").unwrap();
    assert_eq!(template_name(&env, NotificationKind::RequestSubmitted, Language::Fr), "en/request_submitted");
    env.add_template("fr/request_submitted.txt", "x").unwrap();
    assert_eq!(template_name(&env, NotificationKind::RequestSubmitted, Language::Fr), "fr/request_submitted");
}

#[test]
fn html_escapes_values_and_text_keeps_them() {
    let rendered = render(&email(NotificationKind::DocumentRejected, Language::En, full_details())).unwrap();
    assert!(
        rendered.html.contains("The photo is &lt;script&gt;alert(1)&lt;&#x2f;script&gt; &amp; blurred"),
        "{}",
        rendered.html
    );
    assert!(!rendered.html.contains("<script>"));
    assert!(
        rendered.text.contains("Reason: The photo is <script>alert(1)</script> & blurred"),
        "{}",
        rendered.text
    );
}

#[test]
fn english_and_french_say_the_same_thing_in_their_language() {
    let en = render(&email(NotificationKind::RequestStatusChanged, Language::En, full_details())).unwrap();
    assert_eq!(en.subject, "The status of your request has changed");
    assert!(en.text.starts_with("Hello,\n\nThe status of your request has changed.\n\n"), "{}", en.text);
    assert!(en.text.contains("Request: Passport renewal\nNew status: in review\nReason: "), "{}", en.text);
    assert!(
        en.text
            .ends_with("\n\n-- \nThis is an automated message from the consular services; do not reply.\n")
    );

    let fr = render(&email(NotificationKind::RequestStatusChanged, Language::Fr, full_details())).unwrap();
    assert_eq!(fr.subject, "Le statut de votre demande a changé");
    assert!(fr.text.starts_with("Bonjour,\n\n"), "{}", fr.text);
    assert!(fr.text.contains("Nouveau statut : en cours d'examen"), "{}", fr.text);
    assert!(fr.html.contains("Nouveau statut : en cours d&#x27;examen"), "{}", fr.html);
    assert!(fr.html.contains("<title>Le statut de votre demande a changé</title>"), "{}", fr.html);

    let submitted =
        render(&email(NotificationKind::RequestSubmitted, Language::Fr, Details::default())).unwrap();
    assert_eq!(submitted.subject, "Votre demande a bien été reçue");
    let submitted =
        render(&email(NotificationKind::RequestSubmitted, Language::En, Details::default())).unwrap();
    assert_eq!(submitted.subject, "Your request was received");
}

#[test]
fn appointments_give_the_local_time_its_zone_and_the_mission() {
    let reminder =
        render(&email(NotificationKind::AppointmentReminder, Language::En, full_details())).unwrap();
    assert!(
        reminder.text.contains("When: 2027-03-02 10:00 (Europe/Paris)\nWhere: Consulate General in Lyon\n"),
        "{}",
        reminder.text
    );
    assert!(
        reminder
            .html
            .contains("When: 2027-03-02 10:00 (Europe&#x2f;Paris)<br>\nWhere: Consulate General in Lyon</p>"),
        "{}",
        reminder.html
    );

    let only_instant = Details { starts_at: Some(datetime!(2027-03-02 09:00 UTC)), ..Details::default() };
    let booked = render(&email(NotificationKind::AppointmentBooked, Language::Fr, only_instant)).unwrap();
    assert!(booked.text.contains("Date : 2027-03-02 09:00 (UTC)\n"), "{}", booked.text);
    assert!(!booked.text.contains("Lieu"), "{}", booked.text);
}

#[test]
fn statuses_and_document_kinds_read_as_words() {
    assert_eq!(status_label(Language::En, "action_required"), "action required from you");
    assert_eq!(status_label(Language::Fr, "approved"), "approuvée");
    assert_eq!(status_label(Language::Fr, "on_hold"), "on hold");
    for status in
        ["submitted", "in_review", "action_required", "approved", "rejected", "completed", "cancelled"]
    {
        for language in Language::ALL {
            assert!(!status_label(language, status).contains('_'), "{status} in {language}");
        }
    }
    let verified = render(&email(NotificationKind::DocumentVerified, Language::En, full_details())).unwrap();
    assert!(verified.text.contains("Document: passport photo\n"), "{}", verified.text);
}

#[test]
fn the_staff_message_email_never_carries_a_body() {
    let rendered = render(&email(NotificationKind::MessageFromStaff, Language::En, full_details())).unwrap();
    assert!(rendered.text.contains("read it in the consular services portal"), "{}", rendered.text);
}

#[test]
fn paragraphs_and_tidying() {
    assert_eq!(split_paragraphs("\n a \n b\n\n\n c \n"), vec![vec!["a", "b"], vec!["c"]]);
    assert_eq!(paragraphs(Value::from("x < y\n\nz")).as_str(), Some("<p>x &lt; y</p>\n<p>z</p>"));
    assert_eq!(tidy("\n\na  \n\n\n\nb\n-- \nc\n\n"), "a\n\nb\n-- \nc\n");
}

#[test]
fn an_email_to_a_representative_first_names_whom_it_is_about() {
    let cases = [
        (Language::En, "Hello,", "This message is about Mia <Jr>, whom you represent."),
        (Language::Fr, "Bonjour,", "Ce message concerne Mia <Jr>, que vous représentez."),
    ];
    for (language, greeting, line) in cases {
        let to_parent = Email {
            about: Some("Mia <Jr>".to_owned()),
            ..email(NotificationKind::AppointmentBooked, language, full_details())
        };
        let rendered = render(&to_parent).unwrap();
        assert!(rendered.text.starts_with(&format!("{greeting}\n\n{line}\n\n")), "{}", rendered.text);
        assert!(
            rendered.html.contains("Mia &lt;Jr&gt;") && !rendered.html.contains("<Jr>"),
            "{}",
            rendered.html
        );
        let own = render(&email(NotificationKind::AppointmentBooked, language, full_details())).unwrap();
        assert!(!own.text.contains("Mia") && !own.html.contains("Mia"), "the dependant's own names nobody");
    }
}
