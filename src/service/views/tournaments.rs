//! How tournaments, championship leagues, their players, games and standings look as JSON, and
//! the data of their events.

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::{GameKind, GameOptions, Timestamp, utc};
use crate::clock::TimeControl;
use crate::db::columns::{
    EditionStatus, EntrantStatus, EventResult, GameStatus, TournamentFormat, TournamentStatus,
};
use crate::db::users::UserRef;
use crate::service::model::error::ServiceError;
use crate::service::model::tournament::{
    EntrantDetails, EventGameDetails, Movement, StandingDetails, TournamentDetails, clock_of,
    options_of,
};

/// A tournament, or a league of a championship.
#[derive(Clone, Serialize, ToSchema)]
#[schema(as = Tournament)]
pub struct TournamentView {
    pub id: String,
    pub name: String,
    /// Who made it; null for a championship league, which the server runs.
    pub organiser: Option<UserRef>,
    #[schema(value_type = GameKind)]
    pub game: String,
    #[schema(value_type = GameOptions)]
    pub options: Value,
    pub time_control: TimeControl,
    pub weekend_pause: bool,
    /// Whether its games change their players' ratings (games lost by forfeit never do).
    pub rated: bool,
    pub format: TournamentFormat,
    /// Swiss: how many rounds.
    pub rounds: Option<i32>,
    /// The round being played (a round robin and a league play theirs all at once: 1); 0
    /// before the start.
    pub round: i32,
    pub min_players: i32,
    pub max_players: i32,
    /// Players entered (before the start), or who began it.
    pub players: i64,
    /// The lowest rating in its game a player may join with.
    pub rating_min: Option<i32>,
    pub rating_max: Option<i32>,
    /// Entries close then.
    #[schema(value_type = Option<Timestamp>)]
    pub entry_deadline: Option<DateTime<Utc>>,
    /// It begins by itself then (with at least `min_players`; it is cancelled otherwise).
    #[schema(value_type = Option<Timestamp>)]
    pub starts_at: Option<DateTime<Utc>>,
    pub status: TournamentStatus,
    /// A championship league: its edition, and its level (1 is the top league).
    pub edition: Option<i32>,
    pub league: Option<i32>,
    #[schema(value_type = Timestamp)]
    pub created_at: DateTime<Utc>,
    #[schema(value_type = Option<Timestamp>)]
    pub started_at: Option<DateTime<Utc>>,
    #[schema(value_type = Option<Timestamp>)]
    pub finished_at: Option<DateTime<Utc>>,
}

impl TournamentView {
    pub fn new(details: TournamentDetails) -> Result<TournamentView, ServiceError> {
        let t = details.tournament;
        let options = options_of(&t)?;
        let time_control = clock_of(&t)?.control;
        Ok(TournamentView {
            options,
            time_control,
            weekend_pause: t.weekend_pause,
            rated: t.rated,
            format: t.format,
            rounds: t.rounds,
            round: t.round,
            min_players: t.min_players,
            max_players: t.max_players,
            players: details.players,
            rating_min: t.rating_min,
            rating_max: t.rating_max,
            entry_deadline: t.entry_deadline.map(utc),
            starts_at: t.starts_at.map(utc),
            status: t.status,
            edition: t.edition,
            league: t.league,
            created_at: utc(t.created_at),
            started_at: t.started_at.map(utc),
            finished_at: t.finished_at.map(utc),
            organiser: details.organiser,
            game: t.game_kind,
            name: t.name,
            id: t.id,
        })
    }
}

/// A player of an event.
#[derive(Serialize, ToSchema)]
#[schema(as = TournamentPlayer)]
pub struct EntrantView {
    pub player: UserRef,
    /// The rating they were seeded with (read again at the start).
    pub rating: f64,
    /// 1 for the highest-rated at the start; null before it.
    pub seed: Option<i32>,
    pub status: EntrantStatus,
    #[schema(value_type = Timestamp)]
    pub joined_at: DateTime<Utc>,
    /// When they withdrew, were removed or forfeited.
    #[schema(value_type = Option<Timestamp>)]
    pub left_at: Option<DateTime<Utc>>,
    /// Their final place, once the event has ended.
    pub place: Option<i32>,
}

impl From<EntrantDetails> for EntrantView {
    fn from(details: EntrantDetails) -> EntrantView {
        let e = details.entrant;
        EntrantView {
            player: details.player,
            rating: e.rating,
            seed: e.seed,
            status: e.status,
            joined_at: utc(e.joined_at),
            left_at: e.left_at.map(utc),
            place: e.place,
        }
    }
}

/// A game of an event, or a bye.
#[derive(Serialize, ToSchema)]
#[schema(as = TournamentGame)]
pub struct EventGameView {
    pub round: i32,
    /// The game (`GET /api/v1/games/{id}`); null for a bye.
    pub game_id: Option<String>,
    /// White, or the player with the bye.
    pub white: UserRef,
    /// Black; null for a bye.
    pub black: Option<UserRef>,
    /// Whether the game goes on; null for a bye.
    pub status: Option<GameStatus>,
    /// What it counted for, once counted.
    pub result: Option<EventResult>,
    /// Lost by forfeit (and so rated for nobody).
    pub forfeit: bool,
}

impl From<EventGameDetails> for EventGameView {
    fn from(details: EventGameDetails) -> EventGameView {
        let g = details.game;
        EventGameView {
            round: g.event.round,
            game_id: g.event.game_id,
            white: details.white,
            black: details.black,
            status: g.status,
            result: g.event.result,
            forfeit: g.event.forfeit,
        }
    }
}

/// Where a championship league's player goes in the next edition.
#[derive(Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MovementView {
    Up,
    Stays,
    Down,
}

/// A line of an event's standings.
#[derive(Serialize, ToSchema)]
#[schema(as = StandingsRow)]
pub struct StandingsRowView {
    pub place: u32,
    pub player: UserRef,
    pub status: EntrantStatus,
    /// Win 1, draw ½, bye 1.
    pub points: f64,
    pub played: u32,
    pub won: u32,
    pub drawn: u32,
    pub lost: u32,
    pub byes: u32,
    /// Swiss: the sum of the opponents' points (the first tie-break).
    pub buchholz: f64,
    /// The opponents' points weighted by the result against each (win: all, draw: half).
    pub sonneborn_berger: f64,
    /// A championship league only: where the player goes next edition if the table stays so.
    pub movement: Option<MovementView>,
}

impl StandingsRowView {
    pub fn new(details: StandingDetails, league: bool) -> StandingsRowView {
        let row = details.row;
        StandingsRowView {
            place: row.place,
            player: details.player,
            status: details.status,
            points: row.points,
            played: row.played,
            won: row.won,
            drawn: row.drawn,
            lost: row.lost,
            byes: row.byes,
            buchholz: row.buchholz,
            sonneborn_berger: row.sonneborn_berger,
            movement: league.then_some(match details.movement {
                Movement::Up => MovementView::Up,
                Movement::Stays => MovementView::Stays,
                Movement::Down => MovementView::Down,
            }),
        }
    }
}

/// An event's standings, best first, with the tie-breaks it orders by.
#[derive(Serialize, ToSchema)]
#[schema(as = Standings)]
pub struct StandingsView {
    pub tournament_id: String,
    pub status: TournamentStatus,
    pub round: i32,
    /// The order of the keys after points: round robin and league `sonneborn_berger`,
    /// `games_won`, `head_to_head`; Swiss `buchholz`, `sonneborn_berger`. The seed breaks what
    /// is left.
    pub tie_breaks: Vec<&'static str>,
    pub rows: Vec<StandingsRowView>,
}

/// What a tournament event tells: the event, and for its recipient the games that just began,
/// a bye, their place at the end, or why they no longer play.
#[derive(Serialize, ToSchema)]
#[schema(as = TournamentEventData)]
pub struct TournamentEventData {
    pub tournament: TournamentView,
    /// The player the event is about (the one who joined, or who forfeited).
    pub player: Option<UserRef>,
    pub round: Option<i32>,
    /// The recipient's games that began.
    pub games: Vec<String>,
    /// The recipient sits this round out with a point.
    pub bye: bool,
    pub place: Option<i32>,
    /// Why: a forfeit's cause, a cancellation's reason.
    pub reason: Option<String>,
}

/// A game's championship: its current or next edition and its leagues.
#[derive(Serialize, ToSchema)]
#[schema(as = Championship)]
pub struct ChampionshipView {
    #[schema(value_type = GameKind)]
    pub game: String,
    /// Players entered now (the next edition takes them all).
    pub players: i64,
    /// Whether the caller is entered; null without a caller.
    pub entered: Option<bool>,
    /// The latest edition, if there is one.
    pub edition: Option<EditionView>,
}

#[derive(Serialize, ToSchema)]
#[schema(as = ChampionshipEdition)]
pub struct EditionView {
    pub edition: i32,
    pub status: EditionStatus,
    /// When it began, or begins.
    #[schema(value_type = Timestamp)]
    pub starts_at: DateTime<Utc>,
    #[schema(value_type = Option<Timestamp>)]
    pub finished_at: Option<DateTime<Utc>>,
    /// Its leagues, top league first.
    pub leagues: Vec<TournamentView>,
}
