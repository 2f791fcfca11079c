//! The stored statuses and flags, typed: each column reads back only as one of its values. A
//! value the code does not know (a row written by a newer version, or by hand) is an error that
//! names the column and the value, never a default.

use diesel::backend::Backend;
use diesel::deserialize::{self, FromSql};
use diesel::serialize::{self, Output, ToSql};
use diesel::sql_types::{Integer, Text};
use diesel::{AsExpression, FromSqlRow};

use crate::rules::Side;

/// A value stored as one of a fixed set of words.
pub trait Word: Copy + Sized + 'static {
    /// What the column holds, for the error that names a value it cannot hold.
    const WHAT: &'static str;
    const ALL: &'static [Self];

    fn as_str(self) -> &'static str;

    /// The value a stored word stands for.
    fn parse(word: &str) -> Result<Self, UnknownWord> {
        Self::ALL
            .iter()
            .copied()
            .find(|value| value.as_str() == word)
            .ok_or_else(|| UnknownWord {
                what: Self::WHAT,
                word: word.to_owned(),
            })
    }
}

/// A stored word that is none of its column's values.
#[derive(Debug, thiserror::Error)]
#[error("the database holds `{word}` as a {what}, which is none of the known values")]
pub struct UnknownWord {
    pub what: &'static str,
    pub word: String,
}

/// Reads and writes a [`Word`] as text on any backend whose text is a `String`.
macro_rules! stored_as_text {
    ($($ty:ty),* $(,)?) => {$(
        impl<DB: Backend> FromSql<Text, DB> for $ty
        where
            String: FromSql<Text, DB>,
        {
            fn from_sql(value: DB::RawValue<'_>) -> deserialize::Result<Self> {
                let word = String::from_sql(value)?;
                Ok(<$ty as Word>::parse(&word)?)
            }
        }

        impl<DB: Backend> ToSql<Text, DB> for $ty
        where
            str: ToSql<Text, DB>,
        {
            fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, DB>) -> serialize::Result {
                <str as ToSql<Text, DB>>::to_sql(Word::as_str(*self), out)
            }
        }

        // As clients read it: the same word.
        impl serde::Serialize for $ty {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(Word::as_str(*self))
            }
        }
    )*};
}

/// Whether a game goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, AsExpression, FromSqlRow)]
#[diesel(sql_type = Text)]
pub enum GameStatus {
    Active,
    Finished,
}

impl GameStatus {
    pub fn as_str(self) -> &'static str {
        Word::as_str(self)
    }
}

impl Word for GameStatus {
    const WHAT: &'static str = "game status";
    const ALL: &'static [Self] = &[GameStatus::Active, GameStatus::Finished];

    fn as_str(self) -> &'static str {
        match self {
            GameStatus::Active => "active",
            GameStatus::Finished => "finished",
        }
    }
}

/// Where a challenge stands: waiting for an answer, or answered one way or another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, AsExpression, FromSqlRow)]
#[diesel(sql_type = Text)]
pub enum ChallengeStatus {
    Pending,
    Accepted,
    Declined,
    Cancelled,
}

impl ChallengeStatus {
    pub fn as_str(self) -> &'static str {
        Word::as_str(self)
    }
}

impl Word for ChallengeStatus {
    const WHAT: &'static str = "challenge status";
    const ALL: &'static [Self] = &[
        ChallengeStatus::Pending,
        ChallengeStatus::Accepted,
        ChallengeStatus::Declined,
        ChallengeStatus::Cancelled,
    ];

    fn as_str(self) -> &'static str {
        match self {
            ChallengeStatus::Pending => "pending",
            ChallengeStatus::Accepted => "accepted",
            ChallengeStatus::Declined => "declined",
            ChallengeStatus::Cancelled => "cancelled",
        }
    }
}

/// Where a mail in the outbox stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, AsExpression, FromSqlRow)]
#[diesel(sql_type = Text)]
pub enum MailStatus {
    /// Waiting for its (next) attempt.
    Pending,
    Sent,
    /// Given up on: refused for good, or out of attempts.
    Failed,
}

impl MailStatus {
    pub fn as_str(self) -> &'static str {
        Word::as_str(self)
    }
}

impl Word for MailStatus {
    const WHAT: &'static str = "mail status";
    const ALL: &'static [Self] = &[MailStatus::Pending, MailStatus::Sent, MailStatus::Failed];

    fn as_str(self) -> &'static str {
        match self {
            MailStatus::Pending => "pending",
            MailStatus::Sent => "sent",
            MailStatus::Failed => "failed",
        }
    }
}

/// Where a webhook delivery stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, AsExpression, FromSqlRow)]
#[diesel(sql_type = Text)]
pub enum DeliveryStatus {
    /// Waiting for its (next) attempt.
    Pending,
    Delivered,
    /// Given up on: out of time, or its webhook disabled.
    Failed,
}

impl DeliveryStatus {
    pub fn as_str(self) -> &'static str {
        Word::as_str(self)
    }
}

impl Word for DeliveryStatus {
    const WHAT: &'static str = "webhook delivery status";
    const ALL: &'static [Self] = &[
        DeliveryStatus::Pending,
        DeliveryStatus::Delivered,
        DeliveryStatus::Failed,
    ];

    fn as_str(self) -> &'static str {
        match self {
            DeliveryStatus::Pending => "pending",
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Failed => "failed",
        }
    }
}

stored_as_text!(GameStatus, ChallengeStatus, MailStatus, DeliveryStatus);

/// The side of a move or a roll as a column's value (`Side` itself is the rules', which know
/// nothing of storage).
#[derive(Clone, Copy, Debug, PartialEq, Eq, AsExpression, FromSqlRow)]
#[diesel(sql_type = Text)]
pub struct StoredSide(pub Side);

impl Word for StoredSide {
    const WHAT: &'static str = "side";
    const ALL: &'static [Self] = &[StoredSide(Side::White), StoredSide(Side::Black)];

    fn as_str(self) -> &'static str {
        self.0.name()
    }
}

stored_as_text!(StoredSide);

impl From<StoredSide> for Side {
    fn from(side: StoredSide) -> Side {
        side.0
    }
}

impl From<Side> for StoredSide {
    fn from(side: Side) -> StoredSide {
        StoredSide(side)
    }
}

/// A yes-or-no column, stored as the integer 0 or 1 on both backends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, AsExpression, FromSqlRow)]
#[diesel(sql_type = Integer)]
pub struct Flag(pub bool);

impl From<Flag> for bool {
    fn from(flag: Flag) -> bool {
        flag.0
    }
}

impl From<bool> for Flag {
    fn from(on: bool) -> Flag {
        Flag(on)
    }
}

impl<DB: Backend> FromSql<Integer, DB> for Flag
where
    i32: FromSql<Integer, DB>,
{
    fn from_sql(value: DB::RawValue<'_>) -> deserialize::Result<Self> {
        match i32::from_sql(value)? {
            0 => Ok(Flag(false)),
            1 => Ok(Flag(true)),
            other => Err(format!("the database holds {other} in a flag, which is 0 or 1").into()),
        }
    }
}

impl<DB: Backend> ToSql<Integer, DB> for Flag
where
    i32: ToSql<Integer, DB>,
{
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, DB>) -> serialize::Result {
        let value: &'static i32 = if self.0 { &1 } else { &0 };
        <i32 as ToSql<Integer, DB>>::to_sql(value, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_word_reads_back_as_itself_and_nothing_else_reads() {
        fn round_trip<W: Word + PartialEq + std::fmt::Debug>() {
            for value in W::ALL {
                assert_eq!(W::parse(value.as_str()).unwrap(), *value);
            }
            let error = W::parse("Pending ").unwrap_err();
            assert!(error.to_string().contains(W::WHAT), "{error}");
            assert!(W::parse("").is_err());
        }
        round_trip::<GameStatus>();
        round_trip::<ChallengeStatus>();
        round_trip::<MailStatus>();
        round_trip::<DeliveryStatus>();
        round_trip::<StoredSide>();
    }
}

/// Declares a column of words: the enum, its words in order, and its reading and writing.
macro_rules! words {
    ($(#[$doc:meta])* $name:ident, $what:literal, { $($variant:ident => $word:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, AsExpression, FromSqlRow)]
        #[diesel(sql_type = Text)]
        pub enum $name {
            $($variant),+
        }

        impl $name {
            pub fn as_str(self) -> &'static str {
                Word::as_str(self)
            }
        }

        impl Word for $name {
            const WHAT: &'static str = $what;
            const ALL: &'static [Self] = &[$($name::$variant),+];

            fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }
        }

        stored_as_text!($name);
    };
}

words!(
    /// How an event pairs its players.
    TournamentFormat, "tournament format", {
        RoundRobin => "round_robin",
        Swiss => "swiss",
        League => "league",
    }
);

words!(
    /// Where an event stands.
    TournamentStatus, "tournament status", {
        Open => "open",
        Running => "running",
        Finished => "finished",
        Cancelled => "cancelled",
    }
);

words!(
    /// Whether a player of an event still plays in it, and if not, why.
    EntrantStatus, "tournament player status", {
        Playing => "playing",
        Withdrawn => "withdrawn",
        Removed => "removed",
        Forfeited => "forfeited",
    }
);

words!(
    /// What a game of an event counted for once it ended (a bye counts when given).
    EventResult, "tournament game result", {
        White => "white",
        Black => "black",
        Draw => "draw",
        Bye => "bye",
    }
);

words!(
    /// Where an edition of a championship stands.
    EditionStatus, "championship edition status", {
        Scheduled => "scheduled",
        Running => "running",
        Finished => "finished",
    }
);
