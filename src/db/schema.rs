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
        time_zone -> Text,
        email_verified_at -> Nullable<Timestamp>,
        notification_settings -> Text,
        next_digest_at -> Nullable<Timestamp>,
        revision -> Integer,
        pending_email -> Nullable<Text>,
        review_credentials -> Integer,
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
        time_control -> Nullable<Text>,
        weekend_pause -> Integer,
        clock_white -> Nullable<Integer>,
        clock_black -> Nullable<Integer>,
        turn_started_at -> Nullable<Timestamp>,
        deadline_at -> Nullable<Timestamp>,
        next_reminder_at -> Nullable<Timestamp>,
        revision -> Integer,
        rated -> Integer,
        white_rating -> Nullable<Double>,
        black_rating -> Nullable<Double>,
        conditional_moves -> Nullable<Text>,
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
        time_control -> Nullable<Text>,
        weekend_pause -> Integer,
        rated -> Integer,
        rating_min -> Nullable<Integer>,
        rating_max -> Nullable<Integer>,
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

diesel::table! {
    vacations (id) {
        id -> Text,
        user_id -> Text,
        started_at -> Timestamp,
        ended_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    reminders_sent (game_id, ply, hours_before) {
        game_id -> Text,
        ply -> Integer,
        hours_before -> Integer,
        created_at -> Timestamp,
    }
}

diesel::table! {
    outbox (id) {
        id -> Text,
        user_id -> Text,
        kind -> Text,
        game_id -> Nullable<Text>,
        to_address -> Text,
        payload -> Text,
        status -> Text,
        attempts -> Integer,
        next_attempt_at -> Timestamp,
        locked_until -> Nullable<Timestamp>,
        last_error -> Nullable<Text>,
        created_at -> Timestamp,
        sent_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    events (id) {
        id -> BigInt,
        kind -> Text,
        user_id -> Nullable<Text>,
        other_user_id -> Nullable<Text>,
        game_id -> Nullable<Text>,
        public -> Integer,
        created_at -> Timestamp,
        data -> Text,
    }
}

diesel::table! {
    event_log (singleton) {
        singleton -> Integer,
        pruned_through -> BigInt,
    }
}

diesel::table! {
    event_tickets (hash) {
        hash -> Text,
        user_id -> Text,
        session_version -> Nullable<Integer>,
        session_id -> Nullable<Text>,
        personal_token_id -> Nullable<Text>,
        token_key -> Text,
        token_expires_at -> Timestamp,
        expires_at -> Timestamp,
    }
}

diesel::table! {
    webhooks (id) {
        id -> Text,
        user_id -> Text,
        url -> Text,
        events -> Text,
        secret -> Text,
        previous_secret -> Nullable<Text>,
        previous_secret_expires_at -> Nullable<Timestamp>,
        enabled -> Integer,
        disabled_reason -> Nullable<Text>,
        last_event_id -> BigInt,
        failing_since -> Nullable<Timestamp>,
        created_at -> Timestamp,
        updated_at -> Timestamp,
    }
}

diesel::table! {
    webhook_deliveries (webhook_id, event_id) {
        webhook_id -> Text,
        event_id -> BigInt,
        status -> Text,
        attempts -> Integer,
        next_attempt_at -> Timestamp,
        locked_until -> Nullable<Timestamp>,
        retrying_since -> Timestamp,
        created_at -> Timestamp,
        delivered_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    webhook_attempts (id) {
        id -> BigInt,
        webhook_id -> Text,
        event_id -> BigInt,
        attempted_at -> Timestamp,
        status_code -> Nullable<Integer>,
        error -> Nullable<Text>,
        duration_ms -> Integer,
    }
}

diesel::table! {
    personal_tokens (id) {
        id -> Text,
        user_id -> Text,
        parent_id -> Nullable<Text>,
        name -> Text,
        scopes -> Text,
        token_hash -> Text,
        created_at -> Timestamp,
        expires_at -> Timestamp,
        last_used_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    revoked_sessions (id) {
        id -> Text,
        user_id -> Text,
        expires_at -> Timestamp,
    }
}

diesel::table! {
    sign_ins (id) {
        id -> Text,
        user_id -> Text,
        session_version -> Integer,
        created_at -> Timestamp,
        expires_at -> Timestamp,
        client_address -> Text,
        user_agent -> Text,
    }
}

diesel::table! {
    idempotency_keys (owner_id, key) {
        owner_id -> Text,
        key -> Text,
        fingerprint -> Text,
        status -> Nullable<Integer>,
        location -> Nullable<Text>,
        body -> Nullable<Text>,
        created_at -> Timestamp,
    }
}

diesel::table! {
    ratings (user_id, game_kind) {
        user_id -> Text,
        game_kind -> Text,
        rating -> Double,
        deviation -> Nullable<Double>,
        volatility -> Nullable<Double>,
        experience -> Nullable<Integer>,
        games -> Integer,
        won -> Integer,
        drawn -> Integer,
        lost -> Integer,
        last_rated_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    conditional_notices (id) {
        id -> BigInt,
        user_id -> Text,
        game_id -> Text,
        payload -> Text,
        created_at -> Timestamp,
        told_at -> Nullable<Timestamp>,
    }
}

diesel::table! {
    rating_history (id) {
        id -> BigInt,
        game_id -> Text,
        user_id -> Text,
        opponent_id -> Text,
        game_kind -> Text,
        finished_at -> Timestamp,
        score -> Double,
        rating_before -> Double,
        deviation_before -> Nullable<Double>,
        volatility_before -> Nullable<Double>,
        experience_before -> Nullable<Integer>,
        rating_after -> Double,
        deviation_after -> Nullable<Double>,
        volatility_after -> Nullable<Double>,
        experience_after -> Nullable<Integer>,
    }
}

diesel::table! {
    inbound_mail (id) {
        id -> Text,
        message_id -> Text,
        webhook_id -> Nullable<Text>,
        source -> Text,
        envelope_from -> Nullable<Text>,
        raw -> Binary,
        status -> Text,
        attempts -> Integer,
        next_attempt_at -> Timestamp,
        locked_until -> Nullable<Timestamp>,
        received_at -> Timestamp,
        processed_at -> Nullable<Timestamp>,
        sender -> Nullable<Text>,
        outcome -> Nullable<Text>,
        answered -> Integer,
    }
}

diesel::table! {
    rate_limits (key) {
        key -> Text,
        tat -> BigInt,
        allowed -> Integer,
    }
}

diesel::table! {
    tournaments (id) {
        id -> Text,
        name -> Text,
        organiser_id -> Nullable<Text>,
        game_kind -> Text,
        options -> Text,
        time_control -> Text,
        weekend_pause -> Integer,
        rated -> Integer,
        format -> Text,
        rounds -> Nullable<Integer>,
        min_players -> Integer,
        max_players -> Integer,
        rating_min -> Nullable<Integer>,
        rating_max -> Nullable<Integer>,
        entry_deadline -> Nullable<Timestamp>,
        starts_at -> Nullable<Timestamp>,
        status -> Text,
        round -> Integer,
        edition -> Nullable<Integer>,
        league -> Nullable<Integer>,
        created_at -> Timestamp,
        started_at -> Nullable<Timestamp>,
        finished_at -> Nullable<Timestamp>,
        revision -> Integer,
    }
}

diesel::table! {
    tournament_players (tournament_id, user_id) {
        tournament_id -> Text,
        user_id -> Text,
        rating -> Double,
        seed -> Nullable<Integer>,
        status -> Text,
        joined_at -> Timestamp,
        left_at -> Nullable<Timestamp>,
        place -> Nullable<Integer>,
    }
}

diesel::table! {
    tournament_games (id) {
        id -> Text,
        tournament_id -> Text,
        round -> Integer,
        game_id -> Nullable<Text>,
        white_id -> Text,
        black_id -> Nullable<Text>,
        result -> Nullable<Text>,
        forfeit -> Integer,
    }
}

diesel::table! {
    championship_entries (user_id, game_kind) {
        user_id -> Text,
        game_kind -> Text,
        joined_at -> Timestamp,
    }
}

diesel::table! {
    championship_editions (game_kind, edition) {
        game_kind -> Text,
        edition -> Integer,
        status -> Text,
        starts_at -> Timestamp,
        finished_at -> Nullable<Timestamp>,
    }
}

diesel::joinable!(moves -> games (game_id));
diesel::joinable!(conditional_notices -> users (user_id));
diesel::joinable!(ratings -> users (user_id));
diesel::joinable!(vacations -> users (user_id));
diesel::joinable!(outbox -> users (user_id));
diesel::joinable!(rolls -> games (game_id));
diesel::joinable!(challenges -> games (game_id));
diesel::joinable!(webhooks -> users (user_id));
diesel::joinable!(personal_tokens -> users (user_id));
diesel::joinable!(revoked_sessions -> users (user_id));
diesel::joinable!(sign_ins -> users (user_id));
diesel::joinable!(webhook_deliveries -> webhooks (webhook_id));
diesel::joinable!(webhook_deliveries -> events (event_id));
diesel::joinable!(tournament_players -> tournaments (tournament_id));
diesel::joinable!(tournament_players -> users (user_id));
diesel::joinable!(tournament_games -> tournaments (tournament_id));
diesel::joinable!(tournament_games -> games (game_id));
diesel::joinable!(championship_entries -> users (user_id));

diesel::allow_tables_to_appear_in_same_query!(
    users,
    games,
    moves,
    challenges,
    rolls,
    vacations,
    reminders_sent,
    outbox,
    events,
    event_log,
    event_tickets,
    webhooks,
    webhook_deliveries,
    webhook_attempts,
    personal_tokens,
    revoked_sessions,
    idempotency_keys,
    sign_ins,
    ratings,
    rating_history,
    conditional_notices,
    inbound_mail,
    rate_limits,
    tournaments,
    tournament_players,
    tournament_games,
    championship_entries,
    championship_editions,
);
