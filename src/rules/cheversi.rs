// TEMPORARY STUB: replaced by the real engine.
use super::*;
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheversiOptions {}
pub struct Cheversi;
#[derive(Clone)]
pub struct Position;
pub fn score(_p: &Position) -> (u32, u32) { (0, 0) }
impl Game for Cheversi {
    const ID: &'static str = "cheversi";
    const NAME: &'static str = "Cheversi";
    const CAN_DRAW: bool = true;
    type Options = CheversiOptions;
    type Position = Position;
    type Move = u8;
    fn start(_: &Self::Options) -> Position { Position }
    fn parse_position(_: &str, _: &Self::Options) -> Result<Position, PositionError> { Ok(Position) }
    fn format_position(_: &Position) -> String { "w".into() }
    fn side_to_move(_: &Position) -> Side { Side::White }
    fn legal_moves(_: &Position) -> Vec<u8> { vec![] }
    fn parse_move(_: &Position, _: &str) -> Result<u8, MoveError> { Ok(0) }
    fn format_move(_: &Position, _: &u8) -> String { String::new() }
    fn play(_: &Position, _: &u8) -> Position { Position }
    fn outcome(_: &Position) -> Option<Outcome> { None }
}
