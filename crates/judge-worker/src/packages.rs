//! Problem packages by content hash: from a local directory (`<root>/<hash>/`), or fetched
//! from App's internal package route and unpacked into a local cache after the content hash
//! is verified.

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use contracts::{wire, PortError, ProblemPackagePort};

/// Fetches package archives from App over HTTP with a service token, caching them unpacked.
#[derive(Debug, Clone)]
pub struct HttpPackages {
    base: String,
    token: String,
    cache: PathBuf,
    client: reqwest::Client,
}

impl HttpPackages {
    pub fn new(base_url: &str, service_token: &str, cache: impl Into<PathBuf>) -> Self {
        Self {
            base: base_url.trim_end_matches('/').to_string(),
            token: service_token.to_string(),
            cache: cache.into(),
            client: reqwest::Client::builder()
                .timeout(Duration::from_secs(120))
                .build()
                .expect("an HTTP client without TLS always builds"),
        }
    }
}

#[async_trait]
impl ProblemPackagePort for HttpPackages {
    async fn package(&self, hash: &str) -> Result<PathBuf, PortError> {
        if hash.is_empty() || !hash.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(PortError::Rejected(format!("not a package hash: {hash:?}")));
        }
        let cached = self.cache.join(hash);
        if cached.join("problem.yaml").is_file() {
            return Ok(cached);
        }
        let response = self
            .client
            .get(format!("{}{}/{hash}", self.base, wire::PACKAGES))
            .bearer_auth(&self.token)
            .send()
            .await
            .map_err(|e| PortError::Unavailable(e.to_string()))?;
        let status = response.status();
        if !status.is_success() {
            let text = response.text().await.unwrap_or_default();
            return Err(if status.is_server_error() {
                PortError::Unavailable(format!("{status}: {text}"))
            } else {
                PortError::Rejected(format!("{status}: {text}"))
            });
        }
        let archive = response
            .bytes()
            .await
            .map_err(|e| PortError::Unavailable(e.to_string()))?;
        let (cache, hash) = (self.cache.clone(), hash.to_string());
        tokio::task::spawn_blocking(move || {
            judge::package::archive::install(&archive, &cache, &hash)
        })
        .await
        .map_err(|e| PortError::Unavailable(e.to_string()))?
        .map_err(|e| PortError::Rejected(e.to_string()))
    }
}

#[derive(Debug, Clone)]
pub struct LocalPackages {
    root: PathBuf,
}

impl LocalPackages {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// Stores a package directory under its content hash and returns the hash.
    pub fn register(&self, package: &Path) -> std::io::Result<String> {
        let hash = judge::package::content_hash(package)?;
        let target = self.root.join(&hash);
        if !target.exists() {
            let staging = self
                .root
                .join(format!(".{hash}.{}", uuid::Uuid::new_v4().simple()));
            judge::files::copy_tree(package, &staging)?;
            // Publish atomically: a reader sees the whole package or none of it.
            if let Err(e) = std::fs::rename(&staging, &target) {
                let _ = std::fs::remove_dir_all(&staging);
                if !target.exists() {
                    return Err(e);
                }
            }
        }
        Ok(hash)
    }
}

#[async_trait]
impl ProblemPackagePort for LocalPackages {
    async fn package(&self, hash: &str) -> Result<PathBuf, PortError> {
        if hash.is_empty() || !hash.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(PortError::Rejected(format!("not a package hash: {hash:?}")));
        }
        let path = self.root.join(hash);
        if path.join("problem.yaml").is_file() {
            Ok(path)
        } else {
            Err(PortError::Unavailable(format!(
                "package {hash} is not in {}",
                self.root.display()
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn packages_are_stored_and_found_by_content_hash() {
        let root = tempfile::tempdir().unwrap();
        let package = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(package.path().join("data/secret")).unwrap();
        std::fs::write(package.path().join("problem.yaml"), "name: x\n").unwrap();
        std::fs::write(package.path().join("data/secret/1.in"), "1\n").unwrap();
        let store = LocalPackages::new(root.path());
        let hash = store.register(package.path()).unwrap();
        assert_eq!(store.register(package.path()).unwrap(), hash, "idempotent");
        let found = store.package(&hash).await.unwrap();
        assert_eq!(
            std::fs::read_to_string(found.join("data/secret/1.in")).unwrap(),
            "1\n"
        );
        assert!(matches!(
            store.package("00ff").await,
            Err(PortError::Unavailable(_))
        ));
        assert!(matches!(
            store.package("../etc").await,
            Err(PortError::Rejected(_))
        ));
    }
}
