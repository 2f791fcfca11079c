//! Board pictures carried inside a mail. A stored notification names the board it shows
//! ([`BoardImage`]: the game, the position, the options), never a picture or an address: the
//! picture is drawn when the mail is sent, and travels in the message as an inline part
//! ([`InlineImage`]) that the HTML refers to by `cid:`, so that it shows even where a mail
//! program blocks remote images.

use bytes::Bytes;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::rules::GameKind;

/// A board a mail shows, named by what it shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardImage {
    pub game: GameKind,
    /// The position in the game's notation (canonical when the server wrote it).
    pub position: String,
    /// The game's options, as stored with the game; `{}` for the standard game.
    #[serde(default = "no_options")]
    pub options: Value,
}

fn no_options() -> Value {
    Value::Object(serde_json::Map::new())
}

impl BoardImage {
    /// Reads what versions before inline pictures stored instead: the absolute address of the
    /// public picture, `…/api/v1/rules/{game}/board.png?position=…&options=…`. Any other address
    /// names no board.
    pub fn from_picture_url(address: &str) -> Option<BoardImage> {
        let address = url::Url::parse(address).ok()?;
        let mut segments = address.path_segments()?.rev();
        if segments.next()? != "board.png" {
            return None;
        }
        let game = segments.next()?.parse::<GameKind>().ok()?;
        if segments.next()? != "rules" {
            return None;
        }
        let mut position = None;
        let mut options = no_options();
        for (name, value) in address.query_pairs() {
            match &*name {
                "position" => position = Some(value.into_owned()),
                "options" => options = serde_json::from_str(&value).ok()?,
                _ => {}
            }
        }
        Some(BoardImage {
            game,
            position: position?,
            options,
        })
    }
}

/// For a field that older rows hold as a picture's address: reads the board from either form.
/// An address that names no board reads as none rather than failing, so that the mail is still
/// sent (with its text diagram) instead of being dropped as unreadable.
pub(crate) fn board_image_or_address<'de, D>(
    deserializer: D,
) -> Result<Option<BoardImage>, D::Error>
where
    D: Deserializer<'de>,
{
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Stored {
        Board(BoardImage),
        Address(String),
    }
    Ok(match Option::<Stored>::deserialize(deserializer)? {
        Some(Stored::Board(board)) => Some(board),
        Some(Stored::Address(address)) => BoardImage::from_picture_url(&address),
        None => None,
    })
}

/// A picture carried in the message itself, as a part of its `multipart/related` HTML.
#[derive(Clone, PartialEq, Eq)]
pub struct InlineImage {
    /// The part's `Content-ID` without its angle brackets; the HTML names it as `cid:…`.
    pub content_id: String,
    pub content_type: &'static str,
    /// The name a mail program offers when the picture is saved.
    pub filename: String,
    pub bytes: Bytes,
}

impl std::fmt::Debug for InlineImage {
    // Kilobytes of PNG in a log line or a failed assertion help nobody.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InlineImage")
            .field("content_id", &self.content_id)
            .field("content_type", &self.content_type)
            .field("filename", &self.filename)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

impl InlineImage {
    /// Whether the content id and the name can stand in a header and in a `cid:` URL as they
    /// are: they are made by the server, but a header must never be open to injection.
    pub(crate) fn is_safe(&self) -> bool {
        let content_id_is_safe = self
            .content_id
            .split_once('@')
            .is_some_and(|(left, right)| {
                !left.is_empty()
                    && !right.is_empty()
                    && self
                        .content_id
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-._@".contains(c))
            });
        let filename_is_safe = !self.filename.is_empty()
            && self
                .filename
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c));
        content_id_is_safe && filename_is_safe
    }
}

/// The pictures drawn for one mail, each with the board it shows. A board without a picture
/// (not drawn in time, or not drawable) is shown by its text diagram alone.
#[derive(Debug, Clone, Default)]
pub struct BoardPictures {
    drawn: Vec<(BoardImage, InlineImage)>,
}

impl BoardPictures {
    pub fn add(&mut self, board: BoardImage, image: InlineImage) {
        self.drawn.push((board, image));
    }

    pub fn of(&self, board: &BoardImage) -> Option<&InlineImage> {
        self.drawn
            .iter()
            .find(|(drawn, _)| drawn == board)
            .map(|(_, image)| image)
    }

    pub fn is_empty(&self) -> bool {
        self.drawn.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_older_rows_hold_names_its_board() {
        let board = BoardImage::from_picture_url(
            "https://kuryr.example.org/api/v1/rules/suluc/board.png?position=w+B1+%28B6%29&options=%7B%22extended%22%3Atrue%7D",
        )
        .unwrap();
        assert_eq!(board.game, GameKind::Suluc);
        assert_eq!(board.position, "w B1 (B6)");
        assert_eq!(board.options, serde_json::json!({"extended": true}));

        let plain = BoardImage::from_picture_url(
            "http://kuryr.test/api/v1/rules/cheversi/board.png?position=x",
        )
        .unwrap();
        assert_eq!(plain.options, serde_json::json!({}));

        for other in [
            "https://kuryr.example.org/api/v1/rules/chess/board.png?position=x",
            "https://kuryr.example.org/api/v1/rules/cubulus/board.svg?position=x",
            "https://kuryr.example.org/api/v1/rules/cubulus/board.png",
            "https://kuryr.example.org/api/v1/games/cubulus/board.png?position=x",
            "https://kuryr.example.org/api/v1/rules/cubulus/board.png?position=x&options=%7B",
            "not an address",
        ] {
            assert_eq!(BoardImage::from_picture_url(other), None, "{other}");
        }
    }

    #[test]
    fn only_plain_content_ids_and_names_are_safe() {
        let image = |content_id: &str, filename: &str| InlineImage {
            content_id: content_id.into(),
            content_type: "image/png",
            filename: filename.into(),
            bytes: Bytes::from_static(b"\x89PNG"),
        };
        assert!(image("board.1f2e.0190-ab@kuryr.example.org", "cubulus.png").is_safe());
        for (content_id, filename) in [
            ("no-domain", "cubulus.png"),
            ("@kuryr.example.org", "cubulus.png"),
            ("a@b>\r\nBcc: eve@example.org", "cubulus.png"),
            ("a b@kuryr.example.org", "cubulus.png"),
            ("a@kuryr.example.org", ""),
            ("a@kuryr.example.org", "x\".png"),
        ] {
            assert!(
                !image(content_id, filename).is_safe(),
                "{content_id:?} {filename:?}"
            );
        }
    }
}
