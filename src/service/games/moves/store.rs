//! A decided move stored: one conditional write of the game, the move, the mail and the events,
//! refused (and decided again inside the write) when anything it was decided from has changed.

use chrono::{DateTime, Utc};
use serde_json::value::RawValue;

use crate::auth::Caller;
use crate::db::events::NewEvent;
use crate::db::models::{Move, OutboxRow};
use crate::db::users::SessionKey;
use crate::db::{self, DbConn};
use crate::mail::ConditionalPlayed;
use crate::service::effects::chance::Chance;
use crate::service::effects::games::race;
use crate::service::effects::mail;
use crate::service::effects::ratings;
use crate::service::model::error::ServiceError;
use crate::service::model::game::{GameState, PlayedMove};
use crate::service::model::rating::RatingChanges;
use crate::service::model::users::Recipient;

/// What a legal move writes, and what its caller is answered once it is stored.
pub(super) struct MovePlan {
    /// The game as the move leaves it.
    pub game: GameState,
    /// The same, as stored.
    pub row: db::models::Game,
    /// The game as read: it is stored only if it is still at that ply.
    pub read: db::games::AsRead,
    pub caller: Caller,
    pub mv: Move,
    pub chance: Chance,
    pub mail: Option<OutboxRow>,
    /// Mail beyond the first: the planned replies' player's, when a reply ended the game.
    pub more_mail: Vec<OutboxRow>,
    /// The notice of planned replies played.
    pub notice: Option<Notice>,
    /// What the end of a rated game does to its players' ratings.
    pub rated: Option<RatingChanges>,
    /// The game after the move as clients see it, as JSON: the answer, and the events' data.
    pub view: Box<RawValue>,
    pub events: Vec<NewEvent>,
}

/// The notice to the player whose planned replies were played (their settings decide whether
/// it is mailed now, kept for their digest, or not sent).
pub(super) struct Notice {
    pub to: Recipient,
    pub game_id: String,
    pub mail: ConditionalPlayed,
    pub now: DateTime<Utc>,
}

/// Stores a decided move, on condition that neither the game nor the caller's session changed
/// since they were read; when either did, the move is decided again inside the write (which
/// tells a lost race from an ended session).
pub(super) fn store(conn: &mut DbConn, plan: &MovePlan) -> Result<PlayedMove, ServiceError> {
    let session = plan
        .caller
        .credential
        .login_session()
        .map(|session| SessionKey {
            user_id: &plan.caller.id,
            version: session.version,
            id: &session.id,
        });
    let stored = db::played::store(
        conn,
        &db::played::PlayedMove {
            game: &plan.row,
            read: plan.read,
            session,
            mv: &plan.mv,
            mail: plan.mail.as_ref(),
            events: &plan.events,
        },
    )?;
    if !stored {
        return Err(race());
    }
    plan.chance.store(conn)?;
    for row in &plan.more_mail {
        mail::store(conn, Some(row.clone()))?;
    }
    if let Some(notice) = &plan.notice {
        mail::conditional_played(
            conn,
            &notice.to,
            notice.mail.clone(),
            &notice.game_id,
            notice.now,
        )?;
    }
    if let Some(rated) = &plan.rated {
        ratings::store(conn, rated)?;
    }
    Ok(PlayedMove {
        my_turn: plan.game.is_active() && plan.game.to_move_id() == Some(plan.caller.id.as_str()),
        mv: plan.mv.clone(),
        game: plan.view.clone(),
        replayed: false,
    })
}
