//! A line chart drawn as inline SVG by the server: a player's rating after each rated game.
//!
//! Pure: points in, an SVG string out. The picture has its text alternative (`role="img"`,
//! `aria-labelledby` naming its `<title>` and `<desc>`), every point its own `<title>` (a
//! browser shows it on hover, without script), and colours as presentation attributes, which
//! the page's content security policy allows where inline styles are refused.

use std::fmt::Write;

use crate::board::svg::{escape, num};

/// One point of the line: `x` is counted (the rated game's number), `y` a rating.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    /// What the point is, for its tooltip: "Game 3: 1562, won against bob".
    pub label: String,
}

/// A chart to draw.
#[derive(Clone, Debug)]
pub struct Chart<'a> {
    /// The start of the ids inside the picture, unique on its page.
    pub id: &'a str,
    /// The picture's name, its `<title>`.
    pub title: &'a str,
    /// What it shows, in words: its `<desc>`.
    pub summary: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub points: &'a [Point],
}

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 260.0;
/// Room for the vertical axis's numbers and name on the left, the horizontal axis's below.
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
const TOP: f64 = 14.0;
const BOTTOM: f64 = 50.0;
/// The smallest span of ratings the vertical axis shows, so that a few points of change do not
/// look like a cliff.
const MIN_Y_SPAN: f64 = 50.0;
/// Past this many points the line is drawn without a dot on each.
const MOST_DOTS: usize = 60;

const INK: &str = "#1f2328";
const MUTED: &str = "#5b636d";
const GRID: &str = "#d0d7de";
const LINE: &str = "#1a5fb4";

/// A step of 1, 2 or 5 times a power of ten that cuts `span` into about `parts` parts.
pub fn nice_step(span: f64, parts: u32) -> f64 {
    if !span.is_finite() || span <= 0.0 {
        return 1.0;
    }
    let raw = span / f64::from(parts.max(1));
    let magnitude = 10f64.powf(raw.log10().floor());
    let normal = raw / magnitude;
    let nice = if normal <= 1.0 {
        1.0
    } else if normal <= 2.0 {
        2.0
    } else if normal <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

/// The axis's ends, on its steps, around `min`..`max`, and its step.
fn y_axis(min: f64, max: f64) -> (f64, f64, f64) {
    let (mut low, mut high) = (min, max);
    if high - low < MIN_Y_SPAN {
        let middle = (low + high) / 2.0;
        low = middle - MIN_Y_SPAN / 2.0;
        high = middle + MIN_Y_SPAN / 2.0;
    }
    let step = nice_step(high - low, 4);
    let low = (low / step).floor() * step;
    let mut high = (high / step).ceil() * step;
    if high <= low {
        high = low + step;
    }
    (low, high, step)
}

/// The horizontal axis's ends and a whole step between its marks.
fn x_axis(min: f64, max: f64) -> (f64, f64, f64) {
    let high = if max > min { max } else { min + 1.0 };
    let step = nice_step(high - min, 6).max(1.0).round();
    (min, high, step)
}

/// The values from `low` to `high` that are multiples of `step`.
fn marks(low: f64, high: f64, step: f64) -> Vec<f64> {
    let mut marks = Vec::new();
    let mut at = (low / step).ceil() * step;
    while at <= high + step * 1e-9 && marks.len() < 50 {
        marks.push(at);
        at += step;
    }
    marks
}

/// The chart as an `<svg>` element, ready to be put in a page as it is.
pub fn line_chart(chart: &Chart<'_>) -> String {
    let id = escape(chart.id);
    let mut out = String::new();
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 {w} {h}\" \
         width=\"{w}\" height=\"{h}\" role=\"img\" aria-labelledby=\"{id}-title {id}-desc\" \
         font-family=\"system-ui, sans-serif\" font-size=\"13\">\n\
         <title id=\"{id}-title\">{title}</title>\n<desc id=\"{id}-desc\">{desc}</desc>\n",
        w = num(WIDTH),
        h = num(HEIGHT),
        title = escape(chart.title),
        desc = escape(chart.summary),
    );
    let (left, right, top, bottom) = (LEFT, WIDTH - RIGHT, TOP, HEIGHT - BOTTOM);
    let points: Vec<&Point> = chart
        .points
        .iter()
        .filter(|p| p.x.is_finite() && p.y.is_finite())
        .collect();

    // The axes' names: the vertical one turned, the horizontal one centred below.
    let _ = writeln!(
        out,
        "<text x=\"{x}\" y=\"{y}\" transform=\"rotate(-90 {x} {y})\" text-anchor=\"middle\" fill=\"{MUTED}\">{}</text>",
        escape(chart.y_label),
        x = num(16.0),
        y = num((top + bottom) / 2.0),
    );
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{MUTED}\">{}</text>",
        num((left + right) / 2.0),
        num(HEIGHT - 8.0),
        escape(chart.x_label),
    );

    if points.is_empty() {
        let _ = writeln!(
            out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"{GRID}\"/>\n\
             <text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{MUTED}\">Nothing to show yet</text>",
            num(left),
            num(top),
            num(right - left),
            num(bottom - top),
            num((left + right) / 2.0),
            num((top + bottom) / 2.0),
        );
        out.push_str("</svg>");
        return out;
    }

    let fold = |f: fn(f64, f64) -> f64, of: fn(&Point) -> f64, start: f64| {
        points.iter().map(|p| of(p)).fold(start, f)
    };
    let (y_low, y_high, y_step) = y_axis(
        fold(f64::min, |p| p.y, f64::INFINITY),
        fold(f64::max, |p| p.y, f64::NEG_INFINITY),
    );
    let (x_low, x_high, x_step) = x_axis(
        fold(f64::min, |p| p.x, f64::INFINITY),
        fold(f64::max, |p| p.x, f64::NEG_INFINITY),
    );
    let sx = |x: f64| left + (x - x_low) / (x_high - x_low) * (right - left);
    let sy = |y: f64| bottom - (y - y_low) / (y_high - y_low) * (bottom - top);

    // Across: a line at every mark of the ratings, with its number on the left.
    out.push_str("<g class=\"y-axis\">\n");
    for mark in marks(y_low, y_high, y_step) {
        let y = sy(mark);
        let _ = writeln!(
            out,
            "<line x1=\"{}\" y1=\"{y}\" x2=\"{}\" y2=\"{y}\" stroke=\"{GRID}\"/>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"end\" fill=\"{INK}\">{}</text>",
            num(left),
            num(right),
            num(left - 6.0),
            num(y + 4.5),
            num(mark),
            y = num(y),
        );
    }
    out.push_str("</g>\n<g class=\"x-axis\">\n");
    let _ = writeln!(
        out,
        "<line x1=\"{}\" y1=\"{b}\" x2=\"{}\" y2=\"{b}\" stroke=\"{MUTED}\"/>",
        num(left),
        num(right),
        b = num(bottom),
    );
    for mark in marks(x_low, x_high, x_step) {
        let x = sx(mark);
        let _ = writeln!(
            out,
            "<line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{MUTED}\"/>\
             <text x=\"{x}\" y=\"{}\" text-anchor=\"middle\" fill=\"{INK}\">{}</text>",
            num(bottom),
            num(bottom + 5.0),
            num(bottom + 19.0),
            num(mark),
            x = num(x),
        );
    }
    out.push_str("</g>\n");

    let line = points
        .iter()
        .map(|p| format!("{},{}", num(sx(p.x)), num(sy(p.y))))
        .collect::<Vec<_>>()
        .join(" ");
    let _ = writeln!(
        out,
        "<polyline points=\"{line}\" fill=\"none\" stroke=\"{LINE}\" stroke-width=\"2.5\" stroke-linejoin=\"round\" stroke-linecap=\"round\"/>"
    );
    let radius = if points.len() <= MOST_DOTS { 4.0 } else { 2.0 };
    out.push_str("<g class=\"points\">\n");
    for point in &points {
        let _ = writeln!(
            out,
            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{LINE}\" stroke=\"#fff\" stroke-width=\"1.5\"><title>{}</title></circle>",
            num(sx(point.x)),
            num(sy(point.y)),
            num(radius),
            escape(&point.label),
        );
    }
    out.push_str("</g>\n</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(x: f64, y: f64) -> Point {
        Point {
            x,
            y,
            label: format!("Game {x}: {y}"),
        }
    }

    fn chart(points: &[Point]) -> String {
        line_chart(&Chart {
            id: "chart-cheversi",
            title: "alice's Cheversi rating",
            summary: "From 1500 to 1662 over 2 rated games.",
            x_label: "Rated games",
            y_label: "Rating",
            points,
        })
    }

    /// The numbers of an attribute's values, in order: `cy="…"` of every dot.
    fn values(svg: &str, attribute: &str) -> Vec<f64> {
        svg.split(&format!(" {attribute}=\""))
            .skip(1)
            .map(|rest| rest.split('"').next().unwrap().parse().unwrap())
            .collect()
    }

    #[test]
    fn the_picture_says_what_it_shows() {
        let svg = chart(&[point(0.0, 1500.0), point(1.0, 1662.0)]);
        assert!(svg.starts_with("<svg "), "{svg}");
        assert!(svg.ends_with("</svg>"));
        assert!(svg.contains("role=\"img\""));
        assert!(svg.contains("aria-labelledby=\"chart-cheversi-title chart-cheversi-desc\""));
        assert!(
            svg.contains("<title id=\"chart-cheversi-title\">alice&apos;s Cheversi rating</title>")
        );
        assert!(svg.contains("<desc id=\"chart-cheversi-desc\">From 1500 to 1662"));
        assert!(svg.contains(">Rated games</text>") && svg.contains(">Rating</text>"));
        assert!(
            svg.contains("<title>Game 1: 1662</title>"),
            "each point's tooltip"
        );
        // No script, and no inline style (the page's policy refuses it).
        assert!(!svg.contains("<script") && !svg.contains("style="));
    }

    #[test]
    fn text_is_escaped() {
        let points = [Point {
            x: 1.0,
            y: 1500.0,
            label: "<b>&\"".to_owned(),
        }];
        let svg = line_chart(&Chart {
            id: "a\"b",
            title: "<script>alert(1)</script>",
            summary: "x & y",
            x_label: "<",
            y_label: ">",
            points: &points,
        });
        assert!(!svg.contains("<script>") && !svg.contains("<b>"), "{svg}");
        assert!(svg.contains("&lt;script&gt;") && svg.contains("x &amp; y"));
        assert!(svg.contains("id=\"a&quot;b-title\""));
    }

    #[test]
    fn a_higher_rating_is_drawn_higher_and_games_go_right() {
        let svg = chart(&[point(0.0, 1500.0), point(1.0, 1400.0), point(2.0, 1700.0)]);
        let dots_y = values(&svg, "cy");
        let dots_x = values(&svg, "cx");
        assert_eq!(dots_y.len(), 3);
        assert!(dots_y[2] < dots_y[0] && dots_y[0] < dots_y[1], "{dots_y:?}");
        assert!(dots_x[0] < dots_x[1] && dots_x[1] < dots_x[2], "{dots_x:?}");
        // Inside the plotting area.
        for (x, y) in dots_x.iter().zip(&dots_y) {
            assert!((LEFT..=WIDTH - RIGHT).contains(x), "{x}");
            assert!((TOP..=HEIGHT - BOTTOM).contains(y), "{y}");
        }
        assert!(svg.contains("<polyline points=\""));
    }

    #[test]
    fn the_axes_are_marked_at_round_numbers() {
        let svg = chart(&[point(0.0, 1437.0), point(12.0, 1718.0)]);
        for mark in ["1400", "1500", "1600", "1700", "1800"] {
            assert!(svg.contains(&format!(">{mark}</text>")), "{mark}: {svg}");
        }
        assert!(
            svg.contains(">0</text>") && svg.contains(">12</text>"),
            "{svg}"
        );
        assert!(!svg.contains(">1437</text>"));
    }

    #[test]
    fn one_point_or_none_draws_without_dividing_by_zero() {
        let one = chart(&[point(1.0, 1500.0)]);
        assert!(!one.contains("NaN") && !one.contains("inf"), "{one}");
        assert_eq!(values(&one, "cy").len(), 1);
        let flat = chart(&[point(0.0, 1500.0), point(1.0, 1500.0), point(2.0, 1500.0)]);
        assert!(!flat.contains("NaN"), "{flat}");
        let none = chart(&[]);
        assert!(none.contains("Nothing to show yet") && none.ends_with("</svg>"));
        let bad = chart(&[point(f64::NAN, 1500.0), point(1.0, f64::INFINITY)]);
        assert!(bad.contains("Nothing to show yet"), "{bad}");
    }

    #[test]
    fn many_points_get_small_dots_and_few_marks() {
        let points: Vec<Point> = (0..=100)
            .map(|i| point(f64::from(i), 1500.0 + f64::from(i % 7) * 10.0))
            .collect();
        let svg = chart(&points);
        assert!(svg.contains("r=\"2\""));
        let x_marks = svg
            .matches("text-anchor=\"middle\" fill=\"#1f2328\"")
            .count();
        assert!((4..=12).contains(&x_marks), "{x_marks}");
    }

    #[test]
    fn steps_are_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(nice_step(100.0, 4), 50.0);
        assert_eq!(nice_step(281.0, 4), 100.0);
        assert_eq!(nice_step(12.0, 6), 2.0);
        assert_eq!(nice_step(3.0, 6), 0.5);
        assert_eq!(nice_step(0.0, 4), 1.0);
        assert_eq!(nice_step(f64::NAN, 4), 1.0);
    }
}
