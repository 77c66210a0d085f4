//! What one run leaves for the next run of the same supervisor: nothing. A supervisor's runs
//! share its network namespace (made once, for speed); these runs try to leave sockets in it
//! for their successor.

use libtest_mimic::{Failed, Trial};
use sandbox::{NativeSandbox, Profile, RunSpec, Sandbox, Status, SupervisorCommand};

use super::compiled;

pub fn all() -> Vec<Trial> {
    vec![Trial::test(
        "sockets_a_run_leaves_are_gone_for_the_next_run_of_its_supervisor",
        sockets_are_gone_for_the_next_run,
    )]
}

/// `leave`: binds an abstract Unix socket and a TCP port, and leaves a process holding both;
/// `probe`: connects to that socket and binds that port. Each prints its network namespace.
const LEAVE_OR_PROBE_C: &str = r#"
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
int main(int argc, char **argv) {
    char ns[64] = {0};
    if (readlink("/proc/self/ns/net", ns, sizeof ns - 1) < 0) { perror("readlink"); return 1; }
    struct sockaddr_un u = { .sun_family = AF_UNIX };
    const char *name = "ulticode-leftover";
    memcpy(u.sun_path + 1, name, strlen(name));
    socklen_t ulen = offsetof(struct sockaddr_un, sun_path) + 1 + strlen(name);
    struct sockaddr_in t = { .sin_family = AF_INET, .sin_port = htons(47123) };
    int us = socket(AF_UNIX, SOCK_STREAM, 0), ts = socket(AF_INET, SOCK_STREAM, 0);
    if (us < 0 || ts < 0) { perror("socket"); return 1; }
    if (strcmp(argv[1], "leave") == 0) {
        if (bind(us, (void *)&u, ulen) || listen(us, 1)) { perror("unix"); return 1; }
        if (bind(ts, (void *)&t, sizeof t) || listen(ts, 1)) { perror("tcp"); return 1; }
        if (fork() == 0) { setsid(); sleep(60); _exit(0); }
        printf("%s left\n", ns);
        return 0;
    }
    int connected = connect(us, (void *)&u, ulen);
    printf("%s unix:%s ", ns, connected == 0 ? "connected" : strerror(errno));
    int bound = bind(ts, (void *)&t, sizeof t);
    printf("tcp:%s\n", bound == 0 ? "bound" : strerror(errno));
    return 0;
}
"#;

fn sockets_are_gone_for_the_next_run() -> Result<(), Failed> {
    let dir = compiled("leftover", LEAVE_OR_PROBE_C);
    // A sandbox of its own, used one run at a time: both runs go to its one supervisor.
    let sandbox = NativeSandbox::new(SupervisorCommand::current_exe()?);
    let run = |mode: &str| -> Result<String, Failed> {
        let spec = RunSpec::new("/job/leftover")
            .args([mode])
            .job_dir(dir.path(), false)
            .profile(Profile::Node);
        let outcome = sandbox.run(&spec)?;
        let stdout = String::from_utf8_lossy(&outcome.stdout).into_owned();
        if outcome.status != Status::Ok {
            return Err(format!(
                "{mode} ended as {} ({:?}); stdout {stdout:?}, stderr {:?}",
                outcome.status,
                outcome.message,
                String::from_utf8_lossy(&outcome.stderr)
            )
            .into());
        }
        Ok(stdout)
    };
    let left = run("leave")?;
    let probed = run("probe")?;
    let namespace = left.trim_end().trim_end_matches(" left");
    let expected = format!("{namespace} unix:Connection refused tcp:bound\n");
    if probed != expected {
        return Err(format!("after {left:?} the next run saw {probed:?}, not {expected:?}").into());
    }
    Ok(())
}
