//! The notices of conditional replies played for players who take their mail as a daily digest:
//! written when a reply is played, listed by the next digest, which marks them as told in its
//! transaction.

use chrono::NaiveDateTime;
use diesel::prelude::*;

use super::connection::DbConn;
use super::schema::conditional_notices;

/// Stores a notice for `user_id` about `game_id`; `payload` is the notice as JSON.
pub fn insert(
    conn: &mut DbConn,
    user_id: &str,
    game_id: &str,
    payload: &str,
    now: NaiveDateTime,
) -> QueryResult<()> {
    diesel::insert_into(conditional_notices::table)
        .values((
            conditional_notices::user_id.eq(user_id),
            conditional_notices::game_id.eq(game_id),
            conditional_notices::payload.eq(payload),
            conditional_notices::created_at.eq(now),
        ))
        .execute(conn)
        .map(drop)
}

/// The user's notices not yet told, oldest first: each one's id and payload.
pub fn untold(conn: &mut DbConn, user_id: &str) -> QueryResult<Vec<(i64, String)>> {
    conditional_notices::table
        .filter(conditional_notices::user_id.eq(user_id))
        .filter(conditional_notices::told_at.is_null())
        .order((conditional_notices::created_at, conditional_notices::id))
        .select((conditional_notices::id, conditional_notices::payload))
        .load(conn)
}

/// Marks these notices as told at `now`; a notice already told keeps its time.
pub fn mark_told(conn: &mut DbConn, ids: &[i64], now: NaiveDateTime) -> QueryResult<()> {
    // Bound in slices: SQLite takes a limited number of parameters per statement.
    for slice in ids.chunks(500) {
        diesel::update(
            conditional_notices::table
                .filter(conditional_notices::id.eq_any(slice))
                .filter(conditional_notices::told_at.is_null()),
        )
        .set(conditional_notices::told_at.eq(now))
        .execute(conn)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::schema::games;
    use crate::db::testing;

    #[test]
    fn notices_are_listed_oldest_first_until_told() {
        let (_dir, mut conn) = testing::scratch();
        let alice = testing::user(&mut conn, "alice", 1, false, true);
        let bob = testing::user(&mut conn, "bob", 1, false, true);
        diesel::insert_into(games::table)
            .values(testing::game("g1", &alice.id, &bob.id))
            .execute(&mut conn)
            .unwrap();
        let at = |minute: u32| {
            chrono::NaiveDate::from_ymd_opt(2026, 11, 28)
                .unwrap()
                .and_hms_opt(9, minute, 0)
                .unwrap()
        };
        insert(&mut conn, &alice.id, "g1", "{\"n\":2}", at(2)).unwrap();
        insert(&mut conn, &alice.id, "g1", "{\"n\":1}", at(1)).unwrap();
        insert(&mut conn, &bob.id, "g1", "{\"n\":3}", at(3)).unwrap();

        let waiting = untold(&mut conn, &alice.id).unwrap();
        let payloads: Vec<&str> = waiting.iter().map(|(_, p)| p.as_str()).collect();
        assert_eq!(payloads, ["{\"n\":1}", "{\"n\":2}"]);

        let ids: Vec<i64> = waiting.iter().map(|(id, _)| *id).collect();
        mark_told(&mut conn, &ids, at(10)).unwrap();
        mark_told(&mut conn, &[], at(11)).unwrap();
        assert!(untold(&mut conn, &alice.id).unwrap().is_empty());
        assert_eq!(untold(&mut conn, &bob.id).unwrap().len(), 1, "not hers");

        let told: Vec<Option<NaiveDateTime>> = conditional_notices::table
            .filter(conditional_notices::user_id.eq(&alice.id))
            .select(conditional_notices::told_at)
            .load(&mut conn)
            .unwrap();
        assert_eq!(told, [Some(at(10)), Some(at(10))]);
    }
}
