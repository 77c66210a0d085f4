//! The Docker backend against a real engine, where one answers.
//!
//! The argument list and the classifier are pinned by unit tests; this test proves the list is
//! accepted by a real `docker run`. On machines without an engine it says so by name.

use std::path::Path;

use sandbox::{DockerSandbox, RunSpec, Sandbox, Status};

#[test]
fn docker_backend_live() {
    let docker = Path::new("docker");
    if let Err(reason) = sandbox::docker::engine_available(docker) {
        println!(
            "UNAVAILABLE docker_backend_live: no Docker engine answers ({reason}); \
             the Docker backend's arguments and classifier are covered by unit tests only"
        );
        return;
    }
    let profiles = tempfile::tempdir().unwrap();
    std::fs::write(
        profiles.path().join("native.json"),
        r#"{"defaultAction":"SCMP_ACT_ALLOW"}"#,
    )
    .unwrap();
    let image =
        std::env::var("ULTICODE_DOCKER_IMAGE").unwrap_or_else(|_| "debian:bookworm-slim".into());
    let sandbox = DockerSandbox::new(docker, image, profiles.path());
    let outcome = sandbox
        .run(&RunSpec::new("/bin/echo").args(["hi"]))
        .unwrap();
    assert_eq!(outcome.status, Status::Ok, "{outcome:?}");
    assert_eq!(outcome.stdout, b"hi\n");
}
