//! What a move is decided from: the game and both its players, read in one query (or taken from
//! the copy kept since the game's last move), with the caller's login session confirmed from the
//! same rows.

use std::sync::Arc;

use crate::auth::Caller;
use crate::db::games::Revisions;
use crate::db::recent::{Recent, RecentGames};
use crate::db::users::SessionKey;
use crate::db::{self, DbConn};
use crate::service::effects::games::not_found;
use crate::service::model::error::{ServiceError, Unauthenticated};
use crate::service::model::game::GameState;
use crate::service::model::users::{Recipient, UserRef};

/// A player of the game being moved in, as its one read found them.
pub(super) struct Player {
    pub play_forced_moves: bool,
    pub recipient: Recipient,
}

impl From<&db::games::Player> for Player {
    fn from(row: &db::games::Player) -> Self {
        Player {
            play_forced_moves: row.play_forced_moves,
            recipient: Recipient {
                id: row.id.clone(),
                username: row.username.clone(),
                email: row.email.clone(),
                email_verified_at: row.email_verified_at,
                settings_json: row.notification_settings.clone(),
                time_zone: row.time_zone.clone(),
            },
        }
    }
}

impl Player {
    pub fn user_ref(&self) -> UserRef {
        UserRef {
            id: self.recipient.id.clone(),
            username: self.recipient.username.clone(),
        }
    }
}

/// What a move is decided from: a game, both its players (White first), and the revisions at
/// which they were read.
pub(super) struct Read {
    pub game: GameState,
    pub players: [Player; 2],
    pub revisions: Revisions,
}

/// A game and both its players, White first, in one query: all a move is decided from. The
/// caller's token was only checked for its signature and expiry; its login session is confirmed
/// here, from the rows this query reads anyway, before anything else is answered.
pub(super) fn read_game(
    conn: &mut DbConn,
    game_id: &str,
    caller: &Caller,
) -> Result<Read, ServiceError> {
    let found = find_with_players(conn, game_id, caller)?;
    let revisions = found.revisions();
    let seen = Seen {
        game: found.game,
        players: found.players.each_ref(),
        revisions,
        revoked: found.revoked,
    };
    Read::confirmed(conn, caller, seen)
}

/// [`read_game`] from the copy of the game kept since it was last read or moved in, when there is
/// one, and else from storage, keeping a copy. A copy does not know whether the caller's login
/// session was revoked since: the conditional write that stores the move does.
pub(super) fn read_recent_game(
    conn: &mut DbConn,
    recent: &RecentGames,
    game_id: &str,
    caller: &Caller,
) -> Result<(Read, Arc<Recent>), ServiceError> {
    let (kept, revoked) = match recent.get(game_id) {
        Some(kept) => (kept, false),
        None => {
            let found = find_with_players(conn, game_id, caller)?;
            let revoked = found.revoked;
            let copy = recent.copy(found);
            // A game with a clock is decided inside the write, never from a copy.
            if copy.game.time_control.is_none() {
                recent.keep(copy.clone());
            }
            (copy, revoked)
        }
    };
    let seen = Seen {
        game: kept.game.clone(),
        players: kept.players.each_ref().map(|player| &**player),
        revisions: kept.revisions(),
        revoked,
    };
    let read = Read::confirmed(conn, caller, seen)?;
    Ok((read, kept))
}

/// The game and its players as stored, with whether the caller's login session was revoked.
fn find_with_players(
    conn: &mut DbConn,
    game_id: &str,
    caller: &Caller,
) -> Result<db::games::WithPlayers, ServiceError> {
    let session_id = caller
        .credential
        .login_session()
        .map(|session| session.id.as_str());
    match db::games::find_with_players(conn, game_id, session_id)? {
        Some(found) => Ok(found),
        None => {
            // No game, so no player row to confirm the session from: an ended session is
            // answered as such, as everywhere, before the missing game.
            confirm_session(conn, caller, None)?;
            Err(not_found(game_id))
        }
    }
}

/// The rows a move is decided from, as found: the game, its players (White first), their
/// revisions, and whether the caller's login session was revoked.
struct Seen<'a> {
    game: db::models::Game,
    players: [&'a db::games::Player; 2],
    revisions: Revisions,
    revoked: bool,
}

impl Read {
    /// What a move is decided from, once the caller's login session is confirmed from what the
    /// players' rows tell of it (when the caller is one of them: their account's session version)
    /// and whether the session was `revoked`.
    fn confirmed(conn: &mut DbConn, caller: &Caller, seen: Seen<'_>) -> Result<Read, ServiceError> {
        let Seen {
            game,
            players,
            revisions,
            revoked,
        } = seen;
        let known = players
            .iter()
            .find(|player| player.id == caller.id)
            .map(|player| (player.session_version, revoked));
        confirm_session(conn, caller, known)?;
        Ok(Read {
            game: GameState::from_row(game)?,
            players: players.map(Player::from),
            revisions,
        })
    }
}

/// Refuses a caller whose login session has ended (the account is gone, its password changed
/// since the token, or the session was logged out), from what the game query found of it
/// (`known`: the account's session version and whether the session was revoked), or else with a
/// query of its own. A personal token's caller was confirmed by the guard.
fn confirm_session(
    conn: &mut DbConn,
    caller: &Caller,
    known: Option<(i32, bool)>,
) -> Result<(), ServiceError> {
    let Some(session) = caller.credential.login_session() else {
        return Ok(());
    };
    let holds = match known {
        Some((version, revoked)) => version == session.version && !revoked,
        None => db::users::find_session(
            conn,
            SessionKey {
                user_id: &caller.id,
                version: session.version,
                id: &session.id,
            },
        )?
        .is_some(),
    };
    if !holds {
        return Err(ServiceError::Unauthenticated(Unauthenticated::InvalidToken));
    }
    Ok(())
}
