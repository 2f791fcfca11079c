// The schema shared by both backends. Only portable types appear here (Text, Integer, Timestamp),
// so one set of queries runs on SQLite and PostgreSQL alike. `tests/schema.rs` checks it against
// the migrations of both backends.

diesel::table! {
    users (id) {
        id -> Text,
        username -> Text,
        username_key -> Text,
        email -> Text,
        email_key -> Text,
        password_hash -> Text,
        session_version -> Integer,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        play_forced_moves -> Integer,
    }
}

diesel::table! {
    games (id) {
        id -> Text,
        game_kind -> Text,
        options -> Text,
        white_id -> Text,
        black_id -> Text,
        status -> Text,
        position -> Text,
        ply -> Integer,
        to_move_id -> Nullable<Text>,
        result -> Nullable<Text>,
        termination -> Nullable<Text>,
        result_summary -> Nullable<Text>,
        draw_offer -> Nullable<Text>,
        days_per_move -> Nullable<Integer>,
        created_at -> Timestamp,
        updated_at -> Timestamp,
        finished_at -> Nullable<Timestamp>,
        dice_seed -> Nullable<Text>,
        dice_commitment -> Nullable<Text>,
        dice_used -> Integer,
    }
}

diesel::table! {
    moves (game_id, ply) {
        game_id -> Text,
        ply -> Integer,
        side -> Text,
        player_id -> Text,
        submitted -> Text,
        notation -> Text,
        position -> Text,
        created_at -> Timestamp,
        automatic -> Integer,
    }
}

diesel::table! {
    challenges (id) {
        id -> Text,
        game_kind -> Text,
        options -> Text,
        challenger_id -> Text,
        opponent_id -> Nullable<Text>,
        open -> Integer,
        color -> Text,
        days_per_move -> Nullable<Integer>,
        status -> Text,
        game_id -> Nullable<Text>,
        created_at -> Timestamp,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    rolls (game_id, number) {
        game_id -> Text,
        number -> Integer,
        ply -> Integer,
        side -> Text,
        purpose -> Text,
        dice -> Text,
        created_at -> Timestamp,
    }
}

diesel::joinable!(moves -> games (game_id));
diesel::joinable!(rolls -> games (game_id));
diesel::joinable!(challenges -> games (game_id));

diesel::allow_tables_to_appear_in_same_query!(users, games, moves, challenges, rolls);
