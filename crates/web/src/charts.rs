//! Charts drawn on the server as SVG: the submission calendar of a profile and the pipeline's
//! time series. No chart library, no script; the numbers are also in the markup as text.

use std::collections::HashMap;

use crate::i18n::Tr;
use crate::views::DayCount;

const WEEKS: i64 = 53;
const CELL: i64 = 12;

/// Days since the Unix epoch, today (UTC).
pub fn today_days() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64 / 86_400)
}

/// One square of the calendar.
pub struct Cell {
    pub x: i64,
    pub y: i64,
    pub level: u8,
    pub label: String,
}

/// The last 53 weeks of submissions, a column per week (Sunday on top).
pub struct Heatmap {
    pub cells: Vec<Cell>,
    pub width: i64,
    pub height: i64,
    pub active_days: usize,
}

impl Heatmap {
    pub fn new(days: &[DayCount], today: i64, tr: &Tr) -> Self {
        let counts: HashMap<&str, i64> = days.iter().map(|d| (d.day.as_str(), d.count)).collect();
        // 1970-01-01 was a Thursday: weekday 0 = Sunday.
        let weekday = |day: i64| (day + 4).rem_euclid(7);
        let start = today - weekday(today) - (WEEKS - 1) * 7;
        let max = counts.values().copied().max().unwrap_or(0).max(1);
        let mut cells = Vec::new();
        for day in start..=today {
            let key = platform::calendar::iso_date(day);
            let count = counts.get(key.as_str()).copied().unwrap_or(0);
            let level = match count {
                0 => 0,
                c => (1 + (c - 1) * 4 / max).min(4) as u8,
            };
            cells.push(Cell {
                x: (day - start) / 7 * CELL,
                y: weekday(day) * CELL,
                level,
                label: format!("{key}: {}", tr.count("submissions-count", count)),
            });
        }
        Self {
            active_days: counts.values().filter(|c| **c > 0).count(),
            cells,
            width: WEEKS * CELL,
            height: 7 * CELL,
        }
    }
}

/// A line chart of one series over time.
pub struct LineChart {
    pub title: String,
    pub path: String,
    pub width: u32,
    pub height: u32,
    pub max: f64,
    pub last: f64,
}

impl LineChart {
    /// `points` are (time in ms, value), oldest first.
    pub fn new(title: String, points: &[(i64, f64)]) -> Self {
        let (width, height) = (300u32, 60u32);
        let max = points.iter().map(|p| p.1).fold(0.0, f64::max);
        let scale = if max > 0.0 { max } else { 1.0 };
        let (first, last_t) = (
            points.first().map_or(0, |p| p.0),
            points.last().map_or(1, |p| p.0),
        );
        let span = (last_t - first).max(1) as f64;
        let mut path = String::new();
        for (i, (t, v)) in points.iter().enumerate() {
            let x = (*t - first) as f64 / span * f64::from(width);
            let y = f64::from(height) - v / scale * f64::from(height - 4) - 2.0;
            path.push_str(&format!("{}{x:.1},{y:.1} ", if i == 0 { "M" } else { "L" }));
        }
        Self {
            title,
            path: path.trim_end().to_string(),
            width,
            height,
            max,
            last: points.last().map_or(0.0, |p| p.1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Locale;

    #[test]
    fn the_calendar_ends_today_and_scales_levels() {
        let today = 20_788; // 2026-12-01, a Tuesday
        let days = vec![
            DayCount {
                day: "2026-12-01".into(),
                count: 8,
            },
            DayCount {
                day: "2026-11-30".into(),
                count: 1,
            },
        ];
        let map = Heatmap::new(&days, today, &Tr::new(Locale::En));
        let last = map.cells.last().unwrap();
        assert!(last.label.starts_with("2026-12-01"), "{}", last.label);
        assert_eq!((last.level, last.y), (4, 2 * CELL));
        assert_eq!(map.cells[map.cells.len() - 2].level, 1);
        assert_eq!(map.active_days, 2);
        assert_eq!(map.cells.first().unwrap().y, 0, "columns start on Sunday");
    }

    #[test]
    fn a_line_chart_spans_its_box() {
        let chart = LineChart::new("q".into(), &[(0, 0.0), (500, 5.0), (1000, 10.0)]);
        assert_eq!(chart.path, "M0.0,58.0 L150.0,30.0 L300.0,2.0");
        assert_eq!((chart.max, chart.last), (10.0, 10.0));
    }
}
