//! The sandbox daemon: the one root process a deployment needs, serving supervisors to
//! unprivileged clients (`ulticode up`, `serve` and `judge-worker` running as `ulticode`).
//!
//! It listens on a Unix socket that only root and one group may connect to (mode 0660). Each
//! connection gets a supervisor process of its own, started exactly as a client running as
//! root would start it, with the connection as its stdin. The supervisor reads its client's
//! credentials from the connection itself (`SO_PEERCRED`), so what a run may see and write on
//! the host is bounded by its client's permissions, whatever the request names (see
//! `caller`). A client can thus make the sandbox do nothing it could not do itself, except what
//! the sandbox exists for: namespaces, cgroups and running programs as a run identity.

use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use super::SupervisorCommand;
use crate::identity::{IdentityRange, RANGE_VARIABLE};

#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error("the sandbox daemon's socket {path}: {what}: {source}")]
    Socket {
        path: PathBuf,
        what: &'static str,
        source: io::Error,
    },
    #[error("the run identities: {0}")]
    Identities(#[from] crate::IdentityError),
}

/// A bound sandbox daemon, ready to serve.
pub struct SandboxDaemon {
    listener: UnixListener,
    command: SupervisorCommand,
    identities: IdentityRange,
}

impl SandboxDaemon {
    /// Listens on `socket` (replacing a stale socket file there, never anything else), mode
    /// 0660, owned by root and `group`. Its supervisors claim identities from `identities`,
    /// which must hold no host account or group.
    pub fn bind(
        socket: &Path,
        group: u32,
        command: SupervisorCommand,
        identities: IdentityRange,
    ) -> Result<Self, DaemonError> {
        identities.check_host()?;
        let fail = |what: &'static str| {
            let path = socket.to_path_buf();
            move |source| DaemonError::Socket { path, what, source }
        };
        if let Some(dir) = socket.parent() {
            std::fs::create_dir_all(dir).map_err(fail("create its directory"))?;
        }
        match std::fs::symlink_metadata(socket) {
            Ok(meta) if std::os::unix::fs::FileTypeExt::is_socket(&meta.file_type()) => {
                std::fs::remove_file(socket).map_err(fail("remove the stale socket"))?
            }
            Ok(_) => {
                return Err(fail("refuse to replace what is there")(io::Error::from(
                    io::ErrorKind::AlreadyExists,
                )))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(fail("inspect the path")(e)),
        }
        // Bound with no permissions at all, then opened to root and the group: nobody else
        // can connect in between.
        // SAFETY: umask has no memory-safety preconditions.
        let old = unsafe { libc::umask(0o777) };
        let bound = UnixListener::bind(socket);
        // SAFETY: as above.
        unsafe { libc::umask(old) };
        let listener = bound.map_err(fail("bind"))?;
        std::os::unix::fs::chown(socket, Some(0), Some(group)).map_err(fail("chown"))?;
        std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o660))
            .map_err(fail("chmod"))?;
        Ok(Self {
            listener,
            command,
            identities,
        })
    }

    /// Serves until accepting fails. At most as many supervisors live at once as there are
    /// run identities; a connection beyond that is closed at once (its client's run is a
    /// launch failure), so clients cannot make the daemon start unbounded root processes.
    pub fn serve(self) -> io::Result<()> {
        let live = Arc::new(AtomicU32::new(0));
        loop {
            let (connection, _) = match self.listener.accept() {
                Ok(accepted) => accepted,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.raw_os_error() == Some(libc::ECONNABORTED) => continue,
                Err(e) => return Err(e),
            };
            if live.load(Ordering::Acquire) >= self.identities.len() {
                eprintln!(
                    "ulticode sandbox daemon: all {} run identities are in use; a connection \
                     was refused",
                    self.identities.len()
                );
                continue;
            }
            let started = Command::new(&self.command.program)
                .args(&self.command.args)
                .process_group(0)
                .env_clear()
                .env(RANGE_VARIABLE, self.identities.to_arg())
                .stdin(Stdio::from(OwnedFd::from(connection)))
                .stdout(Stdio::null())
                .stderr(Stdio::inherit())
                .spawn();
            let mut child = match started {
                Ok(child) => child,
                Err(e) => {
                    eprintln!("ulticode sandbox daemon: start a supervisor: {e}");
                    continue;
                }
            };
            live.fetch_add(1, Ordering::AcqRel);
            let live = live.clone();
            std::thread::spawn(move || {
                let _ = child.wait();
                live.fetch_sub(1, Ordering::AcqRel);
            });
        }
    }
}
