//! What the tournament and championship use cases both do to an event, inside the caller's
//! transaction on the event row it holds: start it (seed, pair, create the games), count its
//! ended games, forfeit a player who is gone, pair the next round, finish it with its places,
//! and, for the last league of a championship edition, schedule the next edition.
//!
//! Every step ends by writing the event on condition of the revision it read, so a step taken
//! twice (two processes, a retried request) changes the event once; the loser's transaction
//! rolls back whole, games and mails included.

use chrono::{DateTime, Duration, Utc};

use super::event_log::{self, Event};
use super::games::{self, NewGame};
use super::mail::{GameForMail, Notifier, enqueue};
use super::ratings;
use crate::db::DbConn;
use crate::db::columns::{
    EditionStatus, EntrantStatus, EventResult, GameStatus, TournamentFormat, TournamentStatus,
};
use crate::db::tournaments::{self as stored, Edition, Entrant, EventGame, Tournament};
use crate::mail::{Notification, TournamentGameLine, TournamentNews};
use crate::rules::Side;
use crate::service::model::error::{Conflict, ServiceError};
use crate::service::model::event::EventKind;
use crate::service::model::game::{GameDetails, GameResult, Termination};
use crate::service::model::tournament::{
    TournamentDetails, clock_of, kind_of, options_of, points_in_words, seeded, standings_of,
};
use crate::service::model::users::{Recipient, recipient, user_ref, user_refs};
use crate::service::views::GameView;
use crate::service::views::tournaments::{TournamentEventData, TournamentView};
use crate::tournament::Colour;
use crate::tournament::swiss::{self, SwissPlayer};

/// How long after the last league of an edition ends the next edition begins.
pub const BETWEEN_EDITIONS: Duration = Duration::days(7);

pub fn not_found(id: &str) -> ServiceError {
    ServiceError::NotFound(format!("there is no tournament with id `{id}`"))
}

pub fn race() -> ServiceError {
    ServiceError::conflict(
        Conflict::ConcurrentUpdate,
        "the tournament changed at the same moment; reload it and try again",
    )
}

/// Writes the event's new state on condition that it is still at the revision it was read at.
pub fn save(conn: &mut DbConn, event: &mut Tournament) -> Result<(), ServiceError> {
    if !stored::update_if_unchanged(conn, event, event.revision)? {
        return Err(race());
    }
    event.revision += 1;
    Ok(())
}

pub fn details(conn: &mut DbConn, event: Tournament) -> Result<TournamentDetails, ServiceError> {
    let organiser = match &event.organiser_id {
        Some(id) => {
            let refs = user_refs(conn, &[id])?;
            Some(user_ref(&refs, id)?)
        }
        None => None,
    };
    let players = stored::count_entrants(conn, &event.id)?;
    Ok(TournamentDetails {
        tournament: event,
        organiser,
        players,
    })
}

/// What one player is told about an event.
struct News<'a> {
    kind: EventKind,
    word: &'static str,
    round: Option<i32>,
    games: Vec<TournamentGameLine>,
    game_ids: Vec<String>,
    bye: bool,
    place: Option<i32>,
    points: Option<f64>,
    reason: Option<String>,
    player: Option<&'a crate::db::users::UserRef>,
}

impl<'a> News<'a> {
    fn new(kind: EventKind, word: &'static str) -> News<'a> {
        News {
            kind,
            word,
            round: None,
            games: Vec::new(),
            game_ids: Vec::new(),
            bye: false,
            place: None,
            points: None,
            reason: None,
            player: None,
        }
    }
}

/// Records the event for `to` and mails them (as their settings allow), in the transaction.
fn tell(
    conn: &mut DbConn,
    notifier: &Notifier,
    view: &TournamentView,
    to: &Recipient,
    news: News<'_>,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let data = TournamentEventData {
        tournament: view.clone(),
        player: news.player.cloned(),
        round: news.round,
        games: news.game_ids,
        bye: news.bye,
        place: news.place,
        reason: news.reason.clone(),
    };
    event_log::record(
        conn,
        vec![Event::tournament(news.kind, &to.id, &data)?],
        now.naive_utc(),
    )?;
    let game = kind_of_view(view);
    let mail = Notification::Tournament(TournamentNews {
        username: to.username.clone(),
        news: news.word.to_owned(),
        tournament: view.name.clone(),
        game,
        round: news.round.and_then(|r| u32::try_from(r).ok()),
        rounds: view.rounds.and_then(|r| u32::try_from(r).ok()),
        games: news.games,
        bye: news.bye,
        place: news.place.and_then(|p| u32::try_from(p).ok()),
        players: u32::try_from(view.players).unwrap_or(0),
        points: news.points.map(points_in_words),
        reason: news.reason,
        url: notifier.url(&format!("/tournaments/{}", view.id)),
    });
    enqueue(conn, to, mail, None, now)?;
    Ok(())
}

fn kind_of_view(view: &TournamentView) -> String {
    view.game
        .parse::<crate::rules::GameKind>()
        .ok()
        .and_then(|kind| kind.engine())
        .map_or_else(|| view.game.clone(), |engine| engine.name().to_owned())
}

fn view_of(conn: &mut DbConn, event: &Tournament) -> Result<TournamentView, ServiceError> {
    TournamentView::new(details(conn, event.clone())?)
}

/// Tells the player who joined, and the organiser.
pub fn joined(
    conn: &mut DbConn,
    notifier: &Notifier,
    event: &Tournament,
    player: &Recipient,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let view = view_of(conn, event)?;
    let who = crate::db::users::UserRef {
        id: player.id.clone(),
        username: player.username.clone(),
    };
    let news = News {
        player: Some(&who),
        ..News::new(EventKind::TournamentJoined, "joined")
    };
    tell(conn, notifier, &view, player, news, now)?;
    if let Some(organiser) = event.organiser_id.as_deref().filter(|id| *id != player.id) {
        let data = TournamentEventData {
            tournament: view,
            player: Some(who),
            round: None,
            games: Vec::new(),
            bye: false,
            place: None,
            reason: None,
        };
        let event = Event::tournament(EventKind::TournamentJoined, organiser, &data)?;
        event_log::record(conn, vec![event], now.naive_utc())?;
    }
    Ok(())
}

/// A pairing to play: White, Black.
type Pair = (String, String);

/// Creates the games of a round (and its bye), records their start for their players and
/// spectators, and answers each player's new games for their mail.
fn play_round(
    conn: &mut DbConn,
    notifier: &Notifier,
    event: &Tournament,
    round: i32,
    pairs: &[Pair],
    bye: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Vec<(String, TournamentGameLine, String)>, ServiceError> {
    let kind = kind_of(event)?;
    let options = options_of(event)?;
    let clock = clock_of(event)?;
    let mut rows = Vec::new();
    let mut lines = Vec::new();
    let mut happened = Vec::new();
    for (white, black) in pairs {
        let game = games::create(
            conn,
            NewGame {
                kind,
                options: &options,
                white_id: white,
                black_id: black,
                clock,
                rated: event.rated,
            },
            now,
        )?;
        rows.push(EventGame {
            id: uuid::Uuid::now_v7().to_string(),
            tournament_id: event.id.clone(),
            round,
            game_id: Some(game.id.clone()),
            white_id: white.clone(),
            black_id: Some(black.clone()),
            result: None,
            forfeit: false,
        });
        let details = games::details(conn, game)?;
        let view = GameView::new(details.clone(), true)?;
        happened.push(Event::game_started(&view)?);
        happened.extend(event_log::turn_of(&details, &view)?);
        let to_move = details.game.to_move_id().map(str::to_owned);
        for (player, opponent, colour) in [
            (&details.white, &details.black, "White"),
            (&details.black, &details.white, "Black"),
        ] {
            lines.push((
                player.id.clone(),
                TournamentGameLine {
                    opponent: opponent.username.clone(),
                    colour: colour.to_owned(),
                    your_move: to_move.as_deref() == Some(player.id.as_str()),
                    url: notifier.game_url(&details.game.id),
                },
                details.game.id.clone(),
            ));
        }
    }
    if let Some(bye) = bye {
        rows.push(EventGame {
            id: uuid::Uuid::now_v7().to_string(),
            tournament_id: event.id.clone(),
            round,
            game_id: None,
            white_id: bye.to_owned(),
            black_id: None,
            result: Some(EventResult::Bye),
            forfeit: false,
        });
    }
    stored::insert_games(conn, &rows)?;
    event_log::record(conn, happened, now.naive_utc())?;
    Ok(lines)
}

/// Tells every player still playing that a round (or the event) began, with their games.
#[allow(clippy::too_many_arguments)]
fn tell_round(
    conn: &mut DbConn,
    notifier: &Notifier,
    event: &Tournament,
    kind: EventKind,
    word: &'static str,
    lines: Vec<(String, TournamentGameLine, String)>,
    bye: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let view = view_of(conn, event)?;
    let players = stored::entrants(conn, &event.id)?;
    for player in players
        .iter()
        .filter(|p| p.status == EntrantStatus::Playing)
    {
        let mine: Vec<&(String, TournamentGameLine, String)> = lines
            .iter()
            .filter(|(id, ..)| *id == player.user_id)
            .collect();
        let news = News {
            round: Some(event.round),
            games: mine.iter().map(|(_, line, _)| line.clone()).collect(),
            game_ids: mine.iter().map(|(.., game)| game.clone()).collect(),
            bye: bye == Some(player.user_id.as_str()),
            ..News::new(kind, word)
        };
        let to = recipient(conn, &player.user_id)?;
        tell(conn, notifier, &view, &to, news, now)?;
    }
    Ok(())
}

/// Starts an open event the caller holds: too few players cancel it; otherwise its players are
/// seeded by their current ratings, and its games begin (all of them for a round robin or a
/// league, the first round for a Swiss).
pub fn start(
    conn: &mut DbConn,
    notifier: &Notifier,
    event: &mut Tournament,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    if event.status != TournamentStatus::Open {
        return Err(ServiceError::conflict(
            Conflict::TournamentClosed,
            format!("this tournament is {}, not open", event.status.as_str()),
        ));
    }
    let mut entrants = stored::entrants(conn, &event.id)?;
    let naive_now = now.naive_utc();
    if entrants.len() < usize::try_from(event.min_players).unwrap_or(usize::MAX) {
        return cancel(conn, notifier, event, &entrants, now);
    }
    let kind = kind_of(event)?;
    for entrant in &mut entrants {
        entrant.rating = ratings::standing(conn, kind, &entrant.user_id)?
            .strength
            .rating();
        entrant.seed = None;
    }
    let order = seeded(&entrants);
    for entrant in &mut entrants {
        entrant.seed = order
            .iter()
            .find(|s| s.id == entrant.user_id)
            .and_then(|s| i32::try_from(s.seed).ok());
        stored::update_entrant(conn, entrant)?;
    }
    event.status = TournamentStatus::Running;
    event.started_at = Some(naive_now);
    event.round = 1;
    let ids: Vec<String> = order.iter().map(|s| s.id.clone()).collect();
    let (pairs, bye) = match event.format {
        TournamentFormat::RoundRobin | TournamentFormat::League => (double_round_robin(&ids), None),
        TournamentFormat::Swiss => {
            let players: Vec<SwissPlayer> = order
                .iter()
                .map(|s| SwissPlayer {
                    id: s.id.clone(),
                    rating: s.rating,
                    points: 0.0,
                    colours: Vec::new(),
                    opponents: Vec::new(),
                    had_bye: false,
                })
                .collect();
            let pairing = swiss::pair(&players);
            (pairing.games, pairing.bye)
        }
    };
    save(conn, event)?;
    let lines = play_round(conn, notifier, event, 1, &pairs, bye.as_deref(), now)?;
    tell_round(
        conn,
        notifier,
        event,
        EventKind::TournamentStarted,
        "started",
        lines,
        bye.as_deref(),
        now,
    )
}

/// Every pair twice, one game with each colour, the higher seed White in the first.
fn double_round_robin(ids: &[String]) -> Vec<Pair> {
    let mut pairs = Vec::new();
    for (i, first) in ids.iter().enumerate() {
        for second in &ids[i + 1..] {
            pairs.push((first.clone(), second.clone()));
            pairs.push((second.clone(), first.clone()));
        }
    }
    pairs
}

fn cancel(
    conn: &mut DbConn,
    notifier: &Notifier,
    event: &mut Tournament,
    entrants: &[Entrant],
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    event.status = TournamentStatus::Cancelled;
    event.finished_at = Some(now.naive_utc());
    save(conn, event)?;
    let view = view_of(conn, event)?;
    let reason = format!(
        "it had {} of the {} players it needed when it was due to begin",
        entrants.len(),
        event.min_players
    );
    for entrant in entrants {
        let to = recipient(conn, &entrant.user_id)?;
        let news = News {
            reason: Some(reason.clone()),
            ..News::new(EventKind::TournamentFinished, "cancelled")
        };
        tell(conn, notifier, &view, &to, news, now)?;
    }
    Ok(())
}

/// Takes a player out of a running event the caller holds: their status and time, and every
/// game of theirs still going lost by forfeit (rated for nobody). The event is saved by the
/// caller's next step.
pub fn forfeit(
    conn: &mut DbConn,
    notifier: &Notifier,
    event: &Tournament,
    user_id: &str,
    status: EntrantStatus,
    reason: &str,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let naive_now = now.naive_utc();
    let mut entrant = stored::entrants(conn, &event.id)?
        .into_iter()
        .find(|e| e.user_id == user_id)
        .ok_or_else(|| {
            ServiceError::conflict(
                Conflict::NotEntered,
                "that player is not in this tournament",
            )
        })?;
    if entrant.status != EntrantStatus::Playing {
        return Ok(());
    }
    entrant.status = status;
    entrant.left_at = Some(naive_now);
    stored::update_entrant(conn, &entrant)?;
    for state in stored::games_of(conn, &event.id)? {
        let row = &state.event;
        let theirs = row.white_id == user_id || row.black_id.as_deref() == Some(user_id);
        if !theirs || state.status != Some(GameStatus::Active) {
            continue;
        }
        let Some(game_id) = &row.game_id else {
            continue;
        };
        let mut game = games::find(conn, game_id)?;
        let loser = if game.white_id == user_id {
            Side::White
        } else {
            Side::Black
        };
        let ply = game.ply;
        let refs = user_refs(conn, &[&game.white_id, &game.black_id])?;
        let name = user_ref(&refs, user_id)?.username;
        games::finish(
            &mut game,
            GameResult::Won(loser.opponent()),
            Termination::Forfeit,
            Some(format!("{name} forfeited the game")),
            naive_now,
        );
        games::save(conn, &game, ply)?;
        let result = match loser {
            Side::White => EventResult::Black,
            Side::Black => EventResult::White,
        };
        stored::count_result(conn, &row.id, result, true)?;
        let details = GameDetails {
            white: user_ref(&refs, &game.white_id)?,
            black: user_ref(&refs, &game.black_id)?,
            game,
        };
        let opponent = recipient(conn, details.game.player(loser.opponent()))?;
        let mail = GameForMail::of(&details, notifier).game_over(&opponent);
        enqueue(conn, &opponent, mail, Some(&details.game.id), now)?;
        games::tell_everyone(conn, details, None, None, now)?;
    }
    let view = view_of(conn, event)?;
    let to = recipient(conn, user_id)?;
    let who = crate::db::users::UserRef {
        id: to.id.clone(),
        username: to.username.clone(),
    };
    let news = News {
        reason: Some(reason.to_owned()),
        player: Some(&who),
        ..News::new(EventKind::TournamentForfeit, "forfeit")
    };
    tell(conn, notifier, &view, &to, news, now)?;
    if event.format == TournamentFormat::League {
        // A player who is gone from a league is not carried into the next edition.
        stored::leave_championship(conn, user_id, &event.game_kind)?;
    }
    Ok(())
}

/// Counts the ended games of a running event the caller holds, forfeits the players who lost
/// one on time, and when the round is complete pairs the next one or finishes the event.
/// Answers whether anything changed.
pub fn step(
    conn: &mut DbConn,
    notifier: &Notifier,
    event: &mut Tournament,
    now: DateTime<Utc>,
) -> Result<bool, ServiceError> {
    if event.status != TournamentStatus::Running {
        return Ok(false);
    }
    let mut changed = false;
    let mut timed_out = Vec::new();
    for state in stored::games_of(conn, &event.id)? {
        if state.event.result.is_some() || state.status != Some(GameStatus::Finished) {
            continue;
        }
        let result = match state.result.as_deref() {
            Some("white") => EventResult::White,
            Some("black") => EventResult::Black,
            Some("draw") => EventResult::Draw,
            other => {
                return Err(ServiceError::internal(format!(
                    "game {:?} ended with the result {other:?}",
                    state.event.game_id
                )));
            }
        };
        let forfeit = state.termination.as_deref() == Some(Termination::Forfeit.as_str());
        stored::count_result(conn, &state.event.id, result, forfeit)?;
        changed = true;
        if state.termination.as_deref() == Some(Termination::Time.as_str()) {
            let loser = match result {
                EventResult::White => state.event.black_id.clone(),
                _ => Some(state.event.white_id.clone()),
            };
            timed_out.extend(loser);
        }
    }
    for loser in timed_out {
        forfeit(
            conn,
            notifier,
            event,
            &loser,
            EntrantStatus::Forfeited,
            "you lost a game of it on time",
            now,
        )?;
    }
    let games = stored::games_of(conn, &event.id)?;
    let round_over = games
        .iter()
        .filter(|g| g.event.round == event.round)
        .all(|g| g.event.result.is_some());
    if !round_over {
        if changed {
            save(conn, event)?;
        }
        return Ok(changed);
    }
    let entrants = stored::entrants(conn, &event.id)?;
    let playing: Vec<&Entrant> = entrants
        .iter()
        .filter(|e| e.status == EntrantStatus::Playing)
        .collect();
    let rounds_left = event.format == TournamentFormat::Swiss
        && event.round < event.rounds.unwrap_or(0)
        && playing.len() >= 2;
    if rounds_left {
        next_round(conn, notifier, event, &entrants, &games, now)?;
    } else {
        finish(conn, notifier, event, &entrants, &games, now)?;
    }
    Ok(true)
}

fn next_round(
    conn: &mut DbConn,
    notifier: &Notifier,
    event: &mut Tournament,
    entrants: &[Entrant],
    games: &[stored::EventGameState],
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let table = standings_of(event, entrants, games);
    let mut players = Vec::new();
    for row in &table {
        let Some(entrant) = entrants.iter().find(|e| e.user_id == row.id) else {
            continue;
        };
        if entrant.status != EntrantStatus::Playing {
            continue;
        }
        let mut colours = Vec::new();
        let mut opponents = Vec::new();
        let mut had_bye = false;
        for game in games.iter().map(|g| &g.event) {
            match (&game.black_id, game.white_id == row.id) {
                (None, true) => had_bye = true,
                (Some(black), true) => {
                    colours.push(Colour::White);
                    opponents.push(black.clone());
                }
                (Some(black), false) if *black == row.id => {
                    colours.push(Colour::Black);
                    opponents.push(game.white_id.clone());
                }
                _ => {}
            }
        }
        players.push(SwissPlayer {
            id: row.id.clone(),
            rating: entrant.rating,
            points: row.points,
            colours,
            opponents,
            had_bye,
        });
    }
    let pairing = swiss::pair(&players);
    event.round += 1;
    save(conn, event)?;
    let lines = play_round(
        conn,
        notifier,
        event,
        event.round,
        &pairing.games,
        pairing.bye.as_deref(),
        now,
    )?;
    tell_round(
        conn,
        notifier,
        event,
        EventKind::TournamentRound,
        "round",
        lines,
        pairing.bye.as_deref(),
        now,
    )
}

fn finish(
    conn: &mut DbConn,
    notifier: &Notifier,
    event: &mut Tournament,
    entrants: &[Entrant],
    games: &[stored::EventGameState],
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let table = standings_of(event, entrants, games);
    event.status = TournamentStatus::Finished;
    event.finished_at = Some(now.naive_utc());
    save(conn, event)?;
    let view = view_of(conn, event)?;
    for row in &table {
        let Some(mut entrant) = entrants.iter().find(|e| e.user_id == row.id).cloned() else {
            continue;
        };
        entrant.place = i32::try_from(row.place).ok();
        stored::update_entrant(conn, &entrant)?;
        let to = recipient(conn, &entrant.user_id)?;
        let news = News {
            place: entrant.place,
            points: Some(row.points),
            ..News::new(EventKind::TournamentFinished, "finished")
        };
        tell(conn, notifier, &view, &to, news, now)?;
    }
    if event.format == TournamentFormat::League {
        close_edition_if_done(conn, event, now)?;
    }
    Ok(())
}

/// When the last league of an edition has finished: the edition ends, and the next one is
/// scheduled a week later (once: the edition moves on only from `running`).
fn close_edition_if_done(
    conn: &mut DbConn,
    league: &Tournament,
    now: DateTime<Utc>,
) -> Result<(), ServiceError> {
    let Some(number) = league.edition else {
        return Ok(());
    };
    // Held before the leagues are read: two leagues ending at once in two processes would each
    // see the other still running, and neither would close the edition.
    let Some(mut edition) = stored::find_edition_held(conn, &league.game_kind, number)? else {
        return Ok(());
    };
    let leagues = stored::leagues(conn, &league.game_kind, number)?;
    if leagues
        .iter()
        .any(|l| l.status == TournamentStatus::Running || l.status == TournamentStatus::Open)
    {
        return Ok(());
    }
    edition.status = EditionStatus::Finished;
    edition.finished_at = Some(now.naive_utc());
    if stored::move_edition(conn, &edition, EditionStatus::Running)? {
        stored::schedule_edition(
            conn,
            &Edition {
                game_kind: league.game_kind.clone(),
                edition: number + 1,
                status: EditionStatus::Scheduled,
                starts_at: (now + BETWEEN_EDITIONS).naive_utc(),
                finished_at: None,
            },
        )?;
    }
    Ok(())
}
