//! Waiting for a process to end without polling: a pidfd (Linux ≥ 5.3) becomes readable when
//! the process terminates, whoever its parent is, so a test can wait for the exit of a
//! grandchild it never spawned.

use rustix::event::{PollFd, PollFlags, Timespec, poll};
use rustix::io::Errno;
use rustix::process::{Pid, PidfdFlags, pidfd_open};
use std::time::Duration;

/// Blocks until the process `pid` has terminated (a zombie not yet reaped counts: it runs no
/// more) or `limit` passes; true when it terminated. A pid that no longer exists has
/// terminated.
pub fn wait_for_exit(pid: u32, limit: Duration) -> bool {
    let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return true;
    };
    let fd = match pidfd_open(pid, PidfdFlags::empty()) {
        Ok(fd) => fd,
        Err(Errno::SRCH) => return true,
        Err(e) => panic!("pidfd_open({pid:?}): {e}"),
    };
    let timeout = Timespec {
        tv_sec: i64::try_from(limit.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(limit.subsec_nanos()),
    };
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    loop {
        match poll(&mut fds, Some(&timeout)) {
            Ok(n) => return n > 0,
            Err(Errno::INTR) => continue,
            Err(e) => panic!("poll on a pidfd: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_that_ends_is_seen_ending_and_one_that_runs_is_not() {
        let mut running = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("spawn sleep");
        assert!(!wait_for_exit(running.id(), Duration::from_millis(50)));
        running.kill().expect("kill sleep");
        assert!(wait_for_exit(running.id(), Duration::from_secs(30)));
        running.wait().expect("reap sleep");
        assert!(
            wait_for_exit(running.id(), Duration::from_secs(30)),
            "reaped: gone"
        );
    }
}
