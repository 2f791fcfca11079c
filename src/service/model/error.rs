//! What a use case can answer instead of its result. The services speak of the domain (a game
//! that is over, a move the rules refuse, a name already taken); `http::problem` alone turns
//! each of these into an HTTP status and a problem document.

use crate::auth::hasher::HashError;
use crate::auth::scopes::Scope;
use crate::db::StorageError;
use crate::limits::Limited;
use crate::rules::Side;

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The thing asked for does not exist (or is not the caller's to see).
    #[error("{0}")]
    NotFound(String),
    /// The caller is not who they must be to do this.
    #[error("{0}")]
    Forbidden(String),
    /// A personal access token asked for something its scopes do not allow (a token with a
    /// scope it lacks itself).
    #[error("this personal access token lacks the `{0}` scope, so it cannot do this")]
    MissingScope(Scope),
    /// The caller could not be identified.
    #[error("{0}")]
    Unauthenticated(Unauthenticated),
    /// A value the caller sent is not acceptable; `field` names it.
    #[error("{detail}")]
    Invalid { field: &'static str, detail: String },
    /// The request is sound but the state of things forbids it now.
    #[error("{detail}")]
    Conflict { kind: Conflict, detail: String },
    /// A webhook URL leads where the server does not send (`reason` names the kind of
    /// address, as `webhook::address::Refused::reason` does).
    #[error("{detail}")]
    AddressRefused {
        reason: &'static str,
        detail: String,
    },
    /// The rules of the game refuse a move.
    #[error("{detail}")]
    Refused { refusal: Refusal, detail: String },
    /// Conditional moves that cannot be stored: the game does not allow them, a line's move
    /// the rules refuse, or two lines that disagree.
    #[error("{detail}")]
    Plan {
        problem: PlanProblem,
        detail: String,
    },
    /// A rate limit refuses this for now (too many mails to one address, say).
    #[error("{0}")]
    Limited(Limited),
    /// Storage cannot be reached for now.
    #[error("the service is temporarily unavailable; try again shortly")]
    Unavailable,
    /// Too many passwords are being hashed at once; this request was refused before it waited.
    #[error("the server is hashing as many passwords as it can; try again in a moment")]
    Busy,
    #[error("internal error")]
    Internal(#[from] anyhow::Error),
}

/// Why nobody could be identified.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unauthenticated {
    #[error("{}", crate::auth::INVALID_CREDENTIALS)]
    WrongCredentials,
    /// A token was sent, and it is malformed, forged, expired, or its session has ended.
    #[error("{}", crate::auth::INVALID_TOKEN)]
    InvalidToken,
    /// No token was sent where one is needed.
    #[error("{}", crate::auth::TOKEN_REQUIRED)]
    NoToken,
}

/// The conflicts a use case can meet, each with its stable name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Conflict {
    NotYourTurn {
        to_move: Side,
    },
    PlyMismatch {
        current_ply: i32,
    },
    GameOver,
    /// Another request changed the same row between this one's read and its write.
    ConcurrentUpdate,
    DrawNotPossible,
    DrawAlreadyOffered,
    NoDrawOffer,
    ChallengeNotPending,
    UsernameTaken,
    EmailTaken,
    AlreadyOnVacation,
    NotOnVacation,
    NoVacationLeft,
    /// A row that must be unique already exists.
    Duplicate,
    /// The caller has as many webhooks as a user may have.
    TooManyWebhooks {
        limit: i64,
    },
    /// A delivery of a disabled webhook cannot be sent again until it is enabled.
    WebhookDisabled,
    /// The caller has as many unexpired personal access tokens as a user may have.
    TooManyTokens {
        limit: i64,
    },
    /// A request with the same `Idempotency-Key` is still running.
    IdempotencyKeyInUse,
    /// The request with this `Idempotency-Key` made something that has since been deleted: its
    /// answer would name a thing that is gone.
    IdempotentCreationGone,
    /// A rated game needs both players' addresses confirmed.
    AddressNotConfirmed,
    /// The accepting player's rating is outside an open challenge's range.
    RatingOutOfRange,
    /// Conditional moves are planned while the opponent is to move, not on one's own turn.
    YourTurn,
    /// The event does not take this now: entries are closed, or it has not begun or has ended.
    TournamentClosed,
    /// The event has as many players as it takes.
    TournamentFull,
    /// The caller is in the event (or the championship) already.
    AlreadyEntered,
    /// The player is not in the event (or the championship).
    NotEntered,
    /// The event has fewer players than it needs to begin.
    TooFewPlayers,
}

impl Conflict {
    /// The stable name, also the problem type's last part.
    pub fn slug(&self) -> &'static str {
        match self {
            Conflict::NotYourTurn { .. } => "not-your-turn",
            Conflict::PlyMismatch { .. } => "ply-mismatch",
            Conflict::GameOver => "game-over",
            Conflict::ConcurrentUpdate => "concurrent-update",
            Conflict::DrawNotPossible => "draw-not-possible",
            Conflict::DrawAlreadyOffered => "draw-already-offered",
            Conflict::NoDrawOffer => "no-draw-offer",
            Conflict::ChallengeNotPending => "challenge-not-pending",
            Conflict::UsernameTaken => "username-taken",
            Conflict::EmailTaken => "email-taken",
            Conflict::AlreadyOnVacation => "already-on-vacation",
            Conflict::NotOnVacation => "not-on-vacation",
            Conflict::NoVacationLeft => "no-vacation-left",
            Conflict::Duplicate => "conflict",
            Conflict::TooManyWebhooks { .. } => "too-many-webhooks",
            Conflict::WebhookDisabled => "webhook-disabled",
            Conflict::TooManyTokens { .. } => "too-many-tokens",
            Conflict::IdempotencyKeyInUse => "idempotency-key-in-use",
            Conflict::IdempotentCreationGone => "idempotent-creation-gone",
            Conflict::AddressNotConfirmed => "address-not-confirmed",
            Conflict::RatingOutOfRange => "rating-out-of-range",
            Conflict::YourTurn => "your-turn",
            Conflict::TournamentClosed => "tournament-closed",
            Conflict::TournamentFull => "tournament-full",
            Conflict::AlreadyEntered => "already-entered",
            Conflict::NotEntered => "not-entered",
            Conflict::TooFewPlayers => "too-few-players",
        }
    }

    pub fn title(&self) -> &'static str {
        match self {
            Conflict::NotYourTurn { .. } => "Not your turn",
            Conflict::PlyMismatch { .. } => "The game has moved on",
            Conflict::GameOver => "The game is over",
            Conflict::ConcurrentUpdate => "Concurrent update",
            Conflict::DrawNotPossible => "No draws in this game",
            Conflict::DrawAlreadyOffered => "Draw already offered",
            Conflict::NoDrawOffer => "No draw offer",
            Conflict::ChallengeNotPending => "The challenge is no longer pending",
            Conflict::UsernameTaken => "Username taken",
            Conflict::EmailTaken => "Email address in use",
            Conflict::AlreadyOnVacation => "Already on vacation",
            Conflict::NotOnVacation => "Not on vacation",
            Conflict::NoVacationLeft => "No vacation left",
            Conflict::Duplicate => "Conflict",
            Conflict::TooManyWebhooks { .. } => "Too many webhooks",
            Conflict::WebhookDisabled => "The webhook is disabled",
            Conflict::TooManyTokens { .. } => "Too many personal access tokens",
            Conflict::IdempotencyKeyInUse => "A request with this key is still running",
            Conflict::IdempotentCreationGone => "What this key made has since been deleted",
            Conflict::AddressNotConfirmed => "Rated games need confirmed addresses",
            Conflict::RatingOutOfRange => "Your rating is outside the range asked for",
            Conflict::YourTurn => "It is your move",
            Conflict::TournamentClosed => "The event does not take this now",
            Conflict::TournamentFull => "The event is full",
            Conflict::AlreadyEntered => "Already entered",
            Conflict::NotEntered => "Not entered",
            Conflict::TooFewPlayers => "Too few players",
        }
    }
}

/// How the rules refused a move, with what a client needs to choose again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not a move in the game's notation; the legal moves follow.
    Syntax { legal_moves: Vec<String> },
    /// A well-formed move that is not legal here; the legal moves follow.
    Illegal { legal_moves: Vec<String> },
    /// More than one legal move fits the text.
    Ambiguous { candidates: Vec<String> },
}

/// Why conditional moves cannot be stored, beyond the shape of the request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanProblem {
    /// The game's moves depend on dice, so no reply can be planned.
    Unsupported,
    /// A move of a line that the engine refuses, by the line's index and the move's place in it.
    Move {
        line: usize,
        index: usize,
        refusal: Refusal,
    },
    /// Two lines that answer the same moves differently.
    Disagree { lines: [usize; 2] },
}

impl PlanProblem {
    /// The stable name, also the problem type's last part: a refused move's own.
    pub fn slug(&self) -> &'static str {
        match self {
            PlanProblem::Unsupported => "conditional-moves-unsupported",
            PlanProblem::Disagree { .. } => "conditional-lines-disagree",
            PlanProblem::Move { refusal, .. } => refusal.slug(),
        }
    }
}

impl Refusal {
    pub fn slug(&self) -> &'static str {
        match self {
            Refusal::Syntax { .. } => "invalid-move-syntax",
            Refusal::Illegal { .. } => "illegal-move",
            Refusal::Ambiguous { .. } => "ambiguous-move",
        }
    }

    pub fn title(&self) -> &'static str {
        match self {
            Refusal::Syntax { .. } => "The move could not be read",
            Refusal::Illegal { .. } => "Illegal move",
            Refusal::Ambiguous { .. } => "Ambiguous move",
        }
    }
}

impl ServiceError {
    pub fn invalid(field: &'static str, detail: impl Into<String>) -> Self {
        ServiceError::Invalid {
            field,
            detail: detail.into(),
        }
    }

    pub fn conflict(kind: Conflict, detail: impl Into<String>) -> Self {
        ServiceError::Conflict {
            kind,
            detail: detail.into(),
        }
    }

    pub fn internal(message: impl std::fmt::Display) -> Self {
        ServiceError::Internal(anyhow::anyhow!("{message}"))
    }

    /// Whether this is the conflict of two requests writing the same row at once.
    pub fn is_race(&self) -> bool {
        matches!(
            self,
            ServiceError::Conflict {
                kind: Conflict::ConcurrentUpdate,
                ..
            }
        )
    }
}

impl From<StorageError> for ServiceError {
    fn from(e: StorageError) -> Self {
        match e {
            StorageError::Unavailable => ServiceError::Unavailable,
            StorageError::Query(e) => e.into(),
            StorageError::Task(message) => ServiceError::internal(message),
        }
    }
}

impl From<diesel::result::Error> for ServiceError {
    fn from(e: diesel::result::Error) -> Self {
        use diesel::result::{DatabaseErrorKind, Error};
        match e {
            Error::NotFound => ServiceError::NotFound("not found".into()),
            Error::DatabaseError(DatabaseErrorKind::UniqueViolation, info) => {
                // Two registrations racing past the service's own check end here; name the field
                // the way the check would have.
                let what = format!(
                    "{} {}",
                    info.constraint_name().unwrap_or(""),
                    info.message()
                );
                if what.contains("username_key") {
                    ServiceError::conflict(
                        Conflict::UsernameTaken,
                        "this username is already taken (usernames ignore case); choose another",
                    )
                } else if what.contains("email_key") {
                    ServiceError::conflict(
                        Conflict::EmailTaken,
                        "an account with this email address already exists; log in, or use another address",
                    )
                } else {
                    tracing::info!(constraint = %what, "unique violation");
                    ServiceError::conflict(
                        Conflict::Duplicate,
                        "this would duplicate something that already exists",
                    )
                }
            }
            // Two transactions that each wait for the other (PostgreSQL's 40P01, which diesel
            // does not name; its message is fixed) lose the same way as a serialization failure:
            // the one PostgreSQL picks is undone whole and can run again.
            Error::DatabaseError(DatabaseErrorKind::Unknown, info)
                if info.message().starts_with("deadlock detected") =>
            {
                ServiceError::conflict(
                    Conflict::ConcurrentUpdate,
                    "another request changed the same data at the same time; read it again and retry",
                )
            }
            Error::DatabaseError(DatabaseErrorKind::SerializationFailure, _) => {
                ServiceError::conflict(
                    Conflict::ConcurrentUpdate,
                    "another request changed the same data at the same time; read it again and retry",
                )
            }
            // The database went away under the query: nothing was committed, and the same
            // request can succeed in a moment.
            other if crate::db::connection_lost(&other) => ServiceError::Unavailable,
            other => {
                ServiceError::Internal(anyhow::Error::new(other).context("database query failed"))
            }
        }
    }
}

impl From<HashError> for ServiceError {
    fn from(error: HashError) -> Self {
        match error {
            HashError::Busy => ServiceError::Busy,
            HashError::Failed(cause) => ServiceError::Internal(cause),
        }
    }
}

#[cfg(test)]
mod database_gone_tests {
    use super::*;
    use diesel::result::{DatabaseErrorKind, Error};

    fn error(kind: DatabaseErrorKind, message: &str) -> ServiceError {
        Error::DatabaseError(kind, Box::new(message.to_owned())).into()
    }

    #[test]
    fn a_database_that_went_away_is_unavailable_not_an_internal_error() {
        for message in [
            "server closed the connection unexpectedly\n\tThis probably means the server terminated abnormally",
            "terminating connection due to administrator command",
            "the database system is starting up",
        ] {
            assert!(matches!(
                error(DatabaseErrorKind::Unknown, message),
                ServiceError::Unavailable
            ));
        }
        for kind in [
            DatabaseErrorKind::ClosedConnection,
            DatabaseErrorKind::UnableToSendCommand,
        ] {
            assert!(matches!(
                error(kind, "no connection to the server"),
                ServiceError::Unavailable
            ));
        }
        // A transaction whose rollback failed as its connection died: diesel sends nothing more
        // on it, not even the commit.
        assert!(matches!(
            ServiceError::from(diesel::result::Error::BrokenTransactionManager),
            ServiceError::Unavailable
        ));
        assert!(matches!(
            error(DatabaseErrorKind::Unknown, "division by zero"),
            ServiceError::Internal(_)
        ));
    }
}
