//! Calendar dates of Unix days, for the few places that show or group by a day (UTC).

/// Days since 1970-01-01 to a civil date `(year, month, day)` (Howard Hinnant's algorithm).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `YYYY-MM-DD` of a day number since the Unix epoch.
pub fn iso_date(days: i64) -> String {
    let (y, m, d) = civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Days since 1970-01-01 of a civil date (the inverse of [`civil_from_days`]).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from(if month > 2 { month - 3 } else { month + 9 });
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// An instant (epoch milliseconds) as ISO 8601 in UTC with milliseconds:
/// `2026-12-01T23:11:00.000+00:00` (the CLICS TIME type).
pub fn iso_time(ms: i64) -> String {
    let (y, mo, d) = civil_from_days(ms.div_euclid(86_400_000));
    let of_day = ms.rem_euclid(86_400_000);
    format!(
        "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{:03}+00:00",
        of_day / 3_600_000,
        of_day / 60_000 % 60,
        of_day / 1000 % 60,
        of_day % 1000
    )
}

/// Parses ISO 8601 `YYYY-MM-DDTHH:MM:SS(.fff)?(Z|±HH(:?MM)?)` to epoch milliseconds.
pub fn parse_iso_time(text: &str) -> Option<i64> {
    let text = text.trim();
    let (date, rest) = text.split_once(['T', ' '])?;
    let mut parts = date.splitn(3, '-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month: u32 = parts.next()?.parse().ok()?;
    let day: u32 = parts.next()?.parse().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let zone_at = rest.find(['Z', 'z', '+', '-']).unwrap_or(rest.len());
    let (clock, zone) = rest.split_at(zone_at);
    let (hms, fraction) = clock.split_once('.').unwrap_or((clock, ""));
    let mut fields = hms.splitn(3, ':');
    let h: i64 = fields.next()?.parse().ok()?;
    let m: i64 = fields.next()?.parse().ok()?;
    let s: i64 = fields.next().unwrap_or("0").parse().ok()?;
    if h > 23 || m > 59 || s > 60 || !fraction.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let millis: i64 = format!("{fraction:0<3}")[..3].parse().ok()?;
    let offset_min = match zone {
        "" | "Z" | "z" => 0,
        zone => {
            let sign = if zone.starts_with('-') { -1 } else { 1 };
            let digits: String = zone[1..].chars().filter(|c| *c != ':').collect();
            let (zh, zm) = digits.split_at(digits.len().min(2));
            let zh: i64 = zh.parse().ok()?;
            let zm: i64 = if zm.is_empty() { 0 } else { zm.parse().ok()? };
            sign * (zh * 60 + zm)
        }
    };
    let days = days_from_civil(year, month, day);
    Some(days * 86_400_000 + ((h * 60 + m - offset_min) * 60 + s) * 1000 + millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_times_round_trip() {
        for ms in [0, 1_764_630_660_123, -86_400_001, 4_102_444_799_999] {
            assert_eq!(parse_iso_time(&iso_time(ms)), Some(ms), "{}", iso_time(ms));
        }
        assert_eq!(iso_time(1_764_630_660_123), "2025-12-01T23:11:00.123+00:00");
        assert_eq!(
            parse_iso_time("2025-12-02T01:11:00+02"),
            parse_iso_time("2025-12-01T23:11:00Z")
        );
        assert_eq!(
            parse_iso_time("2025-12-01T20:41:00.5-02:30"),
            Some(1_764_630_660_500)
        );
        for bad in ["2025-13-01T00:00:00Z", "yesterday", "2025-12-01T25:00:00Z"] {
            assert_eq!(parse_iso_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn days_are_civil_dates() {
        for (days, date) in [
            (0, "1970-01-01"),
            (-1, "1969-12-31"),
            (11_016, "2000-02-29"),
            (20_788, "2026-12-01"),
        ] {
            assert_eq!(iso_date(days), date);
        }
    }
}
