//! The SMTP receiver's store: each accepted message goes into the inbox before the receiver
//! answers `250`, so a mail the sending server was told is accepted is never lost.

use std::sync::Arc;

use tokio::runtime::Handle;

use crate::db::Database;
use crate::mail::receiver::{Accepted, Store};
use crate::service::inbox::{self, Incoming, Source};
use crate::service::model::time::Clock;

/// Stores the receiver's mail in the inbox, on the server's runtime.
pub struct Inbox {
    pub db: Database,
    pub clock: Arc<dyn Clock>,
    /// The receiver's sessions are threads of their own; the store runs on the server's runtime
    /// and the session waits for it.
    pub runtime: Handle,
}

impl Store for Inbox {
    fn store(&self, mail: Accepted) -> Result<(), String> {
        let incoming = Incoming {
            raw: mail.raw,
            source: Source::Smtp,
            envelope_from: Some(mail.mail_from),
            webhook_id: None,
        };
        let stored = self
            .runtime
            .block_on(inbox::receive(&self.db, incoming, self.clock.now()));
        match stored {
            Ok(received) => {
                tracing::info!(client = %mail.client, ?received, "inbound mail stored");
                Ok(())
            }
            Err(e) => {
                tracing::error!(error = %e, "inbound mail not stored");
                Err(e.to_string())
            }
        }
    }
}
