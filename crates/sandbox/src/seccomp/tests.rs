//! The filters, interpreted instruction by instruction against a reference model.

use super::*;

/// A classic-BPF interpreter for exactly the instructions `compile` emits.
fn evaluate(prog: &[libc::sock_filter], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
    let mut data = Vec::with_capacity(64);
    data.extend_from_slice(&nr.to_le_bytes());
    data.extend_from_slice(&arch.to_le_bytes());
    data.extend_from_slice(&0u64.to_le_bytes());
    for arg in args {
        data.extend_from_slice(&arg.to_le_bytes());
    }
    let load = |offset: u32| {
        let at = offset as usize;
        u32::from_le_bytes(data[at..at + 4].try_into().unwrap())
    };
    let (mut pc, mut acc) = (0usize, 0u32);
    loop {
        let ins = prog[pc];
        pc += 1;
        let taken = match ins.code {
            LD_W_ABS => {
                acc = load(ins.k);
                continue;
            }
            RET_K => return ins.k,
            JA => {
                pc += ins.k as usize;
                continue;
            }
            AND_K => {
                acc &= ins.k;
                continue;
            }
            JEQ_K => acc == ins.k,
            JGE_K => acc >= ins.k,
            JSET_K => acc & ins.k != 0,
            other => panic!("unexpected opcode {other:#x}"),
        };
        pc += usize::from(if taken { ins.jt } else { ins.jf });
    }
}

fn call(profile: Profile, nr: libc::c_long, args: [u64; 6]) -> u32 {
    evaluate(&profile.compile(), AUDIT_ARCH_X86_64, nr as u32, args)
}

/// The reference model: what a rule means, without BPF.
fn decide(rule: Option<&Rule>, args: [u64; 6]) -> u32 {
    match rule {
        None => VIOLATION,
        Some(Rule::Allow) => ALLOW,
        Some(Rule::Errno(code)) => errno(*code),
        Some(Rule::Guarded(guards)) => guards
            .iter()
            .find(|g| g.when.holds(args))
            .map_or(ALLOW, |g| errno(g.errno)),
    }
}

#[test]
fn every_profile_compiles_to_exactly_its_rules() {
    // Argument vectors that exercise every guard: zeros, each guard's own values.
    let mut probes: Vec<[u64; 6]> = vec![[0; 6], [u64::MAX; 6]];
    for value in [1u64, 2, 10, 16, 40, 22, 59, 31, 5, 6, 7, 37, 38] {
        for arg in 0..3 {
            let mut args = [0; 6];
            args[arg] = value;
            probes.push(args);
            args[(arg + 1) % 3] = 31;
            probes.push(args);
        }
    }
    probes.push([libc::SIGSYS as u64 | libc::CLONE_VM as u64, 0, 0, 0, 0, 0]);
    probes.push([libc::PR_SET_PDEATHSIG as u64, 31, 0, 0, 0, 0]);
    probes.push([3, F_SETSIG as u64, 31, 0, 0, 0]);
    for profile in Profile::ALL {
        let rules = profile.rules();
        let prog = profile.compile();
        for nr in 0..512u32 {
            for args in &probes {
                let got = evaluate(&prog, AUDIT_ARCH_X86_64, nr, *args);
                assert_eq!(
                    got,
                    decide(rules.get(&nr), *args),
                    "{profile} syscall {nr} {args:?}"
                );
            }
        }
    }
}

/// A supervisor's runs share one IPC namespace (see `native::resources`): that is sound only
/// while no run can make an object that outlives its processes there.
#[test]
fn no_profile_can_make_ipc_objects() {
    let ipc = [
        libc::SYS_shmget,
        libc::SYS_shmat,
        libc::SYS_shmctl,
        libc::SYS_semget,
        libc::SYS_semop,
        libc::SYS_semtimedop,
        libc::SYS_semctl,
        libc::SYS_msgget,
        libc::SYS_msgsnd,
        libc::SYS_msgctl,
        libc::SYS_mq_open,
        libc::SYS_mq_unlink,
        libc::SYS_mq_timedsend,
    ];
    for profile in Profile::ALL {
        for nr in ipc {
            assert_eq!(
                call(profile, nr, [0; 6]),
                VIOLATION,
                "{} allows IPC call {nr}",
                profile.as_str()
            );
        }
    }
}

#[test]
fn dangerous_calls_are_violations_in_every_profile() {
    let dangerous = [
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_chroot,
        libc::SYS_pivot_root,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_reboot,
        libc::SYS_kexec_load,
        libc::SYS_init_module,
        libc::SYS_clock_settime,
        libc::SYS_settimeofday,
        libc::SYS_setuid,
        libc::SYS_mknod,
        libc::SYS_userfaultfd,
        libc::SYS_open_by_handle_at,
        libc::SYS_personality,
        libc::SYS_swapon,
    ];
    for profile in Profile::ALL {
        for nr in dangerous {
            assert_eq!(
                call(profile, nr, [0; 6]),
                VIOLATION,
                "{profile} syscall {nr}"
            );
        }
    }
    assert_eq!(call(Profile::Native, libc::SYS_connect, [0; 6]), VIOLATION);
    assert_eq!(call(Profile::Python, libc::SYS_connect, [0; 6]), VIOLATION);
}

#[test]
fn the_filter_is_a_search_tree_not_a_list() {
    let rules = Profile::Jvm.rules();
    let prog = Profile::Jvm.compile();
    let ranges = segments(&rules).len();
    assert!(
        ranges < rules.len(),
        "{ranges} ranges for {} rules",
        rules.len()
    );
    assert!(prog.len() < 4 * ranges, "{} instructions", prog.len());
    // Every syscall number is decided within the depth of the tree.
    let depth = (ranges as f64).log2().ceil() as usize;
    for nr in 0..512u32 {
        let (mut steps, mut pc) = (0, 6);
        while prog[pc].code != RET_K && prog[pc].code != LD_W_ABS {
            let ins = prog[pc];
            steps += 1;
            pc += 1 + match ins.code {
                JA => ins.k as usize,
                JGE_K if nr >= ins.k => ins.jt as usize,
                JGE_K => ins.jf as usize,
                other => panic!("unexpected opcode {other:#x} in the tree"),
            };
        }
        assert!(steps <= 2 * depth, "syscall {nr} took {steps} steps");
    }
}

#[test]
fn ranges_merge_equal_neighbours_only() {
    let rules: BTreeMap<u32, Rule> = [
        (0, Rule::Allow),
        (1, Rule::Allow),
        (2, Rule::Errno(libc::ENOSYS)),
        (4, Rule::Allow),
        (5, Rule::Guarded(NO_SIGSYS_ARG1)),
        (6, Rule::Guarded(NO_SIGSYS_ARG1)),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        segments(&rules),
        vec![
            (0, Leaf::Rule(Rule::Allow)),
            (2, Leaf::Rule(Rule::Errno(libc::ENOSYS))),
            (3, Leaf::Violation),
            (4, Leaf::Rule(Rule::Allow)),
            (5, Leaf::Rule(rules[&5])),
            (6, Leaf::Rule(rules[&6])),
            (7, Leaf::Violation),
        ]
    );
}

#[test]
fn foreign_abis_are_violations() {
    const AUDIT_ARCH_I386: u32 = 0x4000_0003;
    for profile in Profile::ALL {
        let prog = profile.compile();
        // write(2) by number on i386 is 4, which is `stat` on x86_64: the arch check decides.
        assert_eq!(evaluate(&prog, AUDIT_ARCH_I386, 4, [0; 6]), VIOLATION);
        assert_eq!(
            evaluate(&prog, AUDIT_ARCH_X86_64, X32_SYSCALL_BIT + 1, [0; 6]),
            VIOLATION
        );
    }
}

#[test]
fn fallbacks_answer_enosys() {
    for profile in Profile::ALL {
        for nr in [
            libc::SYS_clone3,
            libc::SYS_io_uring_setup,
            libc::SYS_io_uring_enter,
        ] {
            assert_eq!(call(profile, nr, [0; 6]), errno(libc::ENOSYS));
        }
    }
}

#[test]
fn native_and_python_refuse_sockets_with_eacces() {
    for profile in [Profile::Native, Profile::Python] {
        assert_eq!(
            call(profile, libc::SYS_socket, [2, 1, 0, 0, 0, 0]),
            errno(libc::EACCES)
        );
    }
    for profile in [Profile::Jvm, Profile::Node] {
        assert_eq!(call(profile, libc::SYS_socket, [1, 1, 0, 0, 0, 0]), ALLOW);
    }
}

#[test]
fn clone_may_make_threads_but_not_namespaces() {
    let thread_flags = (libc::CLONE_VM
        | libc::CLONE_FS
        | libc::CLONE_FILES
        | libc::CLONE_SIGHAND
        | libc::CLONE_THREAD
        | libc::CLONE_SYSVSEM
        | libc::CLONE_SETTLS
        | libc::CLONE_PARENT_SETTID
        | libc::CLONE_CHILD_CLEARTID) as u64;
    for profile in Profile::ALL {
        assert_eq!(
            call(profile, libc::SYS_clone, [thread_flags, 0, 0, 0, 0, 0]),
            ALLOW
        );
        for ns in [
            libc::CLONE_NEWUSER,
            libc::CLONE_NEWNS,
            libc::CLONE_NEWPID,
            libc::CLONE_NEWNET,
        ] {
            let flags = libc::SIGCHLD as u64 | ns as u64;
            assert_eq!(
                call(profile, libc::SYS_clone, [flags, 0, 0, 0, 0, 0]),
                errno(libc::EPERM),
                "{profile} {ns:#x}"
            );
        }
    }
}

#[test]
fn sigsys_cannot_be_forged() {
    let sigsys = libc::SIGSYS as u64;
    for profile in Profile::ALL {
        assert_eq!(
            call(profile, libc::SYS_kill, [1, sigsys, 0, 0, 0, 0]),
            errno(libc::EPERM)
        );
        assert_eq!(
            call(profile, libc::SYS_tgkill, [1, 1, sigsys, 0, 0, 0]),
            errno(libc::EPERM)
        );
        assert_eq!(
            call(
                profile,
                libc::SYS_kill,
                [1, libc::SIGKILL as u64, 0, 0, 0, 0]
            ),
            ALLOW
        );
        // Only the low 32 bits count, exactly as the kernel reads an `int`.
        assert_eq!(
            call(profile, libc::SYS_kill, [1, (1 << 32) | sigsys, 0, 0, 0, 0]),
            errno(libc::EPERM)
        );
    }
}

#[test]
fn sigsys_has_no_other_way_in() {
    let sigsys = libc::SIGSYS as u64;
    for profile in Profile::ALL {
        // A child whose exit signal is SIGSYS.
        let fork_like = libc::CLONE_CHILD_SETTID as u64;
        assert_eq!(
            call(
                profile,
                libc::SYS_clone,
                [fork_like | sigsys, 0, 0, 0, 0, 0]
            ),
            errno(libc::EPERM)
        );
        assert_eq!(
            call(
                profile,
                libc::SYS_clone,
                [fork_like | libc::SIGCHLD as u64, 0, 0, 0, 0, 0]
            ),
            ALLOW
        );
        // I/O readiness signalled as SIGSYS.
        assert_eq!(
            call(
                profile,
                libc::SYS_fcntl,
                [3, F_SETSIG as u64, sigsys, 0, 0, 0]
            ),
            errno(libc::EPERM)
        );
        assert_eq!(
            call(profile, libc::SYS_fcntl, [3, F_SETSIG as u64, 10, 0, 0, 0]),
            ALLOW
        );
        // The program's own filter, syscall user dispatch, SIGSYS on the parent's death.
        for args in [
            [libc::PR_SET_SECCOMP as u64, 2, 0, 0, 0, 0],
            [PR_SET_SYSCALL_USER_DISPATCH as u64, 1, 0, 0, 0, 0],
            [libc::PR_SET_PDEATHSIG as u64, sigsys, 0, 0, 0, 0],
        ] {
            assert_eq!(call(profile, libc::SYS_prctl, args), errno(libc::EPERM));
        }
        assert_eq!(
            call(
                profile,
                libc::SYS_prctl,
                [libc::PR_SET_PDEATHSIG as u64, 9, 0, 0, 0, 0]
            ),
            ALLOW
        );
        assert_eq!(
            call(profile, libc::SYS_seccomp, [1, 0, 0, 0, 0, 0]),
            VIOLATION
        );
    }
}

#[test]
fn runs_stay_on_their_cpu() {
    for profile in Profile::ALL {
        assert_eq!(
            call(profile, libc::SYS_sched_setaffinity, [0, 128, 0, 0, 0, 0]),
            errno(libc::EPERM)
        );
        assert_eq!(call(profile, libc::SYS_sched_getaffinity, [0; 6]), ALLOW);
    }
}

#[test]
fn locks_succeed_without_locking() {
    for profile in Profile::ALL {
        assert_eq!(call(profile, libc::SYS_flock, [3, 2, 0, 0, 0, 0]), errno(0));
        for cmd in [
            libc::F_SETLK,
            libc::F_SETLKW,
            libc::F_OFD_SETLK,
            libc::F_OFD_SETLKW,
        ] {
            assert_eq!(
                call(profile, libc::SYS_fcntl, [3, cmd as u64, 0, 0, 0, 0]),
                errno(0)
            );
        }
        // Everything else about descriptors still works.
        for cmd in [
            libc::F_GETFL,
            libc::F_SETFL,
            libc::F_DUPFD_CLOEXEC,
            libc::F_GETLK,
        ] {
            assert_eq!(
                call(profile, libc::SYS_fcntl, [3, cmd as u64, 0, 0, 0, 0]),
                ALLOW
            );
        }
    }
}

#[test]
fn socket_runtimes_get_local_and_namespaced_families_only() {
    for profile in [Profile::Jvm, Profile::Node] {
        for family in [libc::AF_UNIX, libc::AF_INET, libc::AF_INET6] {
            assert_eq!(
                call(profile, libc::SYS_socket, [family as u64, 1, 0, 0, 0, 0]),
                ALLOW
            );
        }
        for family in [
            libc::AF_VSOCK,
            libc::AF_NETLINK,
            libc::AF_PACKET,
            libc::AF_BLUETOOTH,
        ] {
            assert_eq!(
                call(profile, libc::SYS_socket, [family as u64, 1, 0, 0, 0, 0]),
                errno(libc::EACCES),
                "{profile} family {family}"
            );
        }
    }
}

#[test]
fn profiles_parse_from_their_names() {
    for profile in Profile::ALL {
        assert_eq!(profile.as_str().parse::<Profile>(), Ok(profile));
    }
    assert!("docker"
        .parse::<Profile>()
        .unwrap_err()
        .contains("native, python, jvm, node"));
}
