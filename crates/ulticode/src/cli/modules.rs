//! Background modules of the event backbone: the owners' relays and the consumers. Each is
//! opt-in by name (`--modules`); `ulticode up` runs all of them. Every module stops at
//! shutdown after finishing the batch or event in hand (bounded by the caller's drain).

use std::collections::BTreeSet;
use std::sync::Arc;

use platform::events::{Consume, Outbox};
use platform::{Metrics, Shutdown};
use queue::events::{run_consumer, ConsumerConfig, EventStreams, Relay, RelayConfig};
use tokio::task::JoinHandle;

use super::server::Owners;

/// A background module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Module {
    /// The owners' event relays (outbox → streams), one per owner under a singleton lease.
    Relays,
    /// Admin's audit log, consuming every owner's events.
    Audit,
    /// The Notification owner's intents (inbox entries and the delivery ledger).
    Notification,
    /// The mail sender (only where a mail server is configured).
    Mail,
    /// The search index's consumer (only where this process holds the index).
    Search,
    /// App's contest boards (contest submissions and verdicts).
    Contests,
}

impl Module {
    pub const ALL: [Module; 6] = [
        Module::Relays,
        Module::Audit,
        Module::Notification,
        Module::Mail,
        Module::Search,
        Module::Contests,
    ];
}

impl std::fmt::Display for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use clap::ValueEnum;
        let value = self.to_possible_value().expect("every module has a name");
        f.write_str(value.get_name())
    }
}

/// The allow-list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Modules(BTreeSet<Module>);

impl Modules {
    pub fn all() -> Self {
        Self(Module::ALL.into_iter().collect())
    }

    pub fn of(list: &[Module]) -> Self {
        Self(list.iter().copied().collect())
    }

    pub fn has(&self, module: Module) -> bool {
        self.0.contains(&module)
    }
}

/// Starts the allowed modules; `holder` names this process on leases and in consumer groups.
pub fn spawn(
    owners: &Owners,
    modules: &Modules,
    holder: &str,
    shutdown: &Shutdown,
) -> Vec<JoinHandle<()>> {
    let mut tasks = Vec::new();
    let streams: &EventStreams = &owners.events;
    let metrics: &Metrics = &owners.metrics;
    if modules.has(Module::Relays) {
        let outboxes: [&Outbox; 4] = [
            owners.auth.events(),
            owners.app.events(),
            owners.submissions.events(),
            owners.admin.events(),
        ];
        for outbox in outboxes {
            let relay = Relay::new(
                outbox.clone(),
                streams.clone(),
                RelayConfig::new(holder),
                metrics.clone(),
            );
            tasks.push(tokio::spawn(relay.run(shutdown.clone())));
        }
    }
    let mut consume = |handler: Arc<dyn Consume>| {
        if let Some(stream) = streams.stream(handler.name()) {
            tasks.push(tokio::spawn(run_consumer(
                stream,
                handler,
                ConsumerConfig::new(holder),
                metrics.clone(),
                shutdown.clone(),
            )));
        }
    };
    if modules.has(Module::Audit) {
        consume(Arc::new(owners.admin.audit_consumer()));
    }
    if modules.has(Module::Notification) {
        consume(Arc::new(owners.notification.clone()));
    }
    if modules.has(Module::Contests) {
        consume(Arc::new(owners.app.contests().consumer()));
    }
    if let (true, Some(index)) = (modules.has(Module::Search), &owners.search_index) {
        consume(Arc::new(index.clone()));
    }
    if let (true, Some(mailer)) = (modules.has(Module::Mail), &owners.mailer) {
        tasks.push(tokio::spawn(owners.notification.clone().run_mail(
            mailer.clone(),
            metrics.clone(),
            shutdown.clone(),
        )));
    }
    tasks
}
