//! A small SVG writer: elements with attributes, text escaped, numbers written short.

use std::fmt::Write;

/// Escapes text for XML character data and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 allows no other control characters than tab, newline and return.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
            c => out.push(c),
        }
    }
    out
}

/// A number as SVG wants it: no trailing zeros.
pub fn num(value: f64) -> String {
    let rounded = (value * 100.0).round() / 100.0;
    if rounded == rounded.trunc() {
        format!("{}", rounded as i64)
    } else {
        format!("{rounded}")
    }
}

/// An SVG document under construction.
pub struct Svg {
    out: String,
    open: Vec<&'static str>,
}

/// Attributes: name and value (the value is escaped).
pub type Attrs<'a> = &'a [(&'a str, String)];

fn write_attrs(out: &mut String, attrs: Attrs<'_>) {
    for (name, value) in attrs {
        let _ = write!(out, " {name}=\"{}\"", escape(value));
    }
}

impl Svg {
    /// The root element, `width` × `height` user units, with its text alternative: `title` and
    /// `desc` (read by screen readers through `role="img"` and `aria-labelledby`).
    pub fn new(width: f64, height: f64, title: &str, desc: &str) -> Svg {
        let mut svg = Svg {
            out: String::new(),
            open: Vec::new(),
        };
        svg.open(
            "svg",
            &[
                ("xmlns", "http://www.w3.org/2000/svg".to_owned()),
                ("width", num(width)),
                ("height", num(height)),
                ("viewBox", format!("0 0 {} {}", num(width), num(height))),
                ("role", "img".to_owned()),
                ("aria-labelledby", "board-title board-desc".to_owned()),
                ("font-family", "DejaVu Sans, Verdana, sans-serif".to_owned()),
            ],
        );
        svg.text_element("title", &[("id", "board-title".to_owned())], title);
        svg.text_element("desc", &[("id", "board-desc".to_owned())], desc);
        svg
    }

    pub fn open(&mut self, tag: &'static str, attrs: Attrs<'_>) {
        self.out.push('<');
        self.out.push_str(tag);
        write_attrs(&mut self.out, attrs);
        self.out.push_str(">\n");
        self.open.push(tag);
    }

    pub fn close(&mut self) {
        if let Some(tag) = self.open.pop() {
            let _ = writeln!(self.out, "</{tag}>");
        }
    }

    pub fn empty(&mut self, tag: &str, attrs: Attrs<'_>) {
        self.out.push('<');
        self.out.push_str(tag);
        write_attrs(&mut self.out, attrs);
        self.out.push_str("/>\n");
    }

    pub fn text_element(&mut self, tag: &str, attrs: Attrs<'_>, text: &str) {
        self.out.push('<');
        self.out.push_str(tag);
        write_attrs(&mut self.out, attrs);
        let _ = writeln!(self.out, ">{}</{tag}>", escape(text));
    }

    pub fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, extra: Attrs<'_>) {
        let mut attrs = vec![
            ("x", num(x)),
            ("y", num(y)),
            ("width", num(w)),
            ("height", num(h)),
        ];
        attrs.extend(extra.iter().cloned());
        self.empty("rect", &attrs);
    }

    pub fn circle(&mut self, cx: f64, cy: f64, r: f64, extra: Attrs<'_>) {
        let mut attrs = vec![("cx", num(cx)), ("cy", num(cy)), ("r", num(r))];
        attrs.extend(extra.iter().cloned());
        self.empty("circle", &attrs);
    }

    pub fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, extra: Attrs<'_>) {
        let mut attrs = vec![
            ("x1", num(x1)),
            ("y1", num(y1)),
            ("x2", num(x2)),
            ("y2", num(y2)),
        ];
        attrs.extend(extra.iter().cloned());
        self.empty("line", &attrs);
    }

    pub fn polygon(&mut self, points: &[(f64, f64)], extra: Attrs<'_>) {
        let points = points
            .iter()
            .map(|&(x, y)| format!("{},{}", num(x), num(y)))
            .collect::<Vec<_>>()
            .join(" ");
        let mut attrs = vec![("points", points)];
        attrs.extend(extra.iter().cloned());
        self.empty("polygon", &attrs);
    }

    /// Text centred on (`x`, `y`): its middle, vertically too.
    pub fn label(&mut self, x: f64, y: f64, size: f64, text: &str, extra: Attrs<'_>) {
        let mut attrs = vec![
            ("x", num(x)),
            // `dominant-baseline` is not drawn alike everywhere; a third of the size below the
            // middle puts the baseline where capitals and digits look centred.
            ("y", num(y + size * 0.36)),
            ("font-size", num(size)),
            ("text-anchor", "middle".to_owned()),
        ];
        attrs.extend(extra.iter().cloned());
        self.text_element("text", &attrs, text);
    }

    pub fn finish(mut self) -> String {
        while !self.open.is_empty() {
            self.close();
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped_and_numbers_short() {
        assert_eq!(escape("a<b & \"c\"\u{1}"), "a&lt;b &amp; &quot;c&quot;");
        assert_eq!(num(3.0), "3");
        assert_eq!(num(2.5), "2.5");
        assert_eq!(num(1.0 / 3.0), "0.33");
    }
}
