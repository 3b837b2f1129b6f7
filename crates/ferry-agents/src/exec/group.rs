//! The process group of one turn, and the guarantee that it does not outlive the turn.
//!
//! Each command starts as the leader of its own process group, so that everything it starts
//! (a pipeline, `sleep 1000 &`) can be signalled at once, and the group is killed whenever
//! the turn ends: when the command exits (nothing it left running in its group survives the
//! turn; a process that moved to a group of its own with `setsid` is out of reach), when
//! the turn is canceled or times out, and when the turn's future is dropped (the server
//! aborted it). rustix's `kill_process_group` is `kill(-pgid, sig)` without `unsafe`.

use rustix::process::{Pid, Signal, kill_process_group};

/// A live process group, killed (SIGKILL) when dropped.
#[derive(Debug)]
pub(crate) struct ProcessGroup {
    pgid: Pid,
}

impl ProcessGroup {
    /// The group led by `child` (spawned with `process_group(0)`, so its pid is the group's
    /// id); `None` when the child was already reaped.
    pub(crate) fn led_by(child: &tokio::process::Child) -> Option<Self> {
        let pid = i32::try_from(child.id()?).ok()?;
        Pid::from_raw(pid).map(|pgid| Self { pgid })
    }

    /// Asks the group to stop (SIGTERM), leaving it time to clean up.
    pub(crate) fn terminate(&self) {
        self.signal(Signal::TERM);
    }

    /// Kills the group now (SIGKILL) and lets it go: the group is gone afterwards, so there is
    /// nothing left to kill on drop, and its id may soon name another process group.
    pub(crate) fn kill(self) {
        self.signal(Signal::KILL);
        std::mem::forget(self);
    }

    fn signal(&self, signal: Signal) {
        // ESRCH (the group is already gone) is the outcome we want; EPERM cannot happen for
        // a group of our own children.
        if let Err(e) = kill_process_group(self.pgid, signal)
            && e != rustix::io::Errno::SRCH
        {
            tracing::warn!(pgid = self.pgid.as_raw_nonzero().get(), error = %e, "could not signal the command's process group");
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.signal(Signal::KILL);
    }
}

/// The usual name of signal `number` (`SIGTERM`), if it is one of the common ones.
pub(crate) fn signal_name(number: i32) -> Option<&'static str> {
    const NAMES: &[(Signal, &str)] = &[
        (Signal::HUP, "SIGHUP"),
        (Signal::INT, "SIGINT"),
        (Signal::QUIT, "SIGQUIT"),
        (Signal::ILL, "SIGILL"),
        (Signal::ABORT, "SIGABRT"),
        (Signal::BUS, "SIGBUS"),
        (Signal::FPE, "SIGFPE"),
        (Signal::KILL, "SIGKILL"),
        (Signal::USR1, "SIGUSR1"),
        (Signal::SEGV, "SIGSEGV"),
        (Signal::USR2, "SIGUSR2"),
        (Signal::PIPE, "SIGPIPE"),
        (Signal::ALARM, "SIGALRM"),
        (Signal::TERM, "SIGTERM"),
    ];
    NAMES
        .iter()
        .find(|(signal, _)| signal.as_raw() == number)
        .map(|(_, name)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_signals_have_names() {
        assert_eq!(signal_name(9), Some("SIGKILL"));
        assert_eq!(signal_name(15), Some("SIGTERM"));
        assert_eq!(signal_name(0), None);
    }
}
