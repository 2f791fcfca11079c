//! Copies of the games moved in lately, with their players, kept in memory so that the next move
//! in a game is decided without reading it again.
//!
//! A copy is never trusted for what is stored: a move decided from one is written only if the
//! game and both players are still at the revisions of the copy (every change to their rows
//! raises them, migration 000014), in the same conditional update that checks the ply. A copy
//! that went stale, through a draw offer, a settings change, the scheduler or another server
//! process, costs one move a second decision inside the write, never a wrong one. So a copy may
//! be kept from any read, before or after any commit, and forgetting one is only a matter of
//! memory.
//!
//! Reading a game and its players was a fifth of the HTTP workers' time per move (the b-tree
//! descents of four rows, and building 45 columns into strings); see `docs/performance.md`.

use std::sync::Arc;

use quick_cache::Weighter;
use quick_cache::sync::Cache;

use super::games::{Player, Revisions, WithPlayers};
use super::models::Game;

/// How much memory the copies of games may take, about (see [`GameWeight`]): some 25 000 games
/// moved in within minutes of each other, for a fifth of the 128 MB a server is held to.
const GAMES_BYTES: u64 = 20 << 20;
/// The same for the players, each kept once however many games they play.
const PLAYERS_BYTES: u64 = 2 << 20;

/// A game and its players as they were stored at their revisions.
#[derive(Debug)]
pub struct Recent {
    pub game: Game,
    pub revision: i32,
    pub players: [Arc<Player>; 2],
}

impl Recent {
    pub fn revisions(&self) -> Revisions {
        Revisions::of(
            self.revision,
            self.players.each_ref().map(|player| &**player),
        )
    }

    /// The copy of the game as a move of this copy's revision left it: the move's update raises
    /// the revision by one, and leaves the players alone.
    pub fn moved(&self, game: Game) -> Recent {
        Recent {
            game,
            revision: self.revision + 1,
            players: self.players.clone(),
        }
    }
}

/// The copies, bounded by their size; the least used go first.
pub struct RecentGames {
    games: Cache<String, Arc<Recent>, GameWeight>,
    players: Cache<String, Arc<Player>, PlayerWeight>,
}

impl Default for RecentGames {
    fn default() -> Self {
        RecentGames::with_budget(GAMES_BYTES, PLAYERS_BYTES)
    }
}

impl RecentGames {
    fn with_budget(games_bytes: u64, players_bytes: u64) -> RecentGames {
        // The item estimates only size the tables up front.
        RecentGames {
            games: Cache::with_weighter((games_bytes / 1_000) as usize, games_bytes, GameWeight),
            players: Cache::with_weighter(
                (players_bytes / 500) as usize,
                players_bytes,
                PlayerWeight,
            ),
        }
    }

    /// The copy of a game, if one is kept.
    pub fn get(&self, id: &str) -> Option<Arc<Recent>> {
        self.games.get(id)
    }

    /// A copy of what a read found, sharing the players kept; not kept itself (see [`keep`]).
    ///
    /// [`keep`]: RecentGames::keep
    pub fn copy(&self, found: WithPlayers) -> Arc<Recent> {
        let [white, black] = found.players;
        Arc::new(Recent {
            game: found.game,
            revision: found.revision,
            players: [self.player(white), self.player(black)],
        })
    }

    /// Keeps a copy, unless a newer one of the game is kept already.
    pub fn keep(&self, recent: Arc<Recent>) {
        if self
            .games
            .get(&recent.game.id)
            .is_some_and(|kept| kept.revision > recent.revision)
        {
            return;
        }
        self.games.insert(recent.game.id.clone(), recent);
    }

    /// Drops the copy of a game, when what happened to it is better read again.
    pub fn forget(&self, id: &str) {
        self.games.remove(id);
    }

    /// The player as kept, shared by the copies of all their games; replaced when the row read
    /// is of another revision.
    fn player(&self, read: Player) -> Arc<Player> {
        if let Some(kept) = self.players.get(&read.id)
            && kept.revision == read.revision
        {
            return kept;
        }
        let player = Arc::new(read);
        self.players.insert(player.id.clone(), player.clone());
        player
    }
}

/// About the bytes a copy of a game takes: its own struct and its strings' buffers.
#[derive(Clone)]
struct GameWeight;

impl Weighter<String, Arc<Recent>> for GameWeight {
    fn weight(&self, id: &String, recent: &Arc<Recent>) -> u64 {
        let game = &recent.game;
        let strings = [
            Some(id),
            Some(&game.id),
            Some(&game.game_kind),
            Some(&game.options),
            Some(&game.white_id),
            Some(&game.black_id),
            Some(&game.position),
            game.to_move_id.as_ref(),
            game.result.as_ref(),
            game.termination.as_ref(),
            game.result_summary.as_ref(),
            game.draw_offer.as_ref(),
            game.dice_seed.as_ref(),
            game.dice_commitment.as_ref(),
            game.time_control.as_ref(),
        ];
        let heap: usize = strings.into_iter().flatten().map(String::capacity).sum();
        (size_of::<Recent>() + heap) as u64
    }
}

/// About the bytes a player takes.
#[derive(Clone)]
struct PlayerWeight;

impl Weighter<String, Arc<Player>> for PlayerWeight {
    fn weight(&self, id: &String, player: &Arc<Player>) -> u64 {
        let heap = id.capacity()
            + player.id.capacity()
            + player.username.capacity()
            + player.email.capacity()
            + player.notification_settings.capacity()
            + player.time_zone.capacity();
        (size_of::<Player>() + heap) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn player(id: &str, revision: i32) -> Player {
        Player {
            session_version: 0,
            play_forced_moves: false,
            id: id.into(),
            username: id.into(),
            email: format!("{id}@example.test"),
            email_verified_at: None,
            notification_settings: "{}".into(),
            time_zone: "UTC".into(),
            revision,
        }
    }

    fn found(id: &str, revision: i32, players: [i32; 2]) -> WithPlayers {
        WithPlayers {
            game: crate::db::testing::game(id, "ann", "bob"),
            revision,
            players: [player("ann", players[0]), player("bob", players[1])],
            revoked: false,
        }
    }

    fn keep_read(recent: &RecentGames, found: WithPlayers) -> Arc<Recent> {
        let copy = recent.copy(found);
        recent.keep(copy.clone());
        copy
    }

    #[test]
    fn a_player_is_kept_once_for_all_their_games() {
        let recent = RecentGames::default();
        let one = keep_read(&recent, found("g1", 0, [3, 4]));
        let two = keep_read(&recent, found("g2", 0, [3, 4]));
        assert!(Arc::ptr_eq(&one.players[0], &two.players[0]));
        // A changed player is a new copy; the older games keep theirs until read again.
        let three = keep_read(&recent, found("g3", 0, [5, 4]));
        assert!(!Arc::ptr_eq(&one.players[0], &three.players[0]));
        assert_eq!(three.revisions().players, [5, 4]);
        assert_eq!(recent.get("g1").unwrap().revisions().players, [3, 4]);
    }

    #[test]
    fn an_older_copy_does_not_replace_a_newer_one() {
        let recent = RecentGames::default();
        let read = keep_read(&recent, found("g1", 7, [0, 0]));
        let moved = Arc::new(read.moved(read.game.clone()));
        assert_eq!(moved.revision, 8);
        recent.keep(moved);
        keep_read(&recent, found("g1", 7, [0, 0]));
        assert_eq!(recent.get("g1").unwrap().revision, 8);
        recent.forget("g1");
        assert!(recent.get("g1").is_none());
    }

    #[test]
    fn the_copies_stay_within_their_budget() {
        let recent = RecentGames::with_budget(200_000, 100_000);
        for i in 0..10_000 {
            keep_read(&recent, found(&format!("game-{i:05}"), 0, [0, 0]));
        }
        assert!(
            recent.games.weight() <= 200_000,
            "{}",
            recent.games.weight()
        );
        assert!(recent.games.len() < 10_000);
        // The latest ones are kept.
        assert!(recent.get("game-09999").is_some());
    }
}
