//! The outbox's leases: a worker that dies holding mail leaves it for at most a short lease, and a
//! live worker renews its lease mail by mail, so that no other takes what it is about to send.

use std::time::Duration as StdDuration;

use chrono::Duration;
use kuryr::db::StorageError;
use kuryr::db::outbox as stored;
use kuryr::mail::Mailer;
use kuryr::service::outbox::{Delivered, LEASE};

use crate::helpers::{TestApp, spawn_app};
use crate::smtp::{ReceivedMail, TestSmtp};

/// Waits (without blocking the test's one thread, which the worker shares) until `done`.
async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + StdDuration::from_secs(10);
    while !done() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "waited 10 s for {what}"
        );
        tokio::time::sleep(StdDuration::from_millis(10)).await;
    }
}

/// One round of `app`'s worker, which must not be kept waiting by the held SMTP server: it would
/// be if it took, and began to send, a mail that another worker is sending.
async fn deliver_nothing_held(app: &TestApp, mailer: &Mailer) -> Delivered {
    tokio::time::timeout(StdDuration::from_secs(5), app.deliver(mailer))
        .await
        .expect("the worker took a mail that another live worker holds")
}

/// Each mail arrived once: the recipients of what `smtp` accepted, sorted.
fn recipients_once(smtp: &TestSmtp) -> Vec<String> {
    let mut ids = Vec::new();
    let mut to: Vec<String> = smtp
        .messages()
        .iter()
        .map(|envelope| {
            let mail = ReceivedMail::from_envelope(envelope);
            ids.push(mail.header("Message-ID").expect("a Message-ID"));
            mail.to
        })
        .collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), to.len(), "a mail arrived twice: {to:?}");
    to.sort();
    to
}

#[actix_web::test]
async fn a_crashed_workers_mail_goes_out_again_within_a_minute_and_once() {
    let app = spawn_app().await;
    // Three confirmation mails wait in the outbox.
    for name in ["alice", "bob", "carol"] {
        app.user(name).await;
    }
    let smtp = TestSmtp::start();
    smtp.hold();
    {
        let mailer = app.mailer(&smtp);
        let crashing = app.deliver(&mailer);
        tokio::select! {
            delivered = crashing => panic!("the held mail was delivered: {delivered:?}"),
            () = until("the first mail to be in hand", || smtp.held() == 1) => {}
        }
        // The worker dies here, like a process killed with SIGKILL: it has claimed all three,
        // is sending the first, and records nothing.
    }
    smtp.refuse_held();
    assert!(smtp.messages().is_empty());

    let restarted = app.another_process().await;
    let mailer = restarted.mailer(&smtp);
    assert_eq!(
        restarted.deliver(&mailer).await,
        Delivered::default(),
        "the dead worker's lease still holds"
    );
    app.clock.advance(Duration::seconds(60));
    assert_eq!(restarted.deliver(&mailer).await.sent, 3);
    assert_eq!(
        recipients_once(&smtp),
        ["alice@example.org", "bob@example.org", "carol@example.org"]
    );
    app.clock.advance(Duration::hours(1));
    assert_eq!(restarted.deliver(&mailer).await, Delivered::default());
    assert_eq!(smtp.messages().len(), 3);
}

#[actix_web::test]
async fn a_live_worker_renews_its_lease_and_no_other_worker_takes_its_mail() {
    let app = spawn_app().await;
    // A time with a fraction of a second, which each backend stores at its own precision.
    app.clock.advance(Duration::nanoseconds(123_456_789));
    app.user("alice").await;
    app.user("bob").await;
    let smtp = TestSmtp::start();
    smtp.hold();
    let other = app.another_process().await;
    let (mailer, other_mailer) = (app.mailer(&smtp), other.mailer(&smtp));

    let meanwhile = async {
        until("the first mail to be in hand", || smtp.held() == 1).await;
        // Both mails were claimed together; neither lease has run out yet.
        app.clock.advance(LEASE - Duration::seconds(5));
        assert_eq!(
            deliver_nothing_held(&other, &other_mailer).await,
            Delivered::default()
        );
        smtp.let_through(1);
        until("the second mail to be in hand", || {
            smtp.messages().len() == 1 && smtp.held() == 1
        })
        .await;
        // The lease of the claim has run out; the one renewed before the second mail has not.
        app.clock.advance(Duration::seconds(10));
        assert_eq!(
            deliver_nothing_held(&other, &other_mailer).await,
            Delivered::default()
        );
        smtp.open();
    };
    let (delivered, ()) = tokio::join!(app.deliver(&mailer), meanwhile);
    assert_eq!(delivered.sent, 2);
    assert_eq!(
        recipients_once(&smtp),
        ["alice@example.org", "bob@example.org"]
    );
    app.clock.advance(Duration::hours(1));
    assert_eq!(other.deliver(&other_mailer).await, Delivered::default());
    assert_eq!(smtp.messages().len(), 2);
}

#[actix_web::test]
async fn a_lease_another_worker_took_over_is_neither_renewed_nor_released_by_its_old_holder() {
    let app = spawn_app().await;
    app.clock.advance(Duration::nanoseconds(987_654_321));
    app.user("alice").await;
    let first = app.clock.now_naive();
    let taken_over = first + LEASE + Duration::seconds(1);
    let outcome = app
        .db
        .write(move |conn| {
            let (row, _) = stored::claim_due(conn, first, first + LEASE, 20)?
                .pop()
                .expect("the confirmation mail is claimed");
            let old = row.locked_until.expect("a lease");
            let (again, _) = stored::claim_due(conn, taken_over, taken_over + LEASE, 20)?
                .pop()
                .expect("claimed again once the lease ran out");
            let new = again.locked_until.expect("a lease");
            let renewed_by_old = stored::renew(conn, &row.id, old, taken_over + LEASE * 2)?;
            stored::release(conn, &[(row.id.clone(), old)])?;
            let still_claimed = stored::claim_due(conn, taken_over, taken_over + LEASE, 20)?;
            let renewed_by_new = stored::renew(conn, &row.id, new, taken_over + LEASE * 2)?;
            Ok::<_, StorageError>((renewed_by_old, still_claimed.len(), renewed_by_new))
        })
        .await
        .unwrap();
    assert_eq!(outcome, (false, 0, true));
}
