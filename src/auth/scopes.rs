//! What a personal access token may do (`docs/tokens.md`). A login token may do everything its
//! account may; a personal access token only what its scopes allow. Every endpoint names what it
//! needs in `api::endpoints()`, and the guard holds a personal token to it.

use serde::{Serialize, Serializer};

/// One permission a personal access token can hold. Reading what anyone may read (users, games,
/// their records and dice, the rules, the game kinds) needs none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The caller's account, settings, vacation, challenges and personal tokens, read.
    AccountRead,
    /// The caller's profile (not its email address), settings and vacation, changed.
    AccountWrite,
    /// Challenges made, accepted, declined and cancelled; tournaments made, joined, left and
    /// started, and their players removed.
    ChallengeWrite,
    /// Moves, resignations, draw offers and answers.
    GamePlay,
    /// The caller's event stream, and tickets to open it.
    EventsRead,
    WebhooksRead,
    WebhooksWrite,
    /// Personal access tokens made (with no scope the maker lacks) and revoked.
    TokensWrite,
}

impl Scope {
    /// Every scope, in the order the server writes them.
    pub const ALL: [Scope; 8] = [
        Scope::AccountRead,
        Scope::AccountWrite,
        Scope::ChallengeWrite,
        Scope::GamePlay,
        Scope::EventsRead,
        Scope::WebhooksRead,
        Scope::WebhooksWrite,
        Scope::TokensWrite,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::AccountRead => "account:read",
            Scope::AccountWrite => "account:write",
            Scope::ChallengeWrite => "challenge:write",
            Scope::GamePlay => "game:play",
            Scope::EventsRead => "events:read",
            Scope::WebhooksRead => "webhooks:read",
            Scope::WebhooksWrite => "webhooks:write",
            Scope::TokensWrite => "tokens:write",
        }
    }

    pub fn parse(name: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|scope| scope.as_str() == name)
    }

    fn bit(self) -> u16 {
        1 << self as u16
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Scope {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// A set of scopes. Serialized as the list of their names, in [`Scope::ALL`]'s order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scopes(u16);

impl Scopes {
    pub fn all() -> Scopes {
        Scope::ALL.into_iter().collect()
    }

    pub fn contains(self, scope: Scope) -> bool {
        self.0 & scope.bit() != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn iter(self) -> impl Iterator<Item = Scope> {
        Scope::ALL
            .into_iter()
            .filter(move |scope| self.contains(*scope))
    }

    /// The first scope of `self` that `holder` lacks.
    pub fn first_missing_from(self, holder: Scopes) -> Option<Scope> {
        self.iter().find(|scope| !holder.contains(*scope))
    }

    /// As stored: the names, space-separated.
    pub fn to_stored(self) -> String {
        self.iter().map(Scope::as_str).collect::<Vec<_>>().join(" ")
    }

    /// Reads [`Scopes::to_stored`]; `None` for a name the server does not know.
    pub fn from_stored(text: &str) -> Option<Scopes> {
        text.split_whitespace()
            .map(Scope::parse)
            .collect::<Option<Scopes>>()
    }
}

impl FromIterator<Scope> for Scopes {
    fn from_iter<I: IntoIterator<Item = Scope>>(iter: I) -> Scopes {
        Scopes(iter.into_iter().fold(0, |bits, scope| bits | scope.bit()))
    }
}

impl Serialize for Scopes {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

/// What a token must be to use an endpoint, beyond being genuine and alive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Needs {
    /// Nothing more: any token will do (and on public endpoints none at all).
    Nothing,
    /// A login token, or a personal token holding this scope.
    Scope(Scope),
    /// A login token: what a leaked personal token must never do (change the password, end
    /// login sessions).
    Login,
}

/// Why a credential may not use an endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    MissingScope(Scope),
    LoginRequired,
}

impl Needs {
    /// Whether a token holding `scopes` may go on; `None` stands for a login token, which holds
    /// everything.
    pub fn admits(self, scopes: Option<Scopes>) -> Result<(), Refused> {
        let Some(scopes) = scopes else {
            return Ok(());
        };
        match self {
            Needs::Nothing => Ok(()),
            Needs::Scope(scope) if scopes.contains(scope) => Ok(()),
            Needs::Scope(scope) => Err(Refused::MissingScope(scope)),
            Needs::Login => Err(Refused::LoginRequired),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_distinct() {
        for scope in Scope::ALL {
            assert_eq!(Scope::parse(scope.as_str()), Some(scope));
        }
        assert_eq!(Scope::parse("game:Play"), None);
        assert_eq!(Scope::parse("admin"), None);
        let all = Scopes::all();
        assert_eq!(all.iter().count(), Scope::ALL.len());
        assert_eq!(Scopes::from_stored(&all.to_stored()), Some(all));
    }

    #[test]
    fn sets_are_stored_in_the_servers_order() {
        let set: Scopes = [Scope::TokensWrite, Scope::GamePlay, Scope::GamePlay]
            .into_iter()
            .collect();
        assert_eq!(set.to_stored(), "game:play tokens:write");
        assert_eq!(
            serde_json::to_string(&set).unwrap(),
            r#"["game:play","tokens:write"]"#
        );
        assert_eq!(Scopes::from_stored("game:play nonsense"), None);
        assert!(Scopes::from_stored("").unwrap().is_empty());
    }

    #[test]
    fn a_subset_misses_nothing() {
        let mine: Scopes = [Scope::GamePlay, Scope::TokensWrite].into_iter().collect();
        let asked: Scopes = [Scope::GamePlay].into_iter().collect();
        assert_eq!(asked.first_missing_from(mine), None);
        let more: Scopes = [Scope::GamePlay, Scope::WebhooksWrite]
            .into_iter()
            .collect();
        assert_eq!(more.first_missing_from(mine), Some(Scope::WebhooksWrite));
    }

    #[test]
    fn login_tokens_hold_everything_and_personal_tokens_their_scopes() {
        let play: Scopes = [Scope::GamePlay].into_iter().collect();
        for needs in [
            Needs::Nothing,
            Needs::Scope(Scope::WebhooksWrite),
            Needs::Login,
        ] {
            assert_eq!(needs.admits(None), Ok(()));
        }
        assert_eq!(Needs::Nothing.admits(Some(play)), Ok(()));
        assert_eq!(Needs::Scope(Scope::GamePlay).admits(Some(play)), Ok(()));
        assert_eq!(
            Needs::Scope(Scope::EventsRead).admits(Some(play)),
            Err(Refused::MissingScope(Scope::EventsRead))
        );
        assert_eq!(
            Needs::Login.admits(Some(Scopes::all())),
            Err(Refused::LoginRequired)
        );
    }
}
