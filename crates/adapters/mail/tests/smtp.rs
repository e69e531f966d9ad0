//! The SMTP mailer against a real SMTP server (aiosmtpd on loopback, from testkit).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use consular_domain::fixtures;
use consular_domain::notification::{Details, Email, EmailStatus, Language, NotificationKind};
use consular_mail::SmtpMailer;
use consular_ports::{MailError, Mailer};
use consular_testkit::smtp::{SmtpServer, free_port, parse};
use std::time::Duration;
use time::macros::datetime;

const FROM: &str = "Consular Services <no-reply@consulate.example>";
const WAIT: Duration = Duration::from_secs(10);

fn email(to: &str, language: Language, kind: NotificationKind) -> Email {
    let now = datetime!(2027-03-01 09:00 UTC);
    Email {
        language,
        details: Details {
            service: Some("Passport renewal".to_owned()),
            status: Some("in_review".to_owned()),
            reason: Some("Photo <b>blurred</b> — à refaire".to_owned()),
            ..Details::default()
        },
        status: EmailStatus::Sending,
        attempts: 1,
        next_attempt_at: None,
        ..fixtures::email(to, kind, now)
    }
}

#[tokio::test]
async fn english_and_french_emails_arrive_with_both_alternatives() {
    let server = SmtpServer::start();
    let mailer = SmtpMailer::new(&server.url(), FROM).unwrap();
    let en = email("citizen@example.org", Language::En, NotificationKind::RequestStatusChanged);
    let fr = email("Citoyenne@Example.org", Language::Fr, NotificationKind::RequestStatusChanged);
    mailer.send(&en).await.unwrap();
    mailer.send(&fr).await.unwrap();

    let messages = server.wait_for(2, WAIT);
    assert_eq!(messages.len(), 2);
    let (got_en, got_fr) = (parse(&messages[0]), parse(&messages[1]));

    assert_eq!(got_en.to, ["citizen@example.org"]);
    assert_eq!(got_en.from.as_deref(), Some("no-reply@consulate.example"));
    assert_eq!(got_en.subject.as_deref(), Some("The status of your request has changed"));
    assert_eq!(got_en.message_id, Some(format!("{}@consulate.example", en.id)));
    assert_eq!(got_en.content_type.as_deref(), Some("multipart/alternative"));
    assert_eq!(got_en.part_types, ["text/plain", "text/html"]);
    let text = got_en.text.unwrap();
    assert!(text.contains("New status: in review"), "{text}");
    assert!(text.contains("Reason: Photo <b>blurred</b> — à refaire"), "{text}");
    assert!(
        text.contains("This is an automated message from the consular services; do not reply."),
        "{text}"
    );
    let html = got_en.html.unwrap();
    assert!(html.contains("<p>Hello,</p>") && html.contains("New status: in review"), "{html}");
    assert!(html.contains("Photo &lt;b&gt;blurred&lt;&#x2f;b&gt; — à refaire"), "{html}");
    assert!(
        got_en.headers.iter().any(|(name, value)| name == "Auto-Submitted" && value == "auto-generated"),
        "{:?}",
        got_en.headers
    );

    assert_eq!(got_fr.to, ["Citoyenne@Example.org"]);
    assert_eq!(got_fr.subject.as_deref(), Some("Le statut de votre demande a changé"));
    assert_eq!(got_fr.message_id, Some(format!("{}@consulate.example", fr.id)));
    assert_eq!(got_fr.part_types, ["text/plain", "text/html"]);
    let text = got_fr.text.unwrap();
    assert!(text.starts_with("Bonjour,") && text.contains("Nouveau statut : en cours d'examen"), "{text}");
    assert!(text.contains("merci de ne pas y répondre"), "{text}");
    let html = got_fr.html.unwrap();
    assert!(
        html.contains("<html lang=\"fr\">") && html.contains("Nouveau statut : en cours d&#x27;examen"),
        "{html}"
    );
}

#[tokio::test]
async fn a_resend_carries_the_same_message_id() {
    let server = SmtpServer::start();
    let mailer = SmtpMailer::new(&server.url(), FROM).unwrap();
    let email = email("citizen@example.org", Language::En, NotificationKind::MessageFromStaff);
    mailer.send(&email).await.unwrap();
    mailer.send(&email).await.unwrap();
    let ids: Vec<_> = server.wait_for(2, WAIT).iter().map(|raw| parse(raw).message_id).collect();
    assert_eq!(
        ids,
        [Some(format!("{}@consulate.example", email.id)), Some(format!("{}@consulate.example", email.id))]
    );
}

#[tokio::test]
async fn a_5xx_reply_is_permanent_and_a_4xx_reply_temporary() {
    let server = SmtpServer::start();
    let mailer = SmtpMailer::new(&server.url(), FROM).unwrap();

    let rejected =
        mailer.send(&email("reject-me@example.org", Language::En, NotificationKind::RequestSubmitted)).await;
    match rejected {
        Err(MailError::Permanent(text)) => assert_eq!(text, "550 5.1.1 no such mailbox"),
        other => panic!("{other:?}"),
    }
    let busy =
        mailer.send(&email("busy@example.org", Language::Fr, NotificationKind::RequestSubmitted)).await;
    match busy {
        Err(MailError::Temporary(text)) => assert_eq!(text, "451 4.3.0 try again later"),
        other => panic!("{other:?}"),
    }
    // The same mailer goes on sending after both.
    mailer.send(&email("ok@example.org", Language::En, NotificationKind::RequestSubmitted)).await.unwrap();
    let messages = server.wait_for(1, WAIT);
    assert_eq!(messages.len(), 1);
    assert_eq!(parse(&messages[0]).to, ["ok@example.org"]);
}

#[tokio::test]
async fn an_address_that_cannot_be_a_recipient_is_permanent() {
    // Nothing listens: the address is refused before any connection.
    let mailer = SmtpMailer::new(&format!("smtp://127.0.0.1:{}", free_port()), FROM).unwrap();
    for to in ["not an address", "", "a@b@c", "citizen@"] {
        match mailer.send(&email(to, Language::En, NotificationKind::RequestSubmitted)).await {
            Err(MailError::Permanent(text)) => assert!(text.contains("invalid recipient address"), "{text}"),
            other => panic!("{to:?}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_server_that_is_not_listening_is_temporary() {
    let mailer = SmtpMailer::new(&format!("smtp://127.0.0.1:{}", free_port()), FROM).unwrap();
    match mailer.send(&email("citizen@example.org", Language::En, NotificationKind::RequestSubmitted)).await {
        Err(MailError::Temporary(text)) => assert!(text.to_lowercase().contains("connect"), "{text}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_as_temporary() {
    // Accepts connections (the kernel's backlog) but never greets.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("smtp://127.0.0.1:{}", silent.local_addr().unwrap().port());
    let mailer = SmtpMailer::with_timeout(&url, FROM, Duration::from_millis(500)).unwrap();
    let started = std::time::Instant::now();
    match mailer.send(&email("citizen@example.org", Language::En, NotificationKind::RequestSubmitted)).await {
        Err(MailError::Temporary(text)) => assert!(text.contains("did not finish within"), "{text}"),
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
}

#[tokio::test]
async fn sending_goes_on_after_the_server_restarts() {
    let server = SmtpServer::start();
    let (port, dir) = (server.port, server.dir.clone());
    let mailer = SmtpMailer::new(&server.url(), FROM).unwrap();
    mailer
        .send(&email("first@example.org", Language::En, NotificationKind::AppointmentBooked))
        .await
        .unwrap();
    server.wait_for(1, WAIT);

    server.stop();
    match mailer.send(&email("down@example.org", Language::En, NotificationKind::AppointmentBooked)).await {
        Err(MailError::Temporary(_)) => {}
        other => panic!("while the server is down: {other:?}"),
    }

    let server = SmtpServer::start_on(port, &dir);
    mailer
        .send(&email("second@example.org", Language::Fr, NotificationKind::AppointmentReminder))
        .await
        .unwrap();
    let messages = server.wait_for(2, WAIT);
    let to: Vec<_> = messages.iter().map(|raw| parse(raw).to).collect();
    assert_eq!(to, [["first@example.org"], ["second@example.org"]]);
    assert_eq!(parse(&messages[1]).subject.as_deref(), Some("Rappel de votre rendez-vous"));
}
