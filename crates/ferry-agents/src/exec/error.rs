//! Why an exec agent could not be set up: facts a caller (the CLI, a config loader) can
//! branch on and print. What goes wrong during a turn is the task's business, not an error
//! of this type: the task fails with a status message that says why.

/// Why an [`crate::ExecConfig`] is not usable.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExecError {
    /// The command (argv list or command line) names no program.
    #[error("the command is empty")]
    EmptyCommand,
    /// A quote in the command line is opened and never closed.
    #[error("the command line has an unterminated {quote} quote")]
    UnterminatedQuote {
        /// The quote character: `'` or `"`.
        quote: char,
    },
    /// The command line ends with a backslash that escapes nothing.
    #[error("the command line ends with a backslash that escapes nothing")]
    TrailingBackslash,
    /// `shell = true` runs one script through `/bin/sh -c`; a list would have to be joined,
    /// and joining loses the quoting the list was written to avoid.
    #[error("shell = true needs the command as a single string, not a list")]
    ShellNeedsString,
    /// A limit that must be positive is zero.
    #[error("{field} must be greater than zero")]
    ZeroLimit {
        /// The config field.
        field: &'static str,
    },
    /// The input marker is empty or holds a line break: it would match every line, or none.
    #[error("input_marker must be non-empty and on one line")]
    BadInputMarker,
    /// `input_exit_code` is not an exit status that means "more input" (0 is success, and a
    /// process can only exit with 1..=255).
    #[error("input_exit_code must be between 1 and 255, not {code}")]
    BadInputExitCode {
        /// The configured code.
        code: i32,
    },
}
