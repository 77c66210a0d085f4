//! Prometheus metrics: counters and gauges with labels, rendered as text exposition.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::{Arc, Mutex};

type Labels = Vec<(String, String)>;

#[derive(Debug, Default)]
struct Family {
    help: &'static str,
    gauge: bool,
    series: BTreeMap<Labels, f64>,
}

/// A registry. Clones share it.
#[derive(Debug, Clone, Default)]
pub struct Metrics {
    families: Arc<Mutex<BTreeMap<&'static str, Family>>>,
}

fn labels(pairs: &[(&str, &str)]) -> Labels {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

impl Metrics {
    pub fn new() -> Self {
        Self::default()
    }

    fn with_family(
        &self,
        name: &'static str,
        help: &'static str,
        gauge: bool,
        f: impl FnOnce(&mut Family),
    ) {
        let mut families = self.families.lock().unwrap_or_else(|p| p.into_inner());
        let family = families.entry(name).or_insert_with(|| Family {
            help,
            gauge,
            series: BTreeMap::new(),
        });
        f(family);
    }

    /// Adds to a counter.
    pub fn inc(&self, name: &'static str, help: &'static str, pairs: &[(&str, &str)], by: u64) {
        self.with_family(name, help, false, |f| {
            *f.series.entry(labels(pairs)).or_default() += by as f64
        });
    }

    /// Sets a gauge.
    pub fn set(&self, name: &'static str, help: &'static str, pairs: &[(&str, &str)], value: f64) {
        self.with_family(name, help, true, |f| {
            f.series.insert(labels(pairs), value);
        });
    }

    /// The current value of a series (0 when never written).
    pub fn value(&self, name: &str, pairs: &[(&str, &str)]) -> f64 {
        let families = self.families.lock().unwrap_or_else(|p| p.into_inner());
        families
            .get(name)
            .and_then(|f| f.series.get(&labels(pairs)).copied())
            .unwrap_or(0.0)
    }

    /// Text exposition format 0.0.4.
    pub fn render(&self) -> String {
        let families = self.families.lock().unwrap_or_else(|p| p.into_inner());
        let mut out = String::new();
        for (name, family) in families.iter() {
            let _ = writeln!(out, "# HELP {name} {}", family.help);
            let _ = writeln!(
                out,
                "# TYPE {name} {}",
                if family.gauge { "gauge" } else { "counter" }
            );
            for (labels, value) in &family.series {
                let rendered: Vec<String> = labels
                    .iter()
                    .map(|(k, v)| {
                        format!(
                            "{k}=\"{}\"",
                            v.replace('\\', "\\\\")
                                .replace('"', "\\\"")
                                .replace('\n', "\\n")
                        )
                    })
                    .collect();
                if rendered.is_empty() {
                    let _ = writeln!(out, "{name} {value}");
                } else {
                    let _ = writeln!(out, "{name}{{{}}} {value}", rendered.join(","));
                }
            }
        }
        out
    }

    /// Serves `/metrics` on `listener` until `shutdown`.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: crate::Shutdown,
    ) -> std::io::Result<()> {
        let app = axum::Router::new().route(
            "/metrics",
            axum::routing::get(move || {
                let metrics = self.clone();
                async move {
                    (
                        [(
                            axum::http::header::CONTENT_TYPE,
                            "text/plain; version=0.0.4",
                        )],
                        metrics.render(),
                    )
                }
            }),
        );
        crate::edge::serve(
            listener,
            app,
            crate::edge::ConnectionPolicy::default(),
            async move { shutdown.triggered().await },
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_gauges_and_escaping_render_in_exposition_format() {
        let m = Metrics::new();
        m.inc("outbox_dispatch_retries_total", "Dispatch retries.", &[], 2);
        m.inc("outbox_dispatch_retries_total", "Dispatch retries.", &[], 1);
        m.set(
            "outbox_rows",
            "Outbox rows by state.",
            &[("state", "PENDING")],
            4.0,
        );
        m.set(
            "outbox_rows",
            "Outbox rows by state.",
            &[("state", "a\"b")],
            1.0,
        );
        assert_eq!(m.value("outbox_dispatch_retries_total", &[]), 3.0);
        let text = m.render();
        assert!(
            text.contains(
                "# TYPE outbox_dispatch_retries_total counter\noutbox_dispatch_retries_total 3\n"
            ),
            "{text}"
        );
        assert!(text.contains("# TYPE outbox_rows gauge"), "{text}");
        assert!(text.contains("outbox_rows{state=\"PENDING\"} 4"), "{text}");
        assert!(text.contains("outbox_rows{state=\"a\\\"b\"} 1"), "{text}");
    }
}
