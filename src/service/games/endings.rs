//! The endings off the board: resignation, and a draw offered, declined or agreed.

use chrono::{DateTime, Utc};

use crate::auth::AuthUser;
use crate::db::{Database, DbConn};
use crate::rules::Side;
use crate::service::effects::games::{
    details, find, finish, save, tell_everyone, tell_opponent, write_game,
};
use crate::service::effects::mail::{GameForMail, Notifier};
use crate::service::effects::ratings;
use crate::service::model::error::{Conflict, ServiceError};
use crate::service::model::event::EventKind;
use crate::service::model::game::{GameDetails, GameResult, GameState, Termination};

/// Reads an active game the caller plays in, for an action off the board.
fn my_active_game(
    conn: &mut DbConn,
    id: &str,
    user: &AuthUser,
) -> Result<(GameState, Side), ServiceError> {
    let game = find(conn, id)?;
    let side = game
        .side_of(&user.id)
        .ok_or_else(|| ServiceError::Forbidden("you are not a player in this game".into()))?;
    if !game.is_active() {
        return Err(ServiceError::conflict(
            Conflict::GameOver,
            "this game has already ended",
        ));
    }
    Ok((game, side))
}

pub async fn resign(
    db: &Database,
    notifier: &Notifier,
    id: String,
    user: AuthUser,
    now: DateTime<Utc>,
) -> Result<GameDetails, ServiceError> {
    let notifier = notifier.clone();
    let key = id.clone();
    write_game(db, &key, move |conn| {
        let (mut game, side) = my_active_game(conn, &id, &user)?;
        let ply = game.ply;
        finish(
            &mut game,
            GameResult::Won(side.opponent()),
            Termination::Resignation,
            None,
            now.naive_utc(),
        );
        save(conn, &game, ply)?;
        let rated = ratings::settle(conn, &game)?;
        let details = details(conn, game)?;
        let about = GameForMail::of(&details, &notifier);
        tell_opponent(conn, &about, side, now, |mail, to| mail.game_over(to))?;
        tell_everyone(conn, details.clone(), None, rated.as_ref(), now)?;
        Ok(details)
    })
    .await
}

/// A player's answer to a draw, or their offer, in one game.
#[derive(Clone, Debug)]
pub struct DrawRequest {
    pub game_id: String,
    pub action: DrawAction,
}

/// What a player does about a draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DrawAction {
    Offer,
    Accept,
    Decline,
}

pub async fn draw(
    db: &Database,
    notifier: &Notifier,
    user: AuthUser,
    request: DrawRequest,
    now: DateTime<Utc>,
) -> Result<GameDetails, ServiceError> {
    let DrawRequest {
        game_id: id,
        action,
    } = request;
    let notifier = notifier.clone();
    let key = id.clone();
    write_game(db, &key, move |conn| {
        let (mut game, side) = my_active_game(conn, &id, &user)?;
        if !game.engine.can_draw() {
            return Err(ServiceError::conflict(
                Conflict::DrawNotPossible,
                format!("{} cannot end in a draw", game.engine.name()),
            ));
        }
        let ply = game.ply;
        let naive_now = now.naive_utc();
        match (action, game.draw_offer) {
            // Offering when the opponent has already offered is agreeing.
            (DrawAction::Offer | DrawAction::Accept, Some(offerer)) if offerer != side => {
                finish(
                    &mut game,
                    GameResult::Drawn,
                    Termination::Agreement,
                    None,
                    naive_now,
                );
            }
            (DrawAction::Offer, Some(_)) => {
                return Err(ServiceError::conflict(
                    Conflict::DrawAlreadyOffered,
                    "you have already offered a draw; wait for your opponent's answer",
                ));
            }
            (DrawAction::Offer, None) => {
                game.draw_offer = Some(side);
                game.updated_at = naive_now;
            }
            (DrawAction::Decline, Some(offerer)) if offerer != side => {
                game.draw_offer = None;
                game.updated_at = naive_now;
            }
            (DrawAction::Accept | DrawAction::Decline, _) => {
                return Err(ServiceError::conflict(
                    Conflict::NoDrawOffer,
                    "your opponent has not offered a draw",
                ));
            }
        }
        save(conn, &game, ply)?;
        let rated = ratings::settle(conn, &game)?;
        let details = details(conn, game)?;
        let happened = if !details.game.is_active() {
            EventKind::DrawAccepted
        } else if action == DrawAction::Offer {
            EventKind::DrawOffered
        } else {
            EventKind::DrawDeclined
        };
        tell_everyone(
            conn,
            details.clone(),
            Some((happened, side)),
            rated.as_ref(),
            now,
        )?;
        let about = GameForMail::of(&details, &notifier);
        if !details.game.is_active() {
            tell_opponent(conn, &about, side, now, |mail, to| mail.game_over(to))?;
        } else if action == DrawAction::Offer {
            tell_opponent(conn, &about, side, now, |mail, to| mail.draw_offered(to))?;
        }
        Ok(details)
    })
    .await
}
