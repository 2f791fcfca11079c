//! SVG to PNG with resvg. Text is drawn with DejaVu Sans, bundled with the program
//! (`assets/fonts/`, with its licence), so a picture looks the same on every machine and no
//! system font is ever read.

use std::sync::{Arc, OnceLock};

use resvg::{tiny_skia, usvg};

static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

fn options() -> &'static usvg::Options<'static> {
    static OPTIONS: OnceLock<usvg::Options<'static>> = OnceLock::new();
    OPTIONS.get_or_init(|| {
        let mut fonts = usvg::fontdb::Database::new();
        fonts.load_font_data(FONT.to_vec());
        fonts.set_sans_serif_family("DejaVu Sans");
        let mut options = usvg::Options {
            font_family: "DejaVu Sans".to_owned(),
            ..usvg::Options::default()
        };
        options.fontdb = Arc::new(fonts);
        options
    })
}

/// Renders an SVG (as this module draws them) to PNG bytes at its own size.
pub fn render(svg: &str) -> Result<Vec<u8>, String> {
    let tree = usvg::Tree::from_str(svg, options()).map_err(|e| e.to_string())?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| "the picture has no size".to_owned())?;
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| e.to_string())
}
