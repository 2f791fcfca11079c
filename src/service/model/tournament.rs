//! Events as the use cases share them: a tournament asked for and checked, the stored event's
//! game, options and clock read back, and its standings worked out from its stored games
//! (`crate::tournament` does the arithmetic).

use chrono::{DateTime, NaiveDateTime, Utc};
use serde::Deserialize;
use serde_json::Value;

use super::error::ServiceError;
use super::game::ClockSetup;
use super::rating::rating_range;
use super::users::UserRef;
use crate::clock::TimeControl;
use crate::db::columns::{EntrantStatus, EventResult, TournamentFormat, TournamentStatus};
use crate::db::tournaments::{Entrant, EventGameState, Tournament};
use crate::rules::GameKind;
use crate::tournament::standings::{self, Row, System};
use crate::tournament::{self as arithmetic, Outcome, Played};

/// The formats an organiser may choose; championship leagues are made by the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Every pair plays two games at once, one with each colour.
    RoundRobin,
    /// A set number of rounds, each paired by score when the previous one has ended.
    Swiss,
}

impl From<Format> for TournamentFormat {
    fn from(format: Format) -> TournamentFormat {
        match format {
            Format::RoundRobin => TournamentFormat::RoundRobin,
            Format::Swiss => TournamentFormat::Swiss,
        }
    }
}

/// The most players a round robin takes: 20 players already play 380 games.
pub const MAX_ROUND_ROBIN_PLAYERS: i32 = 20;
pub const MAX_SWISS_PLAYERS: i32 = 256;
pub const MAX_SWISS_ROUNDS: i32 = 15;
const NAME_LENGTH: std::ops::RangeInclusive<usize> = 3..=80;

/// A tournament as an organiser asks for it, before it is checked.
#[derive(Clone, Debug)]
pub struct NewTournament {
    pub name: String,
    pub game: String,
    pub options: Value,
    pub days_per_move: Option<i32>,
    pub time_control: Option<TimeControl>,
    pub weekend_pause: bool,
    pub rated: bool,
    pub format: Format,
    pub rounds: Option<i32>,
    pub min_players: Option<i32>,
    pub max_players: Option<i32>,
    pub entry_deadline: Option<DateTime<Utc>>,
    pub starts_at: Option<DateTime<Utc>>,
    pub rating_min: Option<i32>,
    pub rating_max: Option<i32>,
}

impl NewTournament {
    /// The event to store, checked; every message names the field at fault.
    pub fn checked(
        &self,
        organiser_id: &str,
        now: DateTime<Utc>,
    ) -> Result<Tournament, ServiceError> {
        let name = self.name.trim();
        if !NAME_LENGTH.contains(&name.chars().count()) || name.chars().any(char::is_control) {
            return Err(ServiceError::invalid(
                "name",
                format!(
                    "a tournament's name is {} to {} characters, without control characters",
                    NAME_LENGTH.start(),
                    NAME_LENGTH.end()
                ),
            ));
        }
        let kind: GameKind = self.game.parse().map_err(|e: crate::rules::UnknownGame| {
            ServiceError::invalid("game", format!("{e}; see GET /api/v1/games/kinds"))
        })?;
        let engine = kind.engine().ok_or_else(|| {
            ServiceError::invalid(
                "game",
                format!("{kind} cannot be played on this server yet"),
            )
        })?;
        let options = engine
            .normalize_options(&self.options)
            .map_err(|e| ServiceError::invalid("options", e.to_string()))?;
        let clock =
            ClockSetup::requested(self.days_per_move, self.time_control, self.weekend_pause)?;
        let (rating_min, rating_max) = rating_range(self.rating_min, self.rating_max)?;
        let (rounds, most) = match self.format {
            Format::RoundRobin => {
                if self.rounds.is_some() {
                    return Err(ServiceError::invalid(
                        "rounds",
                        "a round robin has no number of rounds: every pair plays two games at once",
                    ));
                }
                (None, MAX_ROUND_ROBIN_PLAYERS)
            }
            Format::Swiss => {
                let rounds = self.rounds.ok_or_else(|| {
                    ServiceError::invalid("rounds", "a Swiss tournament needs its number of rounds")
                })?;
                if !(1..=MAX_SWISS_ROUNDS).contains(&rounds) {
                    return Err(ServiceError::invalid(
                        "rounds",
                        format!("a Swiss tournament has 1 to {MAX_SWISS_ROUNDS} rounds"),
                    ));
                }
                (Some(rounds), MAX_SWISS_PLAYERS)
            }
        };
        let min_players = self.min_players.unwrap_or(2);
        let max_players = self.max_players.unwrap_or(most.min(16));
        if !(2..=most).contains(&min_players) {
            return Err(ServiceError::invalid(
                "min_players",
                format!("min_players is from 2 to {most}"),
            ));
        }
        if !(min_players..=most).contains(&max_players) {
            return Err(ServiceError::invalid(
                "max_players",
                format!("max_players is from min_players ({min_players}) to {most}"),
            ));
        }
        for (field, at) in [
            ("entry_deadline", self.entry_deadline),
            ("starts_at", self.starts_at),
        ] {
            if at.is_some_and(|at| at <= now) {
                return Err(ServiceError::invalid(
                    field,
                    format!("{field} must be in the future"),
                ));
            }
        }
        if let (Some(deadline), Some(start)) = (self.entry_deadline, self.starts_at)
            && start < deadline
        {
            return Err(ServiceError::invalid(
                "starts_at",
                "starts_at cannot come before the entry deadline",
            ));
        }
        let now = now.naive_utc();
        Ok(Tournament {
            id: uuid::Uuid::now_v7().to_string(),
            name: name.to_owned(),
            organiser_id: Some(organiser_id.to_owned()),
            game_kind: kind.id().to_owned(),
            options: options.to_string(),
            time_control: stored_clock(clock.control)?,
            weekend_pause: clock.weekend_pause,
            rated: self.rated,
            format: self.format.into(),
            rounds,
            min_players,
            max_players,
            rating_min,
            rating_max,
            entry_deadline: self.entry_deadline.map(|at| at.naive_utc()),
            starts_at: self.starts_at.map(|at| at.naive_utc()),
            status: TournamentStatus::Open,
            round: 0,
            edition: None,
            league: None,
            created_at: now,
            started_at: None,
            finished_at: None,
            revision: 0,
        })
    }
}

/// Points and tie-breaks as a person writes them: "2½", "½", "0"; a Sonneborn–Berger score can
/// fall on a quarter.
pub fn points_in_words(value: f64) -> String {
    let quarters = (value * 4.0).round() as i64;
    let (whole, part) = (quarters.div_euclid(4), quarters.rem_euclid(4));
    let fraction = ["", "¼", "½", "¾"][part as usize];
    match (whole, fraction) {
        (0, "") => "0".to_owned(),
        (0, fraction) => fraction.to_owned(),
        (whole, fraction) => format!("{whole}{fraction}"),
    }
}

pub fn stored_clock(control: TimeControl) -> Result<String, ServiceError> {
    serde_json::to_string(&control).map_err(|e| ServiceError::Internal(e.into()))
}

/// An event with its organiser's name (none for a championship league) and how many players it
/// has.
#[derive(Clone, Debug)]
pub struct TournamentDetails {
    pub tournament: Tournament,
    pub organiser: Option<UserRef>,
    pub players: i64,
}

/// A player of an event, named.
#[derive(Clone, Debug)]
pub struct EntrantDetails {
    pub entrant: Entrant,
    pub player: UserRef,
}

/// One of an event's games (or a bye), its players named.
#[derive(Clone, Debug)]
pub struct EventGameDetails {
    pub game: EventGameState,
    pub white: UserRef,
    pub black: Option<UserRef>,
}

/// A line of the standings, its player named; `movement` says where a championship league's
/// player goes next edition.
#[derive(Clone, Debug)]
pub struct StandingDetails {
    pub row: Row,
    pub player: UserRef,
    pub status: EntrantStatus,
    pub movement: Movement,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Movement {
    Up,
    Stays,
    Down,
}

fn unreadable(tournament: &Tournament, what: &str, e: impl std::fmt::Display) -> ServiceError {
    ServiceError::internal(format!(
        "tournament {}: stored {what} is unreadable: {e}",
        tournament.id
    ))
}

pub fn kind_of(tournament: &Tournament) -> Result<GameKind, ServiceError> {
    tournament
        .game_kind
        .parse()
        .map_err(|e| unreadable(tournament, "game", e))
}

pub fn options_of(tournament: &Tournament) -> Result<Value, ServiceError> {
    serde_json::from_str(&tournament.options).map_err(|e| unreadable(tournament, "options", e))
}

pub fn clock_of(tournament: &Tournament) -> Result<ClockSetup, ServiceError> {
    let control = serde_json::from_str(&tournament.time_control)
        .map_err(|e| unreadable(tournament, "time control", e))?;
    Ok(ClockSetup {
        control,
        weekend_pause: tournament.weekend_pause,
    })
}

/// When an open event starts by itself: at its start time, or without one at its deadline.
pub fn starts_by_itself_at(tournament: &Tournament) -> Option<NaiveDateTime> {
    tournament.starts_at.or(tournament.entry_deadline)
}

/// Whether an open event still takes entries at `now`.
pub fn takes_entries(tournament: &Tournament, now: NaiveDateTime) -> bool {
    tournament.status == TournamentStatus::Open
        && tournament
            .entry_deadline
            .is_none_or(|deadline| now < deadline)
        && tournament.starts_at.is_none_or(|start| now < start)
}

/// The players in their seed order (the seed given at the start; before it, by rating).
pub fn seeded(entrants: &[Entrant]) -> Vec<arithmetic::Entrant> {
    let mut ordered: Vec<&Entrant> = entrants.iter().collect();
    ordered.sort_by(|a, b| {
        a.seed
            .unwrap_or(i32::MAX)
            .cmp(&b.seed.unwrap_or(i32::MAX))
            .then(b.rating.total_cmp(&a.rating))
            .then(a.joined_at.cmp(&b.joined_at))
    });
    ordered
        .into_iter()
        .enumerate()
        .map(|(index, entrant)| arithmetic::Entrant {
            id: entrant.user_id.clone(),
            rating: entrant.rating,
            seed: u32::try_from(index + 1).unwrap_or(u32::MAX),
        })
        .collect()
}

/// The games counted so far, as the arithmetic reads them, and the byes given.
pub fn counted(games: &[EventGameState]) -> (Vec<Played>, Vec<(String, u32)>) {
    let mut played = Vec::new();
    let mut byes = Vec::new();
    for state in games {
        let game = &state.event;
        let round = u32::try_from(game.round).unwrap_or(0);
        let outcome = match game.result {
            Some(EventResult::Bye) => {
                byes.push((game.white_id.clone(), round));
                continue;
            }
            Some(EventResult::White) => Some(Outcome::WhiteWon),
            Some(EventResult::Black) => Some(Outcome::BlackWon),
            Some(EventResult::Draw) => Some(Outcome::Drawn),
            None => None,
        };
        let Some(black) = &game.black_id else {
            continue;
        };
        played.push(Played {
            round,
            white: game.white_id.clone(),
            black: black.clone(),
            outcome,
            forfeit: game.forfeit,
        });
    }
    (played, byes)
}

/// The standings of an event from its players and counted games, best first.
pub fn standings_of(
    tournament: &Tournament,
    entrants: &[Entrant],
    games: &[EventGameState],
) -> Vec<Row> {
    let system = match tournament.format {
        TournamentFormat::Swiss => System::Swiss,
        TournamentFormat::RoundRobin | TournamentFormat::League => System::RoundRobin,
    };
    let (played, byes) = counted(games);
    standings::standings(system, &seeded(entrants), &played, &byes)
}
