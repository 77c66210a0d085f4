//! Callbacks: a finished job with a `callback_url` is announced there by a `PUT` of the
//! default fields in base64, as Judge0 sends it. Any HTTP answer counts as delivered; a
//! failed connection or a timeout is tried again (1 s, 2 s, ... later) up to the configured
//! number of tries. Jobs record their callbacks' state, so a restart resumes them.

use std::time::Duration;

use platform::Shutdown;
use tokio::task::JoinSet;

use crate::render;
use crate::routes::Judge0;

/// Callbacks looked for at once.
const BATCH: u32 = 32;

/// Delivers due callbacks until shutdown.
pub async fn run(api: Judge0, shutdown: Shutdown) {
    let config = api.config().clone();
    let client = match reqwest::Client::builder()
        .timeout(Duration::from_secs_f64(config.callbacks_timeout_s.max(0.1)))
        .redirect(reqwest::redirect::Policy::none())
        .build()
    {
        Ok(client) => client,
        Err(e) => {
            tracing::error!(error = %e, "no HTTP client for Judge0 callbacks");
            return;
        }
    };
    let fields = render::fields(None).expect("the default fields are valid");
    loop {
        tokio::select! {
            _ = shutdown.triggered() => return,
            _ = tokio::time::sleep(Duration::from_millis(200)) => {}
        }
        let due = match api.jobs().due_callbacks(BATCH).await {
            Ok(due) => due,
            Err(e) => {
                tracing::warn!(error = %e, "due callbacks not read");
                continue;
            }
        };
        let mut sending = JoinSet::new();
        for job in due {
            let Some(url) = job.callback_url.clone() else {
                continue;
            };
            let body = render::submission(&job, &fields, true, api.languages())
                .expect("base64 is always text")
                .render();
            let (client, api) = (client.clone(), api.clone());
            let max_tries = config.callbacks_max_tries;
            sending.spawn(async move {
                let sent = client
                    .put(&url)
                    .header("content-type", "application/json")
                    .body(body)
                    .send()
                    .await;
                if let Err(e) = &sent {
                    tracing::info!(job = %job.token, error = %e, "callback not delivered");
                }
                if let Err(e) = api
                    .jobs()
                    .callback_attempted(&job.token, sent.is_ok(), max_tries)
                    .await
                {
                    tracing::warn!(job = %job.token, error = %e, "callback attempt not recorded");
                }
            });
        }
        while sending.join_next().await.is_some() {}
    }
}
