//! What happens, by kind: the names clients and webhook subscriptions use, and how long the
//! event log keeps them.

/// Kept at least this long unless configured otherwise.
pub const DEFAULT_RETENTION_DAYS: u32 = 30;
/// Streams one token may hold open unless configured otherwise: a client's tabs and devices.
pub const DEFAULT_STREAMS_PER_TOKEN: usize = 8;

/// How long events are kept, and how many streams a token may hold.
#[derive(Clone, Copy, Debug)]
pub struct EventSettings {
    pub retention: chrono::Duration,
    pub streams_per_token: usize,
    /// How often an idle stream sends a keep-alive (and checks that its token still holds).
    pub keep_alive: std::time::Duration,
}

/// The longest a stream stays silent: proxies and clients take a longer silence for a dead
/// connection.
pub const MAX_KEEP_ALIVE_SECS: u64 = 15;

impl Default for EventSettings {
    fn default() -> Self {
        EventSettings {
            retention: chrono::Duration::days(i64::from(DEFAULT_RETENTION_DAYS)),
            streams_per_token: DEFAULT_STREAMS_PER_TOKEN,
            keep_alive: std::time::Duration::from_secs(MAX_KEEP_ALIVE_SECS),
        }
    }
}

/// What happened. The names are stable: clients and webhook subscriptions use them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    ChallengeCreated,
    ChallengeAccepted,
    ChallengeDeclined,
    ChallengeCancelled,
    GameStarted,
    Move,
    TurnStarted,
    ReminderDue,
    DrawOffered,
    DrawAccepted,
    DrawDeclined,
    GameOver,
    VacationStarted,
    VacationEnded,
    TournamentJoined,
    TournamentStarted,
    TournamentRound,
    TournamentForfeit,
    TournamentFinished,
}

impl EventKind {
    pub const ALL: [EventKind; 19] = [
        EventKind::ChallengeCreated,
        EventKind::ChallengeAccepted,
        EventKind::ChallengeDeclined,
        EventKind::ChallengeCancelled,
        EventKind::GameStarted,
        EventKind::Move,
        EventKind::TurnStarted,
        EventKind::ReminderDue,
        EventKind::DrawOffered,
        EventKind::DrawAccepted,
        EventKind::DrawDeclined,
        EventKind::GameOver,
        EventKind::VacationStarted,
        EventKind::VacationEnded,
        EventKind::TournamentJoined,
        EventKind::TournamentStarted,
        EventKind::TournamentRound,
        EventKind::TournamentForfeit,
        EventKind::TournamentFinished,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::ChallengeCreated => "challenge.created",
            EventKind::ChallengeAccepted => "challenge.accepted",
            EventKind::ChallengeDeclined => "challenge.declined",
            EventKind::ChallengeCancelled => "challenge.cancelled",
            EventKind::GameStarted => "game.started",
            EventKind::Move => "game.move",
            EventKind::TurnStarted => "game.turn",
            EventKind::ReminderDue => "game.reminder",
            EventKind::DrawOffered => "game.draw_offered",
            EventKind::DrawAccepted => "game.draw_accepted",
            EventKind::DrawDeclined => "game.draw_declined",
            EventKind::GameOver => "game.over",
            EventKind::VacationStarted => "vacation.started",
            EventKind::VacationEnded => "vacation.ended",
            EventKind::TournamentJoined => "tournament.joined",
            EventKind::TournamentStarted => "tournament.started",
            EventKind::TournamentRound => "tournament.round",
            EventKind::TournamentForfeit => "tournament.forfeit",
            EventKind::TournamentFinished => "tournament.finished",
        }
    }

    pub fn parse(name: &str) -> Option<EventKind> {
        EventKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }

    /// Whether spectators see it on the game's public stream: what happens on the board and to
    /// the game, never whose turn it privately is, reminders or challenges.
    pub fn is_public(self) -> bool {
        matches!(
            self,
            EventKind::GameStarted
                | EventKind::Move
                | EventKind::DrawOffered
                | EventKind::DrawAccepted
                | EventKind::DrawDeclined
                | EventKind::GameOver
        )
    }
}
