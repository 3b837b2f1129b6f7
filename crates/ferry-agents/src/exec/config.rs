//! The settings of an exec agent, as written under `[[agents]] kind = "exec"` in ferry's TOML
//! (snake_case keys, unknown keys refused so that a typo is an error rather than a default)
//! or built from one `--exec 'CMD ARGS'` command line.

use super::ExecError;
use super::split::split_command_line;
use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::path::{Path, PathBuf};

/// The command to run: an argv list, or one command line.
///
/// In TOML either `command = ["tool", "--flag", "a b"]` or `command = "tool --flag 'a b'"`.
/// A command line is split like a POSIX shell splits words (quotes `'…'` and `"…"`,
/// backslash escapes) without expanding anything, unless [`ExecConfig::shell`] hands it to
/// `/bin/sh -c` as a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecCommand {
    /// The program and its arguments, passed as they are.
    Argv(Vec<String>),
    /// A command line: split into words, or the script for `/bin/sh -c` with `shell = true`.
    Line(String),
}

impl Serialize for ExecCommand {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Argv(argv) => argv.serialize(s),
            Self::Line(line) => line.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for ExecCommand {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // By hand rather than `#[serde(untagged)]`, whose error ("did not match any variant")
        // would not say what a command may be.
        struct CommandVisitor;

        impl<'de> Visitor<'de> for CommandVisitor {
            type Value = ExecCommand;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a command line string or a list of strings")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<ExecCommand, E> {
                Ok(ExecCommand::Line(v.to_owned()))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ExecCommand, A::Error> {
                let mut argv = Vec::new();
                while let Some(arg) = seq.next_element::<String>()? {
                    argv.push(arg);
                }
                Ok(ExecCommand::Argv(argv))
            }
        }

        d.deserialize_any(CommandVisitor)
    }
}

/// How an [`crate::ExecAgent`] runs its command. Only `command` is required; every other
/// field has the default its doc names.
///
/// ```
/// use ferry_agents::{ExecCommand, ExecConfig};
///
/// let config = ExecConfig::from_command_line("grep -i 'hello world'")?;
/// assert_eq!(
///     config.command,
///     ExecCommand::Argv(vec!["grep".into(), "-i".into(), "hello world".into()])
/// );
/// assert_eq!(config.timeout_secs, 300);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecConfig {
    /// The program and its arguments (a list), or a command line (a string). Required.
    pub command: ExecCommand,
    /// Run `command` through `/bin/sh -c` (it must then be a single string: the script).
    /// Default `false`: no shell runs unless asked for, so nothing in the config is expanded.
    #[serde(default)]
    pub shell: bool,
    /// The card's name. Default: the program's file name (for a shell script, that of its
    /// first word).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The card's description. Default: a sentence naming the program (never its arguments,
    /// which may hold secrets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The limit of one turn, in seconds. Default 300. On expiry the turn's process group is
    /// stopped and the task fails with "the command did not finish within N s".
    #[serde(default = "default_timeout_secs")]
    pub timeout_secs: u64,
    /// Turns that may run at once (over all tasks). Default 4. A turn over the limit is
    /// refused before it starts: `UNAVAILABLE` with reason `EXEC_BUSY`, `retryAfterSeconds` 1.
    #[serde(default = "default_max_concurrent")]
    pub max_concurrent: usize,
    /// Names of the variables copied from ferry's environment into the command's, which
    /// otherwise starts empty. Default `PATH`, `HOME`, `LANG`, `LC_ALL`, `TZ`. ferry's own
    /// `FERRY_*` variables are always set and win over a copied one of the same name.
    #[serde(default = "default_env")]
    pub env: Vec<String>,
    /// The directory the command runs in. Default: ferry's own working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<PathBuf>,
    /// The most the command may write to stdout in one turn. Default 8 MiB (8388608). Past
    /// it the process group is killed and the task fails saying so.
    #[serde(default = "default_max_output_bytes")]
    pub max_output_bytes: u64,
    /// The most stderr that is logged per turn. Default 64 KiB (65536); beyond it stderr is
    /// still read (and its last 2 KiB kept for a failure message) but not logged, and the log
    /// says so once.
    #[serde(default = "default_max_stderr_log_bytes")]
    pub max_stderr_log_bytes: u64,
    /// The exit status by which the command asks for more input without printing a prompt.
    /// Default 10.
    #[serde(default = "default_input_exit_code")]
    pub input_exit_code: i32,
    /// A stdout line starting with this asks for more input: the rest of the line is the
    /// prompt, and the line is not part of the artifact. Default `FERRY_INPUT_REQUIRED:`.
    #[serde(default = "default_input_marker")]
    pub input_marker: String,
}

fn default_timeout_secs() -> u64 {
    300
}

fn default_max_concurrent() -> usize {
    4
}

fn default_env() -> Vec<String> {
    ["PATH", "HOME", "LANG", "LC_ALL", "TZ"]
        .map(String::from)
        .to_vec()
}

fn default_max_output_bytes() -> u64 {
    8 * 1024 * 1024
}

fn default_max_stderr_log_bytes() -> u64 {
    64 * 1024
}

fn default_input_exit_code() -> i32 {
    10
}

fn default_input_marker() -> String {
    "FERRY_INPUT_REQUIRED:".to_owned()
}

impl ExecConfig {
    /// A config running `argv` (program first) with every other field at its default.
    pub fn from_argv(argv: Vec<String>) -> Result<Self, ExecError> {
        let config = Self {
            command: ExecCommand::Argv(argv),
            shell: false,
            name: None,
            description: None,
            timeout_secs: default_timeout_secs(),
            max_concurrent: default_max_concurrent(),
            env: default_env(),
            working_dir: None,
            max_output_bytes: default_max_output_bytes(),
            max_stderr_log_bytes: default_max_stderr_log_bytes(),
            input_exit_code: default_input_exit_code(),
            input_marker: default_input_marker(),
        };
        config.argv()?;
        Ok(config)
    }

    /// A config from one command line (`ferry serve --exec 'CMD ARGS'`), split like a shell
    /// splits words but never expanded; every other field at its default.
    ///
    /// ```
    /// use ferry_agents::{ExecConfig, ExecError};
    ///
    /// assert_eq!(ExecConfig::from_command_line("  "), Err(ExecError::EmptyCommand));
    /// assert_eq!(
    ///     ExecConfig::from_command_line("echo 'oops"),
    ///     Err(ExecError::UnterminatedQuote { quote: '\'' })
    /// );
    /// ```
    pub fn from_command_line(line: &str) -> Result<Self, ExecError> {
        Self::from_argv(split_command_line(line)?)
    }

    /// Checks everything [`crate::ExecAgent::new`] checks, so a config loader can report a
    /// bad agent before serving anything.
    pub fn validate(&self) -> Result<(), ExecError> {
        self.argv()?;
        for (field, value) in [
            ("timeout_secs", self.timeout_secs),
            ("max_concurrent", self.max_concurrent as u64),
            ("max_output_bytes", self.max_output_bytes),
        ] {
            if value == 0 {
                return Err(ExecError::ZeroLimit { field });
            }
        }
        if self.input_marker.is_empty() || self.input_marker.contains(['\n', '\r']) {
            return Err(ExecError::BadInputMarker);
        }
        if !(1..=255).contains(&self.input_exit_code) {
            return Err(ExecError::BadInputExitCode {
                code: self.input_exit_code,
            });
        }
        Ok(())
    }

    /// What is spawned: the program, then its arguments.
    pub(crate) fn argv(&self) -> Result<Vec<String>, ExecError> {
        let argv = match (&self.command, self.shell) {
            (ExecCommand::Argv(argv), false) => argv.clone(),
            (ExecCommand::Line(line), false) => split_command_line(line)?,
            (ExecCommand::Line(script), true) => script_argv(script),
            (ExecCommand::Argv(argv), true) => match argv.as_slice() {
                [script] => script_argv(script),
                [] => Vec::new(),
                _ => return Err(ExecError::ShellNeedsString),
            },
        };
        match argv.first() {
            Some(program) if !program.trim().is_empty() => Ok(argv),
            _ => Err(ExecError::EmptyCommand),
        }
    }

    /// The program's file name, for the card: never its arguments or its directory.
    pub(crate) fn program_name(&self) -> String {
        let first = match (&self.command, self.shell) {
            (ExecCommand::Argv(argv), false) => argv.first().cloned(),
            (ExecCommand::Line(line), false) => split_command_line(line)
                .ok()
                .and_then(|w| w.into_iter().next()),
            // A script: name it after its first word, if that splits.
            (ExecCommand::Line(script), true) => first_word(script),
            (ExecCommand::Argv(argv), true) => argv.first().and_then(|s| first_word(s)),
        };
        first
            .as_deref()
            .and_then(|p| Path::new(p).file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "exec".to_owned())
    }
}

/// `/bin/sh -c SCRIPT`, or nothing for a blank script (so that it counts as empty).
fn script_argv(script: &str) -> Vec<String> {
    if script.trim().is_empty() {
        return Vec::new();
    }
    vec!["/bin/sh".into(), "-c".into(), script.to_owned()]
}

fn first_word(script: &str) -> Option<String> {
    split_command_line(script)
        .ok()
        .and_then(|w| w.into_iter().next())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<ExecConfig, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn defaults_fill_everything_but_the_command() -> Result<(), Box<dyn std::error::Error>> {
        let config = parse(r#"{"command": ["tool", "a b"]}"#)?;
        assert_eq!(
            config,
            ExecConfig::from_argv(vec!["tool".into(), "a b".into()])?
        );
        assert_eq!(config.max_concurrent, 4);
        assert_eq!(config.max_output_bytes, 8 << 20);
        assert_eq!(config.max_stderr_log_bytes, 64 << 10);
        assert_eq!(config.input_exit_code, 10);
        assert_eq!(config.input_marker, "FERRY_INPUT_REQUIRED:");
        assert_eq!(config.env, ["PATH", "HOME", "LANG", "LC_ALL", "TZ"]);
        assert!(!config.shell);
        Ok(())
    }

    #[test]
    fn unknown_keys_and_wrong_command_types_are_refused() {
        let err = parse(r#"{"command": "x", "timeout": 3}"#).err();
        assert!(err.is_some_and(|e| e.to_string().contains("unknown field `timeout`")));
        let err = parse(r#"{"command": 3}"#).err();
        assert!(err.is_some_and(|e| e.to_string().contains("a command line string or a list")));
        assert!(parse(r#"{"shell": true}"#).is_err(), "command is required");
    }

    #[test]
    fn a_command_line_string_is_split_without_a_shell() -> Result<(), Box<dyn std::error::Error>> {
        let config = parse(r#"{"command": "tool --name 'a b' $HOME"}"#)?;
        assert_eq!(config.argv()?, ["tool", "--name", "a b", "$HOME"]);
        assert_eq!(config.program_name(), "tool");
        Ok(())
    }

    #[test]
    fn shell_runs_the_string_as_a_script() -> Result<(), Box<dyn std::error::Error>> {
        let config = parse(r#"{"command": "/usr/bin/jq . | cat", "shell": true}"#)?;
        assert_eq!(config.argv()?, ["/bin/sh", "-c", "/usr/bin/jq . | cat"]);
        assert_eq!(config.program_name(), "jq");
        let list = parse(r#"{"command": ["a", "b"], "shell": true}"#)?;
        assert_eq!(list.validate(), Err(ExecError::ShellNeedsString));
        Ok(())
    }

    #[test]
    fn validation_names_the_bad_field() -> Result<(), Box<dyn std::error::Error>> {
        let base = ExecConfig::from_command_line("tool")?;
        let zero = ExecConfig {
            max_concurrent: 0,
            ..base.clone()
        };
        assert_eq!(
            zero.validate(),
            Err(ExecError::ZeroLimit {
                field: "max_concurrent"
            })
        );
        let marker = ExecConfig {
            input_marker: String::new(),
            ..base.clone()
        };
        assert_eq!(marker.validate(), Err(ExecError::BadInputMarker));
        let code = ExecConfig {
            input_exit_code: 0,
            ..base.clone()
        };
        assert_eq!(
            code.validate(),
            Err(ExecError::BadInputExitCode { code: 0 })
        );
        let empty = ExecConfig {
            command: ExecCommand::Argv(vec![String::new()]),
            ..base
        };
        assert_eq!(empty.validate(), Err(ExecError::EmptyCommand));
        assert_eq!(
            ExecConfig::from_argv(Vec::new()),
            Err(ExecError::EmptyCommand)
        );
        Ok(())
    }

    #[test]
    fn a_config_round_trips_through_serde() -> Result<(), Box<dyn std::error::Error>> {
        let config = ExecConfig::from_command_line("tool -x")?;
        let json = serde_json::to_string(&config)?;
        assert_eq!(parse(&json)?, config);
        Ok(())
    }
}
