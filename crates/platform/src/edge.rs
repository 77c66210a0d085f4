//! The HTTP listener every process serves on: connection caps, header and request timeouts,
//! and the response headers every answer carries.
//!
//! Without these, idle or byte-at-a-time connections are never closed and a few thousand of
//! them exhaust the process's descriptors (slowloris). Here a connection that has not sent a
//! complete request head within [`ConnectionPolicy::header_timeout`] is closed (also between
//! requests of a kept-alive connection), a request whose handler (body reading included) has
//! not answered within [`ConnectionPolicy::request_timeout`] gets a 408, and connections beyond
//! the global or per-address cap are closed at accept.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use tower::ServiceExt;

use crate::http::ApiError;

/// Limits on the connections one listener accepts.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionPolicy {
    /// Open connections at once, from everyone.
    pub max_connections: usize,
    /// Open connections at once from one address.
    pub max_per_address: usize,
    /// Until a request head (line and headers) must be complete, also while idle between
    /// requests.
    pub header_timeout: Duration,
    /// Until a handler (reading the body included) must have answered.
    pub request_timeout: Duration,
}

impl Default for ConnectionPolicy {
    fn default() -> Self {
        Self {
            max_connections: 4_096,
            max_per_address: 128,
            header_timeout: Duration::from_secs(15),
            request_timeout: Duration::from_secs(120),
        }
    }
}

/// Open connections per address.
#[derive(Default)]
struct Census {
    open: Mutex<(usize, HashMap<IpAddr, usize>)>,
}

/// A counted connection; uncounted when dropped.
struct Admitted {
    census: Arc<Census>,
    address: IpAddr,
}

impl Census {
    fn admit(self: &Arc<Self>, address: IpAddr, policy: &ConnectionPolicy) -> Option<Admitted> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let here = open.1.get(&address).copied().unwrap_or(0);
        if open.0 >= policy.max_connections || here >= policy.max_per_address {
            return None;
        }
        open.0 += 1;
        *open.1.entry(address).or_insert(0) += 1;
        Some(Admitted {
            census: self.clone(),
            address,
        })
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut open = self.census.open.lock().unwrap_or_else(|e| e.into_inner());
        open.0 -= 1;
        if let Some(count) = open.1.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                open.1.remove(&self.address);
            }
        }
    }
}

/// Headers every response carries unless the handler set its own: no sniffing, no framing,
/// no referrer, nothing cached (API answers carry tokens and private data), and a policy that
/// lets a JSON answer load nothing.
pub fn with_security_headers(router: Router) -> Router {
    use tower_http::set_header::SetResponseHeaderLayer;
    let headers: [(header::HeaderName, &'static str); 5] = [
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::CACHE_CONTROL, "no-store"),
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; frame-ancestors 'none'",
        ),
    ];
    headers.into_iter().fold(router, |router, (name, value)| {
        router.layer(SetResponseHeaderLayer::if_not_present(
            name,
            HeaderValue::from_static(value),
        ))
    })
}

/// Serves `router` on `listener` under `policy` until `shutdown` completes, then lets open
/// connections finish their current request (for at most 30 s).
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    policy: ConnectionPolicy,
    shutdown: impl Future<Output = ()> + Send,
) -> std::io::Result<()> {
    let router = router.layer(tower_http::timeout::TimeoutLayer::with_status_code(
        StatusCode::REQUEST_TIMEOUT,
        policy.request_timeout,
    ));
    let router = router.layer(axum::middleware::map_response(timeout_as_problem));
    let census = Arc::new(Census::default());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors or similar: back off instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        while connections.try_join_next().is_some() {}
        let Some(admitted) = census.admit(peer.ip(), &policy) else {
            drop(stream);
            continue;
        };
        let router = router.clone();
        let mut stop = stop_rx.clone();
        connections.spawn(async move {
            let _admitted = admitted;
            let service = hyper::service::service_fn(move |request: hyper::Request<_>| {
                let mut request = request.map(axum::body::Body::new);
                request
                    .extensions_mut()
                    .insert(ConnectInfo::<SocketAddr>(peer));
                router.clone().oneshot(request)
            });
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(policy.header_timeout)
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            let stopped = async move {
                let _ = stop.wait_for(|stopped| *stopped).await.map(drop);
            };
            tokio::select! {
                _ = connection.as_mut() => {}
                () = stopped => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.await;
                }
            }
        });
    }
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(Duration::from_secs(30), async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!("connections still open 30 s after shutdown; closing them");
    }
    Ok(())
}

/// The timeout layer answers with a bare 408; every error here is a problem-details body.
async fn timeout_as_problem(response: Response) -> Response {
    if response.status() == StatusCode::REQUEST_TIMEOUT
        && !response.headers().contains_key(header::CONTENT_TYPE)
    {
        return ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "request-timeout",
            "the request was not received and answered in time",
        )
        .into_response();
    }
    response
}
