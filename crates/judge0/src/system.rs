//! `GET /system_info` (the machine, as `lscpu` and `free` describe it) and
//! `GET /statistics` (counts of the jobs kept).

use contracts::jobs::{JobState, JobStatistics};

use crate::languages::Languages;
use crate::ordered::Object;
use crate::render;

/// `lscpu`'s `Key: value` lines (from `/proc/cpuinfo` where `lscpu` is missing), and the
/// total memory and swap (`Mem`, `Swap`) in `free -h`'s units.
pub fn info() -> Object {
    let mut object = Object::new();
    let lscpu = std::process::Command::new("lscpu")
        .env("LC_ALL", "C")
        .stdin(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    match lscpu {
        Some(text) => {
            for line in text.lines() {
                if let Some((key, value)) = line.split_once(':') {
                    object.push(key.trim(), value.trim());
                }
            }
        }
        None => {
            let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
            object.push("Architecture", std::env::consts::ARCH);
            let cpus = cpuinfo
                .lines()
                .filter(|l| l.starts_with("processor"))
                .count();
            object.push("CPU(s)", cpus.to_string());
            if let Some(model) = cpuinfo
                .lines()
                .find_map(|l| l.strip_prefix("model name").and_then(|r| r.split_once(':')))
            {
                object.push("Model name", model.1.trim());
            }
        }
    }
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let kib = |name: &str| -> u64 {
        meminfo
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    object.push("Mem", human(kib("MemTotal")));
    object.push("Swap", human(kib("SwapTotal")));
    object
}

/// KiB as `free -h` writes them: `913Mi`, `2.0Gi`, `0B`.
fn human(kib: u64) -> String {
    if kib == 0 {
        return "0B".into();
    }
    let units = ["Ki", "Mi", "Gi", "Ti"];
    let mut value = kib as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value < 10.0 {
        format!("{value:.1}{}", units[unit])
    } else {
        format!("{:.0}{}", value, units[unit])
    }
}

/// The Judge0 status id of a job state and outcome.
fn status_of(state: JobState, outcome: Option<&str>) -> u8 {
    match (state, outcome) {
        (JobState::Queued, _) => 1,
        (JobState::Running, _) => 2,
        (JobState::Failed, _) | (JobState::Done, None) => 13,
        (JobState::Done, Some(outcome)) => render::outcome_status(outcome, None).0,
    }
}

/// `GET /statistics`: `counts` as of `now_ms`.
pub fn statistics(counts: &JobStatistics, now_ms: i64, languages: &Languages) -> Object {
    let offset_time = |ms: i64| platform::calendar::iso_time(ms);
    let today = now_ms.div_euclid(86_400_000);
    let today_count = counts
        .by_day
        .iter()
        .find(|(day, _)| *day == today)
        .map_or(0, |(_, n)| *n);
    let mut days = Object::new();
    for day in (today - 30..today).rev() {
        let count = counts
            .by_day
            .iter()
            .find(|(d, _)| *d == day)
            .map_or(0, |(_, n)| *n);
        days.push(&platform::calendar::iso_date(day), count);
    }
    let submissions = {
        let mut object = Object::new()
            .with("total", counts.total)
            .with("today", today_count);
        object.push_raw("last_30_days", days.render());
        object
    };
    let language_items = counts.by_language.iter().map(|(ours, count)| {
        let id = languages.id_of(ours).unwrap_or(0);
        let name = languages
            .get(i64::from(id))
            .map(|l| l.name.clone())
            .unwrap_or_else(|_| ours.clone());
        let mut item = Object::new();
        item.push_raw(
            "language",
            Object::new().with("id", id).with("name", name).render(),
        );
        item.push("count", count);
        item.render()
    });
    let mut by_status: Vec<(u8, u64)> = Vec::new();
    for (state, outcome, count) in &counts.by_outcome {
        let id = status_of(*state, outcome.as_deref());
        match by_status.iter_mut().find(|(s, _)| *s == id) {
            Some((_, n)) => *n += count,
            None => by_status.push((id, *count)),
        }
    }
    by_status.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let status_items = by_status.iter().map(|(id, count)| {
        let mut item = Object::new();
        item.push_raw(
            "status",
            Object::new()
                .with("id", id)
                .with("name", render::status_description(*id))
                .render(),
        );
        item.push("count", count);
        item.render()
    });
    let mut object = Object::new()
        .with("created_at", offset_time(now_ms))
        .with("cached_until", offset_time(now_ms + 600_000));
    object.push_raw("submissions", submissions.render());
    object.push_raw("languages", crate::ordered::array(language_items));
    object.push_raw("statuses", crate::ordered::array(status_items));
    object.push_raw(
        "database",
        Object::new()
            .with("size_pretty", "n/a")
            .with("size_in_bytes", 0)
            .render(),
    );
    object
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_free_writes_them() {
        assert_eq!(human(0), "0B");
        assert_eq!(human(934_912), "913Mi");
        assert_eq!(human(2_097_152), "2.0Gi");
        assert_eq!(human(25_165_824), "24Gi");
    }

    #[test]
    fn statistics_count_by_day_language_and_status() {
        let now = 20_000 * 86_400_000 + 5_000;
        let counts = JobStatistics {
            total: 7,
            by_day: vec![(20_000, 3), (19_999, 4)],
            by_language: vec![("python3".into(), 7)],
            by_outcome: vec![
                (JobState::Done, Some("ok".into()), 4),
                (JobState::Done, Some("compile_error".into()), 2),
                (JobState::Queued, None, 1),
            ],
        };
        let text = statistics(&counts, now, &Languages::default()).render();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["submissions"]["today"], 3);
        assert_eq!(
            value["submissions"]["last_30_days"]
                .as_object()
                .unwrap()
                .len(),
            30
        );
        assert_eq!(value["submissions"]["last_30_days"]["2024-10-03"], 4);
        assert_eq!(value["statuses"][0]["status"]["name"], "Accepted");
        assert_eq!(value["statuses"][1]["status"]["id"], 6);
        assert!(value["created_at"].as_str().unwrap().ends_with("+00:00"));
    }
}
