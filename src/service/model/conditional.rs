//! Conditional moves: the replies a player plans while their opponent is to move, as lines that
//! alternate the opponent's expected move and the player's answer. Checked against the engine
//! when stored and kept in canonical notation, so that following them is comparing strings.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::error::{PlanProblem, Refusal, ServiceError};
use crate::rules::MAX_MOVE_CHARS;
use crate::rules::{LoadedPosition, MoveError, Side};

/// At most this many lines in a plan.
pub const MAX_LINES: usize = 256;
/// At most this many moves in a line (both players' together).
pub const MAX_LINE_MOVES: usize = 40;

/// A player's stored plan: whose it is, and its lines in canonical notation, each starting with
/// the opponent's move and ending with the player's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    #[serde(with = "side_name")]
    pub side: Side,
    pub lines: Vec<Vec<String>>,
}

impl Plan {
    /// Reads and checks `lines` from `position`, where `side`'s opponent is to move: every move
    /// legal in turn, the opponent's and `side`'s alternating, every line ending with `side`'s
    /// answer, and no two lines answering the same moves differently. The plan holds the lines
    /// in canonical notation, in the order given; no lines is no plan.
    pub fn check(
        position: &dyn LoadedPosition,
        side: Side,
        lines: &[Vec<String>],
    ) -> Result<Option<Plan>, ServiceError> {
        if lines.len() > MAX_LINES {
            return Err(ServiceError::invalid(
                "lines",
                format!(
                    "a plan holds at most {MAX_LINES} lines; this one has {}",
                    lines.len()
                ),
            ));
        }
        let mut canonical = Vec::with_capacity(lines.len());
        for (number, line) in lines.iter().enumerate() {
            canonical.push(check_line(position, side, number, line)?);
        }
        disagreement(&canonical)?;
        Ok((!canonical.is_empty()).then_some(Plan {
            side,
            lines: canonical,
        }))
    }

    /// The plan once `played` was played: the lines that expected it, without it; `None` when
    /// no line did, or every line that did has run out.
    pub fn follow(&self, played: &str) -> Option<Plan> {
        let lines: Vec<Vec<String>> = self
            .lines
            .iter()
            .filter(|line| line.first().is_some_and(|first| first == played))
            .map(|line| line[1..].to_vec())
            .filter(|rest| !rest.is_empty())
            .collect();
        if lines.is_empty() {
            return None;
        }
        Some(Plan {
            side: self.side,
            lines,
        })
    }

    /// The move the plan plays next when its player is to move: the lines agree on it (see
    /// [`Plan::check`]).
    pub fn answer(&self) -> Option<&str> {
        self.lines
            .first()
            .and_then(|line| line.first())
            .map(String::as_str)
    }

    /// The plan as stored with the game.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A stored plan; one that no longer reads is an error that says so.
    pub fn from_json(game_id: &str, json: &str) -> Result<Plan, ServiceError> {
        serde_json::from_str(json).map_err(|e| {
            ServiceError::internal(format!(
                "game {game_id}: stored conditional moves `{json}` are unreadable: {e}"
            ))
        })
    }
}

/// One line checked move by move from `position`, in canonical notation.
fn check_line(
    position: &dyn LoadedPosition,
    side: Side,
    number: usize,
    line: &[String],
) -> Result<Vec<String>, ServiceError> {
    let human = number + 1;
    if line.is_empty() {
        return Err(ServiceError::invalid(
            "lines",
            format!("line {human} is empty; a line is the opponent's move, then your answer"),
        ));
    }
    if line.len() > MAX_LINE_MOVES {
        return Err(ServiceError::invalid(
            "lines",
            format!(
                "line {human} has {} moves; a line holds at most {MAX_LINE_MOVES}",
                line.len()
            ),
        ));
    }
    if line.iter().any(|mv| mv.chars().count() > MAX_MOVE_CHARS) {
        return Err(ServiceError::invalid(
            "lines",
            format!("line {human}: a move is at most {MAX_MOVE_CHARS} characters"),
        ));
    }
    if line.len() % 2 == 1 {
        return Err(ServiceError::invalid(
            "lines",
            format!(
                "line {human} ends with your opponent's move `{}`; end it with your answer",
                line[line.len() - 1].trim()
            ),
        ));
    }
    let mut canonical = Vec::with_capacity(line.len());
    let mut here: Option<Box<dyn LoadedPosition>> = None;
    for (index, text) in line.iter().enumerate() {
        let current = here.as_deref().unwrap_or(position);
        let whose = if index % 2 == 0 {
            side.opponent()
        } else {
            side
        };
        let at = |detail: String| format!("line {human}, move {}: {detail}", index + 1);
        if current.outcome().is_some() {
            return Err(refused(
                number,
                index,
                Refusal::Illegal {
                    legal_moves: Vec::new(),
                },
                at(format!("the game is over before `{}`", text.trim())),
            ));
        }
        if current.side_to_move() != whose {
            return Err(refused(
                number,
                index,
                Refusal::Illegal {
                    legal_moves: Vec::new(),
                },
                at(format!(
                    "{} is to move here, not {whose}",
                    current.side_to_move()
                )),
            ));
        }
        let (notation, after) = current.play(text).map_err(|e| {
            let (refusal, detail) = match e {
                MoveError::Syntax { message } => (
                    Refusal::Syntax {
                        legal_moves: current.legal_moves(),
                    },
                    message,
                ),
                MoveError::Illegal { message } => (
                    Refusal::Illegal {
                        legal_moves: current.legal_moves(),
                    },
                    message,
                ),
                MoveError::Ambiguous { candidates } => {
                    let message = MoveError::Ambiguous {
                        candidates: candidates.clone(),
                    }
                    .to_string();
                    (Refusal::Ambiguous { candidates }, message)
                }
                MoveError::GameOver => (
                    Refusal::Illegal {
                        legal_moves: Vec::new(),
                    },
                    "the game is over here".to_owned(),
                ),
            };
            refused(number, index, refusal, at(detail))
        })?;
        canonical.push(notation);
        here = Some(after);
    }
    Ok(canonical)
}

fn refused(line: usize, index: usize, refusal: Refusal, detail: String) -> ServiceError {
    ServiceError::Plan {
        problem: PlanProblem::Move {
            line,
            index,
            refusal,
        },
        detail,
    }
}

/// Refuses two lines that, after the same moves, answer the opponent differently.
fn disagreement(lines: &[Vec<String>]) -> Result<(), ServiceError> {
    let mut answers: HashMap<&[String], (usize, &str)> = HashMap::new();
    for (number, line) in lines.iter().enumerate() {
        for end in (1..line.len()).step_by(2) {
            let answer = line[end].as_str();
            let (first, theirs) = *answers.entry(&line[..end]).or_insert((number, answer));
            if theirs != answer {
                let moves = line[..end].join(" ");
                return Err(ServiceError::Plan {
                    problem: PlanProblem::Disagree {
                        lines: [first, number],
                    },
                    detail: format!(
                        "lines {} and {} answer `{moves}` differently (`{theirs}` and `{answer}`); \
                         keep one answer for each sequence of moves",
                        first + 1,
                        number + 1
                    ),
                });
            }
        }
    }
    Ok(())
}

/// A side as its name, `"white"` or `"black"`.
mod side_name {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    use crate::rules::Side;

    pub fn serialize<S: Serializer>(side: &Side, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(side.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Side, D::Error> {
        let name = String::deserialize(deserializer)?;
        Side::from_name(&name).ok_or_else(|| D::Error::custom(format!("no side `{name}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::GameKind;

    fn start(kind: GameKind) -> Box<dyn LoadedPosition> {
        let engine = kind.engine().unwrap();
        let options = engine.normalize_options(&serde_json::json!({})).unwrap();
        let position = engine.start_position(&options).unwrap();
        engine.load(&position, &options).unwrap()
    }

    fn lines(texts: &[&[&str]]) -> Vec<Vec<String>> {
        texts
            .iter()
            .map(|line| line.iter().map(|m| (*m).to_owned()).collect())
            .collect()
    }

    /// Two legal opening moves for the side to move, and an answer to each.
    fn openings(position: &dyn LoadedPosition) -> Vec<(String, String)> {
        position
            .legal_moves()
            .into_iter()
            .take(2)
            .map(|mv| {
                let (_, after) = position.play(&mv).unwrap();
                let answer = after.legal_moves().remove(0);
                (mv, answer)
            })
            .collect()
    }

    #[test]
    fn lines_are_stored_canonical_and_followed_move_by_move() {
        let position = start(GameKind::Cheversi);
        let side = position.side_to_move().opponent();
        let o = openings(position.as_ref());
        let (a, x) = &o[0];
        let (b, y) = &o[1];
        let plan = Plan::check(
            position.as_ref(),
            side,
            &lines(&[&[a, x], &[b, y], &[a, x]]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(plan.lines.len(), 3);
        let followed = plan.follow(a).unwrap();
        assert_eq!(followed.answer(), Some(x.as_str()));
        assert_eq!(followed.lines.len(), 2);
        assert!(followed.follow(x).is_none(), "the lines have run out");
        assert!(plan.follow("not a move").is_none());
    }

    #[test]
    fn two_answers_to_the_same_moves_are_refused_naming_both_lines() {
        let position = start(GameKind::Cubulus);
        let side = position.side_to_move().opponent();
        let first = position.legal_moves().remove(0);
        let (_, after) = position.play(&first).unwrap();
        let answers = after.legal_moves();
        let err = Plan::check(
            position.as_ref(),
            side,
            &lines(&[&[&first, &answers[0]], &[&first, &answers[1]]]),
        )
        .unwrap_err();
        match err {
            ServiceError::Plan {
                problem: PlanProblem::Disagree { lines },
                ..
            } => assert_eq!(lines, [0, 1]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_illegal_move_is_refused_with_its_place() {
        let position = start(GameKind::Prosterno);
        let side = position.side_to_move().opponent();
        let first = position.legal_moves().remove(0);
        let (_, after) = position.play(&first).unwrap();
        let answer = after.legal_moves().remove(0);
        let err = Plan::check(
            position.as_ref(),
            side,
            &lines(&[&[&first, &answer], &[&first, &answer, "Z9-Z8", &answer]]),
        )
        .unwrap_err();
        match err {
            ServiceError::Plan {
                problem: PlanProblem::Move { line, index, .. },
                detail,
            } => {
                assert_eq!((line, index), (1, 2));
                assert!(detail.starts_with("line 2, move 3"), "{detail}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_line_that_ends_with_the_opponents_move_is_refused() {
        let position = start(GameKind::Basileus);
        let side = position.side_to_move().opponent();
        let first = position.legal_moves().remove(0);
        let err = Plan::check(position.as_ref(), side, &lines(&[&[&first]])).unwrap_err();
        assert!(
            matches!(err, ServiceError::Invalid { field: "lines", .. }),
            "{err:?}"
        );
    }

    #[test]
    fn no_lines_is_no_plan() {
        let position = start(GameKind::Nubulus);
        let side = position.side_to_move().opponent();
        assert_eq!(Plan::check(position.as_ref(), side, &[]).unwrap(), None);
    }

    #[test]
    fn a_plan_reads_back_as_stored() {
        let plan = Plan {
            side: Side::Black,
            lines: lines(&[&["a", "b"]]),
        };
        assert_eq!(Plan::from_json("g", &plan.to_json()).unwrap(), plan);
        assert!(Plan::from_json("g", "{\"side\":\"red\",\"lines\":[]}").is_err());
    }
}
