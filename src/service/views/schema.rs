//! How the typed values of the views are described in the API's OpenAPI document: the enums of
//! the rules and of the service, whose names and values come from the types themselves, and the
//! time controls with their bounds. The document is assembled in `api::openapi`.

use utoipa::openapi::schema::{
    Discriminator, KnownFormat, ObjectBuilder, OneOfBuilder, Schema, SchemaFormat, Type,
};
use utoipa::openapi::{RefOr, schema::Ref};
use utoipa::{PartialSchema, ToSchema};

use crate::clock::TimeControl;
use crate::clock::control::{
    BANK_INCREMENT_DAYS, BANK_INITIAL_DAYS, BANK_MAX_DAYS_LIMIT, PER_MOVE_DAYS,
};
use crate::db::columns::{
    ChallengeStatus, DeliveryStatus, EditionStatus, EntrantStatus, EventResult, TournamentFormat,
    TournamentStatus, Word,
};
use crate::rules::{EndReason, Engine, GameKind, OptionSpec, Side};
use crate::service::model::challenge::ColorChoice;
use crate::service::model::event::EventKind;
use crate::service::model::game::{GameResult, GameStatus, Termination};

fn string_enum(description: &str, values: Vec<&'static str>) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(description))
        .enum_values(Some(values))
        .into()
}

macro_rules! string_enum {
    ($ty:ty, $description:expr, $values:expr) => {
        impl PartialSchema for $ty {
            fn schema() -> RefOr<Schema> {
                string_enum($description, $values)
            }
        }
        impl ToSchema for $ty {}
    };
}

string_enum!(
    Side,
    "One of the two players; White moves first.",
    Side::BOTH.map(Side::name).to_vec()
);
string_enum!(
    GameKind,
    "A game, by its id (`GET /api/v1/games/kinds` lists those this server plays).",
    GameKind::ALL.map(GameKind::id).to_vec()
);
string_enum!(
    GameStatus,
    "Whether moves can still be played.",
    [GameStatus::Active, GameStatus::Finished]
        .map(GameStatus::as_str)
        .to_vec()
);
string_enum!(
    GameResult,
    "The winner, or `draw`.",
    [
        GameResult::Won(Side::White),
        GameResult::Won(Side::Black),
        GameResult::Drawn
    ]
    .map(GameResult::as_str)
    .to_vec()
);
string_enum!(
    Termination,
    "How a game ended: on the board (`points`, `no_legal_move`, `checkmate`, `no_pieces`, `goal_reached`, `decided`), or by `resignation`, `agreement`, `time` or `forfeit` (a tournament player withdrew, was removed or lost another game of the event on time; such a game rates nobody).",
    EndReason::ALL
        .map(Termination::Board)
        .into_iter()
        .chain([
            Termination::Resignation,
            Termination::Agreement,
            Termination::Time,
            Termination::Forfeit
        ])
        .map(Termination::as_str)
        .collect()
);
string_enum!(
    EndReason,
    "Why a position ended the game on the board.",
    EndReason::ALL.map(EndReason::id).to_vec()
);
string_enum!(
    ColorChoice,
    "The colour the challenger plays; `random` is drawn when the challenge is accepted.",
    [ColorChoice::White, ColorChoice::Black, ColorChoice::Random]
        .map(ColorChoice::id)
        .to_vec()
);

string_enum!(
    ChallengeStatus,
    "Where a challenge stands.",
    ChallengeStatus::ALL.iter().map(|s| s.as_str()).collect()
);
string_enum!(
    TournamentFormat,
    "`round_robin`: every pair plays two games at once, one with each colour; `swiss`: a set number of rounds paired by score; `league`: a league of a championship (a double round robin the server runs).",
    TournamentFormat::ALL.iter().map(|s| s.as_str()).collect()
);
string_enum!(
    TournamentStatus,
    "`open` for entries, `running`, `finished`, or `cancelled` (too few players at its start).",
    TournamentStatus::ALL.iter().map(|s| s.as_str()).collect()
);
string_enum!(
    EntrantStatus,
    "`playing`, or gone: `withdrawn`, `removed` by the organiser, or `forfeited` (lost a game of the event on time). A player who is gone has lost their remaining games by forfeit.",
    EntrantStatus::ALL.iter().map(|s| s.as_str()).collect()
);
string_enum!(
    EventResult,
    "What an event's game counted for: `white` or `black` won, `draw`, or `bye` (a point for the player who sat the round out). Null while the game goes on.",
    EventResult::ALL.iter().map(|s| s.as_str()).collect()
);
string_enum!(
    EditionStatus,
    "`scheduled` (with its start), `running`, or `finished`.",
    EditionStatus::ALL.iter().map(|s| s.as_str()).collect()
);

/// Why dice were rolled.
pub struct RollPurpose;
string_enum!(
    RollPurpose,
    "`opening`: one die per player, White's first; `turn`: the roll of the side to move.",
    vec![
        crate::service::model::game::roll_purpose::OPENING,
        crate::service::model::game::roll_purpose::TURN
    ]
);

/// A moment, in UTC.
pub struct Timestamp;
impl PartialSchema for Timestamp {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .description(Some("UTC, RFC 3339."))
            .into()
    }
}
impl ToSchema for Timestamp {}

fn days(name: &str, low: u32, high: u32) -> (String, ObjectBuilder) {
    (
        name.to_owned(),
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(low))
            .maximum(Some(high)),
    )
}

fn kind(name: &str, description: &str, fields: Vec<(String, ObjectBuilder)>) -> RefOr<Schema> {
    let mut object = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(description))
        .property(
            "kind",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some([name])),
        )
        .required("kind");
    for (field, schema) in fields {
        object = object.property(field.clone(), schema).required(field);
    }
    object.into()
}

/// The three kinds of time control, each its own schema, tagged by `kind`.
pub struct TimeControlNone;
pub struct TimeControlPerMove;
pub struct TimeControlBank;

impl PartialSchema for TimeControlNone {
    fn schema() -> RefOr<Schema> {
        kind("none", "No clock: nobody ever loses on time.", vec![])
    }
}
impl ToSchema for TimeControlNone {}

impl PartialSchema for TimeControlPerMove {
    fn schema() -> RefOr<Schema> {
        kind(
            "per_move",
            "Each move within `days` of counted time, reset on every move.",
            vec![days("days", *PER_MOVE_DAYS.start(), *PER_MOVE_DAYS.end())],
        )
    }
}
impl ToSchema for TimeControlPerMove {}

impl PartialSchema for TimeControlBank {
    fn schema() -> RefOr<Schema> {
        kind(
            "bank",
            "Each player starts with `initial_days`; each move adds `increment_days` to what is left, never beyond `max_days` (at least `initial_days`).",
            vec![
                days(
                    "initial_days",
                    *BANK_INITIAL_DAYS.start(),
                    *BANK_INITIAL_DAYS.end(),
                ),
                days(
                    "increment_days",
                    *BANK_INCREMENT_DAYS.start(),
                    *BANK_INCREMENT_DAYS.end(),
                ),
                days("max_days", 1, BANK_MAX_DAYS_LIMIT),
            ],
        )
    }
}
impl ToSchema for TimeControlBank {}

impl PartialSchema for TimeControl {
    fn schema() -> RefOr<Schema> {
        let variants = [
            ("none", "TimeControlNone"),
            ("per_move", "TimeControlPerMove"),
            ("bank", "TimeControlBank"),
        ];
        let mut discriminator = Discriminator::new("kind");
        for (kind, name) in variants {
            discriminator
                .mapping
                .insert(kind.to_owned(), format!("#/components/schemas/{name}"));
        }
        let mut one_of = OneOfBuilder::new()
            .description(Some(
                "How much time the players get; a player who reaches the deadline loses on time. Days are counted time (`docs/clocks.md`).",
            ))
            .discriminator(Some(discriminator));
        for (_, name) in variants {
            one_of = one_of.item(Ref::from_schema_name(name));
        }
        one_of.into()
    }
}

impl ToSchema for TimeControl {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push(("TimeControlNone".into(), TimeControlNone::schema()));
        schemas.push(("TimeControlPerMove".into(), TimeControlPerMove::schema()));
        schemas.push(("TimeControlBank".into(), TimeControlBank::schema()));
    }
}

/// What happened; the event kinds by their stable names.
pub struct EventType;
impl PartialSchema for EventType {
    fn schema() -> RefOr<Schema> {
        string_enum(
            "What happened. Clients should ignore types they do not know: new ones may be added.",
            EventKind::ALL.map(EventKind::as_str).to_vec(),
        )
    }
}
impl ToSchema for EventType {}

/// An event type a webhook is sent, or `*` for all.
pub struct WebhookEventType;
impl PartialSchema for WebhookEventType {
    fn schema() -> RefOr<Schema> {
        string_enum(
            "An event type, or `*` for all of them.",
            std::iter::once("*")
                .chain(EventKind::ALL.map(EventKind::as_str))
                .collect(),
        )
    }
}
impl ToSchema for WebhookEventType {}

string_enum!(
    DeliveryStatus,
    "Where a delivery stands.",
    DeliveryStatus::ALL.iter().map(|s| s.as_str()).collect()
);

/// A user, by id and name.
impl PartialSchema for crate::db::users::UserRef {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some("A user, by id and name."))
            .property("id", ObjectBuilder::new().schema_type(Type::String))
            .required("id")
            .property("username", ObjectBuilder::new().schema_type(Type::String))
            .required("username")
            .into()
    }
}
impl ToSchema for crate::db::users::UserRef {}

fn option_property(spec: &OptionSpec, which: Option<&str>) -> ObjectBuilder {
    let kind = if spec.kind == "integer" {
        Type::Integer
    } else {
        Type::Boolean
    };
    let description = match which {
        Some(game) => format!("{game}: {}", spec.description),
        None => spec.description.to_owned(),
    };
    ObjectBuilder::new()
        .schema_type(kind)
        .description(Some(description))
        .default(Some(spec.default.clone()))
        .minimum(spec.minimum)
        .maximum(spec.maximum)
}

fn closed(object: ObjectBuilder) -> ObjectBuilder {
    object.additional_properties(Some(
        utoipa::openapi::schema::AdditionalProperties::FreeForm(false),
    ))
}

/// The options of one game, from the options its engine declares; each one left out takes its
/// default.
pub fn options_of(engine: &dyn Engine) -> RefOr<Schema> {
    let mut object =
        closed(ObjectBuilder::new().schema_type(Type::Object)).description(Some(format!(
            "The options of {}; each one left out takes its default.",
            engine.name()
        )));
    for spec in engine.option_specs() {
        object = object.property(spec.name, option_property(&spec, None));
    }
    object.into()
}

/// Every option of every game, each optional, in one closed object.
fn every_option(description: &str) -> RefOr<Schema> {
    let mut object =
        closed(ObjectBuilder::new().schema_type(Type::Object)).description(Some(description));
    for (_, engine) in GameKind::playable() {
        for spec in engine.option_specs() {
            object = object.property(spec.name, option_property(&spec, Some(engine.name())));
        }
    }
    object.into()
}

/// A game's options, as a game shows them: every option of every game, each present in the
/// games it belongs to (`GET /api/v1/games/kinds` lists which).
pub struct GameOptions;
impl PartialSchema for GameOptions {
    fn schema() -> RefOr<Schema> {
        every_option(
            "A game's options, each set: only those of its game are present (`GET /api/v1/games/kinds` lists them).",
        )
    }
}
impl ToSchema for GameOptions {}

/// Options as a request gives them for a game named beside them: any of every game's options,
/// each optional; only those of that game are accepted.
pub struct RequestedOptions;
impl PartialSchema for RequestedOptions {
    fn schema() -> RefOr<Schema> {
        every_option(
            "Options for the game the request names; each one left out takes its default, and only that game's own are accepted (`GET /api/v1/games/kinds` lists them).",
        )
    }
}
impl ToSchema for RequestedOptions {}

/// An OpenAPI document: its version, what it describes, its paths, and the rest of what the
/// specification allows.
pub struct OpenApiDocument;
impl PartialSchema for OpenApiDocument {
    fn schema() -> RefOr<Schema> {
        let open = |description: &str| {
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .description(Some(description))
                .additional_properties(Some(
                    utoipa::openapi::schema::AdditionalProperties::FreeForm(true),
                ))
        };
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some(
                "An OpenAPI 3.1 document (https://spec.openapis.org/oas/v3.1.0).",
            ))
            .property(
                "openapi",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .description(Some("The OpenAPI version, `3.1.0`.")),
            )
            .property("info", open("The API's title, version and licence."))
            .property("paths", open("Every operation, by path and method."))
            .required("openapi")
            .required("info")
            .required("paths")
            .additional_properties(Some(
                utoipa::openapi::schema::AdditionalProperties::FreeForm(true),
            ))
            .into()
    }
}
impl ToSchema for OpenApiDocument {}

string_enum!(
    crate::auth::scopes::Scope,
    "What a personal access token may do (`docs/tokens.md`): `account:read` (the account, its settings, vacation, challenges and personal tokens), `account:write` (the profile but not the email address, settings, vacation, the confirmation mail), `challenge:write` (make, accept, decline, cancel challenges), `game:play` (moves, resignations, draws), `events:read` (the event stream and its tickets), `webhooks:read`, `webhooks:write`, `tokens:write` (make and revoke personal tokens).",
    crate::auth::scopes::Scope::ALL
        .map(crate::auth::scopes::Scope::as_str)
        .to_vec()
);
