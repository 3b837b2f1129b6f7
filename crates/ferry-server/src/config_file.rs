//! Loading a `ServerConfig` from a TOML file with `${ENV}` interpolation, and printing the
//! effective configuration with secrets redacted.
//!
//! Interpolation happens in string values only (after TOML parsing, so a value can never break
//! the file's syntax): `${NAME}` is replaced by the environment variable `NAME`, `$$` is a
//! literal `$`. A variable that is not set is an error that names it. Unknown keys are errors.

use crate::config::ServerConfig;
use std::path::Path;

/// Why a configuration file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML, or a key is unknown or has the wrong type.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// What was wrong, as the TOML parser says it.
        message: String,
    },
    /// `${NAME}` names a variable that is not set.
    #[error("{path}: environment variable {name} is not set (used as ${{{name}}} in {key})")]
    MissingVariable {
        /// The file.
        path: String,
        /// The variable.
        name: String,
        /// The key whose value uses it.
        key: String,
    },
    /// A `${` without its closing `}`.
    #[error("{path}: unterminated ${{…}} in {key}")]
    Unterminated {
        /// The file.
        path: String,
        /// The key.
        key: String,
    },
}

impl ServerConfig {
    /// Reads a TOML file holding any `ServerConfig` fields; missing fields keep their defaults.
    pub fn from_toml_file(path: &Path) -> Result<Self, ConfigError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: shown.clone(),
            source,
        })?;
        Self::from_toml_str(&text, &shown, &|name| std::env::var(name).ok())
    }

    /// Like [`ServerConfig::from_toml_file`], and also returns the top-level tables named in
    /// `sections` (interpolated, not part of `ServerConfig`): settings of the served agent,
    /// such as the forms agent's `[forms]`.
    pub fn from_toml_file_with_sections(
        path: &Path,
        sections: &[&str],
    ) -> Result<(Self, toml::Table), ConfigError> {
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: shown.clone(),
            source,
        })?;
        Self::from_toml_str_with_sections(&text, &shown, &|name| std::env::var(name).ok(), sections)
    }

    /// Parses TOML text, interpolating `${NAME}` with `lookup`.
    pub fn from_toml_str(
        text: &str,
        path: &str,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        Self::from_toml_str_with_sections(text, path, lookup, &[]).map(|(config, _)| config)
    }

    /// [`ServerConfig::from_toml_str`], setting aside the top-level tables named in
    /// `sections` and returning them.
    pub fn from_toml_str_with_sections(
        text: &str,
        path: &str,
        lookup: &dyn Fn(&str) -> Option<String>,
        sections: &[&str],
    ) -> Result<(Self, toml::Table), ConfigError> {
        let invalid = |e: &dyn std::fmt::Display| ConfigError::Invalid {
            path: path.to_owned(),
            message: e.to_string(),
        };
        let mut value: toml::Table = toml::from_str(text).map_err(|e| invalid(&e))?;
        for (key, v) in value.iter_mut() {
            interpolate(v, key, path, lookup)?;
        }
        let mut extra = toml::Table::new();
        for name in sections {
            if let Some(section) = value.remove(*name) {
                extra.insert((*name).to_owned(), section);
            }
        }
        let config = toml::Value::Table(value)
            .try_into()
            .map_err(|e| invalid(&e))?;
        Ok((config, extra))
    }

    /// The effective configuration as TOML, with every token shown as `"<redacted>"`.
    pub fn to_redacted_toml(&self) -> String {
        let mut table = toml::Table::try_from(self).unwrap_or_default();
        let redacted = || toml::Value::String("<redacted>".into());
        if self.token.is_some() {
            table.insert("token".into(), redacted());
        }
        if !self.read_only_tokens.is_empty() {
            let shown = self.read_only_tokens.iter().map(|_| redacted()).collect();
            table.insert("read_only_tokens".into(), toml::Value::Array(shown));
        }
        if !self.scoped_tokens.is_empty() {
            let shown = self
                .scoped_tokens
                .iter()
                .map(|t| {
                    let mut entry = toml::Table::new();
                    entry.insert("token".into(), redacted());
                    entry.insert(
                        "agents".into(),
                        toml::Value::Array(
                            t.agents.iter().cloned().map(toml::Value::String).collect(),
                        ),
                    );
                    entry.insert("read_only".into(), toml::Value::Boolean(t.read_only));
                    toml::Value::Table(entry)
                })
                .collect();
            table.insert("scoped_tokens".into(), toml::Value::Array(shown));
        }
        toml::to_string_pretty(&table).unwrap_or_default()
    }
}

fn interpolate(
    v: &mut toml::Value,
    key: &str,
    path: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<(), ConfigError> {
    match v {
        toml::Value::String(s) => *s = expand(s, key, path, lookup)?,
        toml::Value::Array(items) => {
            for item in items {
                interpolate(item, key, path, lookup)?;
            }
        }
        toml::Value::Table(t) => {
            for (k, item) in t.iter_mut() {
                interpolate(item, &format!("{key}.{k}"), path, lookup)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Expands `${NAME}` and `$$` in one string.
fn expand(
    s: &str,
    key: &str,
    path: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, ConfigError> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(tail) = after.strip_prefix('{') {
            let end = tail.find('}').ok_or_else(|| ConfigError::Unterminated {
                path: path.to_owned(),
                key: key.to_owned(),
            })?;
            let name = &tail[..end];
            let value = lookup(name).ok_or_else(|| ConfigError::MissingVariable {
                path: path.to_owned(),
                name: name.to_owned(),
                key: key.to_owned(),
            })?;
            out.push_str(&value);
            rest = &tail[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "FERRY_TEST_TOKEN").then(|| "from-env".to_owned())
    }

    #[test]
    fn interpolates_strings_and_keeps_defaults() {
        let c = ServerConfig::from_toml_str(
            "bind = \"127.0.0.1:9000\"\ntoken = \"${FERRY_TEST_TOKEN}\"\nallowed_hosts = [\"a-$$-b\"]\nmax_streams = 7\n",
            "test.toml",
            &env,
        )
        .expect("valid");
        assert_eq!(c.bind.port(), 9000);
        assert_eq!(c.token.as_deref(), Some("from-env"));
        assert_eq!(c.allowed_hosts, ["a-$-b"]);
        assert_eq!(c.max_streams, 7);
        assert_eq!(c.max_in_flight, ServerConfig::default().max_in_flight);
    }

    #[test]
    fn errors_name_what_is_wrong() {
        let e = ServerConfig::from_toml_str("token = \"${NOPE}\"", "f.toml", &env)
            .expect_err("missing");
        assert!(
            e.to_string().contains("NOPE") && e.to_string().contains("token"),
            "{e}"
        );
        let e =
            ServerConfig::from_toml_str("max_strems = 1", "f.toml", &env).expect_err("unknown key");
        assert!(e.to_string().contains("max_strems"), "{e}");
        let e = ServerConfig::from_toml_str("token = \"${OPEN\"", "f.toml", &env)
            .expect_err("unterminated");
        assert!(e.to_string().contains("unterminated"), "{e}");
        let e = ServerConfig::from_toml_str("max_streams = \"many\"", "f.toml", &env)
            .expect_err("type");
        assert!(e.to_string().contains("f.toml"), "{e}");
    }

    #[test]
    fn agent_sections_are_set_aside_and_still_interpolated() {
        let text = "bind = \"127.0.0.1:9000\"\n[forms]\nallow_domains = [\"${FERRY_TEST_TOKEN}.example\"]\n";
        let (config, sections) =
            ServerConfig::from_toml_str_with_sections(text, "t.toml", &env, &["forms"])
                .expect("valid");
        assert_eq!(config.bind.port(), 9000);
        assert_eq!(
            sections["forms"]["allow_domains"][0].as_str(),
            Some("from-env.example")
        );
        // Without the section declared, it is an unknown key as before.
        assert!(ServerConfig::from_toml_str(text, "t.toml", &env).is_err());
    }

    #[test]
    fn printing_redacts_the_tokens() {
        let c = ServerConfig {
            token: Some("s3cret".into()),
            read_only_tokens: vec!["r3ader".into()],
            ..ServerConfig::default()
        };
        let shown = c.to_redacted_toml();
        assert!(
            !shown.contains("s3cret") && !shown.contains("r3ader"),
            "{shown}"
        );
        assert!(
            shown.contains("read_only_tokens = [\"<redacted>\"]"),
            "{shown}"
        );
        assert!(shown.contains("token = \"<redacted>\""), "{shown}");
        assert!(shown.contains("max_in_flight = 1024"), "{shown}");
    }
}
