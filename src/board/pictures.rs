//! Board pictures drawn once. A picture is named by what it shows: the game, its position in
//! canonical form, its options and its format ([`PictureKey`]). Each distinct one is drawn once,
//! on threads of its own (`crate::pool`), and kept in a cache bounded in bytes that lets the least
//! used go first; requests for the same picture while it is being drawn wait for that drawing.
//!
//! A PNG costs about 28 ms of a core; drawn on the request threads with no cache, one client
//! asking for pictures stalled every other request. A picture's tag ([`PictureKey::tag`]) is made
//! from its key and the build's drawing code, not from its bytes, so that a client revalidating a
//! picture it has is answered without drawing anything.

use std::sync::Arc;

use bytes::Bytes;
use quick_cache::Weighter;
use quick_cache::sync::Cache;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::draw::svg;
use super::png;
use crate::pool::{Pool, PoolError, PoolSettings};
use crate::rules::{GameKind, PositionError};

/// The two forms of a picture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    Svg,
    Png,
}

impl Format {
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Svg => "image/svg+xml",
            Format::Png => "image/png",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Format::Svg => "svg",
            Format::Png => "png",
        }
    }
}

/// What a picture shows: one key for every way of writing the same position and options.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PictureKey {
    kind: GameKind,
    position: String,
    /// The options as the engine completes them, as JSON.
    options: String,
    format: Format,
}

impl PictureKey {
    /// The key of `position` of a game of `kind` played with `options`: the position read and
    /// written again canonically, the options completed; a position that does not read is the
    /// caller's mistake.
    pub fn new(
        kind: GameKind,
        position: &str,
        options: &Value,
        format: Format,
    ) -> Result<PictureKey, PositionError> {
        let engine = kind
            .engine()
            .ok_or_else(|| PositionError::new(format!("{kind} cannot be drawn yet")))?;
        let options = engine
            .normalize_options(options)
            .map_err(|e| PositionError::new(e.to_string()))?;
        let position = engine.load(position, &options)?.canonical();
        Ok(PictureKey {
            kind,
            position,
            options: options.to_string(),
            format,
        })
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// The picture's strong entity tag: the same for the same key drawn by the same drawing
    /// code, and so known without drawing.
    pub fn tag(&self) -> String {
        let mut digest = Sha256::new();
        for part in [
            b"kuryr board picture\0".as_slice(),
            env!("KURYR_DRAWING").as_bytes(),
            b"\0",
            self.kind.id().as_bytes(),
            b"\0",
            self.position.as_bytes(),
            b"\0",
            self.options.as_bytes(),
            b"\0",
            self.format.name().as_bytes(),
        ] {
            digest.update(part);
        }
        format!("\"{}\"", hex::encode(&digest.finalize()[..16]))
    }

    /// Draws the picture: SVG from the position, PNG from that SVG.
    fn draw(&self) -> Result<Bytes, PictureError> {
        let options: Value = serde_json::from_str(&self.options)
            .map_err(|e| PictureError::Failed(format!("options of a key: {e}")))?;
        let drawn = svg(self.kind, &self.position, &options).map_err(PictureError::Position)?;
        Ok(match self.format {
            Format::Svg => Bytes::from(drawn),
            Format::Png => Bytes::from(png::render(&drawn).map_err(PictureError::Failed)?),
        })
    }
}

/// A picture drawn: its bytes and its tag.
#[derive(Debug)]
pub struct Picture {
    pub bytes: Bytes,
    pub tag: String,
}

/// Why no picture came.
#[derive(Debug, thiserror::Error)]
pub enum PictureError {
    /// The position cannot be drawn (it does not read).
    #[error("{0}")]
    Position(PositionError),
    /// Every drawing thread is busy and their queue is full.
    #[error("every drawing thread is busy")]
    Busy,
    #[error("drawing a board failed: {0}")]
    Failed(String),
}

impl From<PoolError> for PictureError {
    fn from(error: PoolError) -> Self {
        match error {
            PoolError::Busy => PictureError::Busy,
            PoolError::Failed(why) => PictureError::Failed(why),
        }
    }
}

/// How much is kept, and how many threads draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PictureSettings {
    /// The cache's bound on the bytes of the pictures it keeps.
    pub cache_bytes: u64,
    pub drawing: PoolSettings,
}

impl PictureSettings {
    /// 64 MB of pictures (a few thousand boards), and one drawing thread for every two cores:
    /// the others stay with the requests whatever the pictures asked for.
    pub fn for_this_machine() -> PictureSettings {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        PictureSettings {
            cache_bytes: 64 << 20,
            drawing: PoolSettings::with_threads(cores.div_ceil(2)),
        }
    }
}

/// What a kept picture weighs: its bytes, and about what its key and entry take.
#[derive(Clone)]
struct PictureWeight;

impl Weighter<PictureKey, Arc<Picture>> for PictureWeight {
    fn weight(&self, key: &PictureKey, picture: &Arc<Picture>) -> u64 {
        let overhead = 128 + key.position.len() + key.options.len() + picture.tag.len();
        (picture.bytes.len() + overhead) as u64
    }
}

/// The pictures drawn so far, and the threads that draw the others; cheap to clone.
#[derive(Clone)]
pub struct Pictures {
    cache: Arc<Cache<PictureKey, Arc<Picture>, PictureWeight>>,
    drawing: Pool<()>,
}

impl Pictures {
    pub fn start(settings: PictureSettings) -> std::io::Result<Pictures> {
        // About 20 KB a picture: quick_cache sizes its tables from this guess.
        let estimated = usize::try_from(settings.cache_bytes / 20_000)
            .unwrap_or(usize::MAX)
            .max(16);
        Ok(Pictures {
            cache: Arc::new(Cache::with_weighter(
                estimated,
                settings.cache_bytes,
                PictureWeight,
            )),
            drawing: Pool::start("kuryr-draw", settings.drawing, || ())?,
        })
    }

    /// The picture, if it was drawn and is still kept.
    pub fn kept(&self, key: &PictureKey) -> Option<Arc<Picture>> {
        self.cache.get(key)
    }

    /// The picture, drawn now if it is not kept, on a drawing thread; refused at once when every
    /// drawing thread is busy and the queue is full (a request's answer must not wait for it).
    pub async fn get(&self, key: &PictureKey) -> Result<Arc<Picture>, PictureError> {
        self.get_or_draw(key, false).await
    }

    /// Like [`Pictures::get`], waiting for a drawing thread when all are busy: for work that is
    /// nobody's request (a mail being delivered).
    pub async fn get_waiting(&self, key: &PictureKey) -> Result<Arc<Picture>, PictureError> {
        self.get_or_draw(key, true).await
    }

    async fn get_or_draw(
        &self,
        key: &PictureKey,
        wait: bool,
    ) -> Result<Arc<Picture>, PictureError> {
        // Requests for a picture being drawn wait for it here rather than draw it again; if its
        // drawing fails, the next of them draws.
        let guard = match self.cache.get_value_or_guard_async(key).await {
            Ok(picture) => return Ok(picture),
            Err(guard) => guard,
        };
        let owned = key.clone();
        let draw = move |_: &mut ()| owned.draw();
        let bytes = if wait {
            self.drawing.run_waiting(draw).await?
        } else {
            self.drawing.run(draw).await?
        }?;
        let picture = Arc::new(Picture {
            bytes,
            tag: key.tag(),
        });
        // A picture larger than the whole cache is answered, not kept.
        let _ = guard.insert(picture.clone());
        Ok(picture)
    }

    /// How many pictures the threads have drawn since the start.
    pub fn drawn(&self) -> u64 {
        self.drawing.jobs_run()
    }

    /// The threads that draw, as they are (their settings, what they ran; a test can keep
    /// them busy).
    pub fn drawing(&self) -> &Pool<()> {
        &self.drawing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NUBULUS: &str = "w B1 (B6)";

    fn pictures(cache_bytes: u64) -> Pictures {
        Pictures::start(PictureSettings {
            cache_bytes,
            drawing: PoolSettings::with_threads(1),
        })
        .unwrap()
    }

    fn key(position: &str, format: Format) -> PictureKey {
        PictureKey::new(GameKind::Nubulus, position, &serde_json::json!({}), format).unwrap()
    }

    #[tokio::test]
    async fn a_picture_is_drawn_once_whoever_asks_and_however_the_position_is_written() {
        let pictures = pictures(8 << 20);
        let first = key(NUBULUS, Format::Png);
        // The same position written another way names the same picture.
        let lenient = key("w  b1  (b6)", Format::Png);
        assert_eq!(first, lenient);
        assert!(pictures.kept(&first).is_none());
        let asks = (0..8).map(|_| pictures.get(&lenient));
        let answers = futures_util::future::join_all(asks).await;
        for answer in &answers {
            let picture = answer.as_ref().unwrap();
            assert!(picture.bytes.starts_with(b"\x89PNG"));
            assert_eq!(picture.tag, first.tag());
        }
        assert_eq!(pictures.drawn(), 1, "eight requests, one drawing");
        assert!(pictures.kept(&first).is_some());
        let svg = pictures.get(&key(NUBULUS, Format::Svg)).await.unwrap();
        assert!(svg.bytes.starts_with(b"<svg"));
        assert_ne!(svg.tag, first.tag());
        assert_eq!(pictures.drawn(), 2);
    }

    #[tokio::test]
    async fn the_cache_keeps_no_more_bytes_than_its_bound() {
        let positions = [
            "w B1 (B6)",
            "w D1 (B6)",
            "w F1 (B6)",
            "w H1 (B6)",
            "w B1 (D6)",
            "w D1 (D6)",
        ];
        // Room for about two and a half of these pictures.
        let one = pictures(8 << 20)
            .get(&key(positions[0], Format::Png))
            .await
            .unwrap();
        let bound = one.bytes.len() as u64 * 5 / 2;
        let pictures = pictures(bound);
        for position in positions {
            pictures.get(&key(position, Format::Png)).await.unwrap();
        }
        assert!(pictures.cache.weight() <= bound);
        let kept = positions
            .iter()
            .filter(|p| pictures.kept(&key(p, Format::Png)).is_some())
            .count();
        assert!((1..=2).contains(&kept), "{kept} of 6 kept in {bound} bytes");
        assert_eq!(pictures.drawn(), 6);
    }

    #[tokio::test]
    async fn a_picture_not_kept_is_refused_when_every_drawing_thread_is_taken() {
        let pictures = pictures(8 << 20);
        let (release, held) = std::sync::mpsc::channel::<()>();
        let (started, running) = std::sync::mpsc::channel::<()>();
        let busy = pictures
            .drawing()
            .submit(move |_| {
                started.send(()).unwrap();
                let _ = held.recv();
            })
            .unwrap();
        running.recv().unwrap();
        let queued = pictures.drawing().submit(|_| ()).unwrap();
        let queued_too = pictures.drawing().submit(|_| ()).unwrap();
        let refused = pictures.get(&key(NUBULUS, Format::Png)).await;
        assert!(matches!(refused, Err(PictureError::Busy)), "{refused:?}");
        drop(release);
        busy.await.unwrap();
        queued.await.unwrap();
        queued_too.await.unwrap();
        // The refusal kept nothing half-drawn: the next request draws it.
        pictures.get(&key(NUBULUS, Format::Png)).await.unwrap();
    }

    #[test]
    fn a_position_that_does_not_read_has_no_key_and_the_tag_names_the_picture() {
        assert!(
            PictureKey::new(
                GameKind::Nubulus,
                "not a position",
                &serde_json::json!({}),
                Format::Svg
            )
            .is_err()
        );
        let tag = key(NUBULUS, Format::Svg).tag();
        assert_eq!(tag.len(), 34);
        assert!(tag.starts_with('"') && tag.ends_with('"'));
        assert_ne!(tag, key("w D1 (B6)", Format::Svg).tag());
    }
}
