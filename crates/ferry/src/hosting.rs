//! `ferry serve` with several agents: the `[[agents]]` entries of the config file, the
//! `exposed` allowlist (and `--expose`), the default agent, and turning each exposed entry
//! into an [`AgentMount`] of its kind.
//!
//! ```toml
//! default_agent = "echo"
//! exposed = ["echo", "script"]          # --expose ID (repeatable) replaces it
//!
//! [[agents]]
//! id = "echo"
//! kind = "echo"
//!
//! [[agents]]
//! id = "script"
//! kind = "exec"                         # the exec agent's settings follow
//! command = ["./script.sh"]
//! max_in_flight = 8                     # this agent's own limits
//! shared_tasks = true                   # its callers see each other's tasks
//! ```

use anyhow::{Context, bail};
use ferry_server::{AgentLimits, AgentMount, ServerConfig};
use std::sync::Arc;

/// The kinds of agent an `[[agents]]` entry may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AgentKind {
    /// The forms agent; its settings are those of the `[forms]` table.
    Forms,
    /// The echo agent; no settings.
    Echo,
    /// The conformance agent; no settings.
    Conformance,
    /// A command run per turn; the settings of `ferry_agents::ExecConfig`.
    Exec,
    /// A gateway to a remote agent; the settings of `ferry_agents::ProxyConfig`.
    Proxy,
}

impl AgentKind {
    /// The name `kind = "…"` gives it.
    fn name(self) -> &'static str {
        match self {
            Self::Forms => "forms",
            Self::Echo => "echo",
            Self::Conformance => "conformance",
            Self::Exec => "exec",
            Self::Proxy => "proxy",
        }
    }

    fn parse(kind: &str) -> anyhow::Result<Self> {
        Ok(match kind {
            "forms" => Self::Forms,
            "echo" => Self::Echo,
            "conformance" => Self::Conformance,
            "exec" => Self::Exec,
            "proxy" => Self::Proxy,
            other => {
                bail!("unknown agent kind {other:?}: one of forms, echo, conformance, exec, proxy")
            }
        })
    }
}

/// One `[[agents]]` entry: who it is, what kind, its own limits, and the rest of its keys
/// (the kind's settings).
#[derive(Debug, Clone)]
pub(crate) struct AgentEntry {
    /// The config file it is written in (for messages).
    file: String,
    pub(crate) id: String,
    pub(crate) kind: AgentKind,
    limits: AgentLimits,
    /// `shared_tasks` of the entry (`None`: the server's).
    shared_tasks: Option<bool>,
    settings: toml::Table,
}

/// The agents of a config file, and which of them are served.
#[derive(Debug, Clone)]
pub(crate) struct Hosting {
    entries: Vec<AgentEntry>,
    /// The ids served; `None`: every entry.
    exposed: Option<Vec<String>>,
    default_agent: Option<String>,
}

/// The top-level keys of the config file this module reads (set aside before the rest is
/// read as a `ServerConfig`).
pub(crate) const SECTIONS: [&str; 3] = ["agents", "exposed", "default_agent"];

impl Hosting {
    /// The hosting settings in the set-aside `sections` of the file `shown`; `None` when it
    /// has no `[[agents]]`.
    pub(crate) fn from_sections(
        sections: &toml::Table,
        shown: &str,
    ) -> anyhow::Result<Option<Self>> {
        let Some(agents) = sections.get("agents") else {
            for key in ["exposed", "default_agent"] {
                if sections.contains_key(key) {
                    bail!("{shown}: {key} needs [[agents]]");
                }
            }
            return Ok(None);
        };
        let agents = agents
            .as_array()
            .with_context(|| format!("{shown}: agents must be an array of tables ([[agents]])"))?;
        let mut entries = Vec::with_capacity(agents.len());
        for (i, agent) in agents.iter().enumerate() {
            let table = agent
                .as_table()
                .with_context(|| format!("{shown}: agents[{i}] must be a table"))?;
            let entry = AgentEntry::from_table(table.clone(), shown)
                .with_context(|| format!("{shown}: agents[{i}]"))?;
            if entries.iter().any(|e: &AgentEntry| e.id == entry.id) {
                bail!("{shown}: agent id {:?} is used twice", entry.id);
            }
            entries.push(entry);
        }
        if entries.is_empty() {
            bail!("{shown}: [[agents]] is empty");
        }
        let exposed = match sections.get("exposed") {
            None => None,
            Some(value) => Some(
                value
                    .clone()
                    .try_into::<Vec<String>>()
                    .with_context(|| format!("{shown}: exposed must be a list of agent ids"))?,
            ),
        };
        let default_agent = match sections.get("default_agent") {
            None => None,
            Some(toml::Value::String(id)) => Some(id.clone()),
            Some(other) => bail!("{shown}: default_agent must be an agent id, not {other}"),
        };
        let hosting = Self {
            entries,
            exposed,
            default_agent,
        };
        hosting.check_ids().with_context(|| shown.to_owned())?;
        Ok(Some(hosting))
    }

    /// `--expose` replaces the file's `exposed` (when given at all).
    pub(crate) fn expose(&mut self, ids: &[String]) -> anyhow::Result<()> {
        if !ids.is_empty() {
            self.exposed = Some(ids.to_vec());
        }
        self.check_ids()
    }

    /// Every id the allowlist and the default name is an entry.
    fn check_ids(&self) -> anyhow::Result<()> {
        let known = |id: &str| self.entries.iter().any(|e| e.id == id);
        let ids = || {
            self.entries
                .iter()
                .map(|e| e.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        for id in self.exposed.iter().flatten() {
            if !known(id) {
                bail!(
                    "exposed names agent {id:?}, which is not configured (agents: {})",
                    ids()
                );
            }
        }
        if let Some(id) = &self.default_agent {
            if !known(id) {
                bail!("default_agent {id:?} is not configured (agents: {})", ids());
            }
            if !self.is_exposed(id) {
                bail!("default_agent {id:?} is not exposed");
            }
        }
        Ok(())
    }

    /// Scoped tokens name configured agents (a typo would silently lock a caller out).
    pub(crate) fn check_scoped_tokens(&self, config: &ServerConfig) -> anyhow::Result<()> {
        for token in &config.scoped_tokens {
            for id in &token.agents {
                if !self.entries.iter().any(|e| e.id == *id) {
                    bail!("a scoped token names agent {id:?}, which is not configured");
                }
            }
        }
        Ok(())
    }

    fn is_exposed(&self, id: &str) -> bool {
        self.exposed
            .as_ref()
            .is_none_or(|ids| ids.iter().any(|e| e == id))
    }

    /// The entries to serve, in the file's order.
    pub(crate) fn exposed(&self) -> impl Iterator<Item = &AgentEntry> {
        self.entries.iter().filter(|e| self.is_exposed(&e.id))
    }

    /// The agent also served at the root.
    pub(crate) fn default_agent(&self) -> Option<&str> {
        self.default_agent.as_deref()
    }

    /// The entries as the file would hold them, for `--print-config` (secrets redacted).
    pub(crate) fn to_redacted_toml(&self) -> anyhow::Result<String> {
        let mut top = toml::Table::new();
        if let Some(id) = &self.default_agent {
            top.insert("default_agent".into(), id.clone().into());
        }
        if let Some(ids) = &self.exposed {
            top.insert("exposed".into(), toml::Value::try_from(ids)?);
        }
        let agents = self
            .entries
            .iter()
            .map(|e| toml::Value::Table(e.redacted_table()))
            .collect();
        top.insert("agents".into(), toml::Value::Array(agents));
        Ok(toml::to_string_pretty(&top)?)
    }
}

impl AgentEntry {
    fn from_table(mut table: toml::Table, file: &str) -> anyhow::Result<Self> {
        let id = match table.remove("id") {
            Some(toml::Value::String(id)) => id,
            Some(other) => bail!("id must be a string, not {other}"),
            None => bail!("an agent needs an id"),
        };
        ferry_server::check_agent_id(&id)?;
        let kind = match table.remove("kind") {
            Some(toml::Value::String(kind)) => AgentKind::parse(&kind)?,
            Some(other) => bail!("agent {id:?}: kind must be a string, not {other}"),
            None => bail!("agent {id:?} needs a kind"),
        };
        let limit = |table: &mut toml::Table, key: &str| -> anyhow::Result<Option<usize>> {
            match table.remove(key) {
                None => Ok(None),
                Some(toml::Value::Integer(n)) if n > 0 => Ok(Some(usize::try_from(n)?)),
                Some(other) => bail!("agent {id:?}: {key} must be a positive integer, not {other}"),
            }
        };
        let limits = AgentLimits {
            max_in_flight: limit(&mut table, "max_in_flight")?,
            max_streams: limit(&mut table, "max_streams")?,
        };
        let shared_tasks = match table.remove("shared_tasks") {
            None => None,
            Some(toml::Value::Boolean(shared)) => Some(shared),
            Some(other) => bail!("agent {id:?}: shared_tasks must be true or false, not {other}"),
        };
        if matches!(kind, AgentKind::Echo | AgentKind::Conformance) && !table.is_empty() {
            let keys: Vec<&String> = table.keys().collect();
            bail!(
                "agent {id:?}: the {} agent has no settings, found {keys:?}",
                kind.name()
            );
        }
        Ok(Self {
            file: file.to_owned(),
            id,
            kind,
            limits,
            shared_tasks,
            settings: table,
        })
    }

    /// The entry as written, its secrets (a proxy's `token`) shown as `<redacted>`.
    fn redacted_table(&self) -> toml::Table {
        let mut table = self.settings.clone();
        if table.contains_key("token") {
            table.insert("token".into(), "<redacted>".into());
        }
        let mut out = toml::Table::new();
        out.insert("id".into(), self.id.clone().into());
        out.insert(
            "kind".into(),
            format!("{:?}", self.kind).to_lowercase().into(),
        );
        for (key, value) in [
            ("max_in_flight", self.limits.max_in_flight),
            ("max_streams", self.limits.max_streams),
        ] {
            if let Some(n) = value.and_then(|n| i64::try_from(n).ok()) {
                out.insert(key.into(), n.into());
            }
        }
        if let Some(shared) = self.shared_tasks {
            out.insert("shared_tasks".into(), shared.into());
        }
        out.extend(table);
        out
    }

    /// The entry's settings as the kind's configuration type.
    fn settings<T: serde::de::DeserializeOwned>(&self) -> anyhow::Result<T> {
        toml::Value::Table(self.settings.clone())
            .try_into()
            .with_context(|| format!("{}: agent {:?} ({})", self.file, self.id, self.kind.name()))
    }

    /// The forms agent's settings of this entry (its keys are those of `[forms]`).
    pub(crate) fn forms_file(&self) -> anyhow::Result<crate::forms_args::FormsFile> {
        self.settings()
    }

    /// The mount of a kind that needs nothing from the rest of the command line: echo,
    /// conformance, exec, proxy (which fetches and verifies the remote card now).
    pub(crate) async fn mount(&self) -> anyhow::Result<AgentMount> {
        let executor: Arc<dyn ferry_agent::AgentExecutor> = match self.kind {
            AgentKind::Echo => Arc::new(ferry_agents::EchoAgent),
            AgentKind::Conformance => Arc::new(ferry_agents::ConformanceAgent::default()),
            AgentKind::Exec => Arc::new(exec_agent(self.settings()?)?),
            AgentKind::Proxy => Arc::new(proxy_agent(self.settings()?).await?),
            AgentKind::Forms => bail!("agent {:?}: a forms agent is built by `serve`", self.id),
        };
        Ok(self.mount_of(executor))
    }

    /// `executor` mounted under this entry's id with its limits and task sharing.
    pub(crate) fn mount_of(&self, executor: Arc<dyn ferry_agent::AgentExecutor>) -> AgentMount {
        let mount = AgentMount::new(self.id.clone(), executor).limits(self.limits);
        match self.shared_tasks {
            Some(shared) => mount.shared_tasks(shared),
            None => mount,
        }
    }
}

/// The exec agent of `config`, with its start-up note.
pub(crate) fn exec_agent(
    config: ferry_agents::ExecConfig,
) -> anyhow::Result<ferry_agents::ExecAgent> {
    let agent = ferry_agents::ExecAgent::new(config).context("the exec agent")?;
    tracing::info!(command = ?agent.config().command, "exec agent");
    Ok(agent)
}

/// The proxy agent of `config`: the remote card is fetched and verified now, so a pin that
/// does not match stops the server before it listens.
pub(crate) async fn proxy_agent(
    config: ferry_agents::ProxyConfig,
) -> anyhow::Result<ferry_agents::ProxyAgent> {
    let url = config.url.clone();
    let agent = ferry_agents::ProxyAgent::connect(config)
        .await
        .with_context(|| format!("the proxy to {url}"))?;
    tracing::info!(remote = %url, name = %agent.remote_card().name, "proxy agent: remote card verified");
    Ok(agent)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosting(text: &str) -> anyhow::Result<Option<Hosting>> {
        let table: toml::Table = text.parse()?;
        Hosting::from_sections(&table, "test.toml")
    }

    #[test]
    fn entries_exposed_and_default() {
        let h = hosting(
            r#"
            default_agent = "echo"
            exposed = ["echo", "run"]
            [[agents]]
            id = "echo"
            kind = "echo"
            max_in_flight = 4
            [[agents]]
            id = "run"
            kind = "exec"
            command = ["/bin/cat"]
            [[agents]]
            id = "tck"
            kind = "conformance"
            "#,
        )
        .expect("valid")
        .expect("agents");
        let ids: Vec<&str> = h.exposed().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["echo", "run"]);
        assert_eq!(h.default_agent(), Some("echo"));
        assert_eq!(h.entries[0].limits.max_in_flight, Some(4));
        let mut h = h;
        h.expose(&["tck".into(), "echo".into()]).expect("known ids");
        let ids: Vec<&str> = h.exposed().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["echo", "tck"], "--expose replaces the file's list");
        let e = h.expose(&["nobody".into()]).expect_err("unknown");
        assert!(e.to_string().contains("\"nobody\""), "{e}");
    }

    #[test]
    fn mistakes_are_errors_that_say_where() {
        let cases = [
            ("[[agents]]\nkind = \"echo\"", "needs an id"),
            ("[[agents]]\nid = \"Echo\"\nkind = \"echo\"", "is not valid"),
            (
                "[[agents]]\nid = \"a\"\nkind = \"robot\"",
                "unknown agent kind",
            ),
            (
                "[[agents]]\nid = \"a\"\nkind = \"echo\"\ncolour = 1",
                "has no settings",
            ),
            (
                "[[agents]]\nid = \"a\"\nkind = \"echo\"\nmax_in_flight = 0",
                "positive integer",
            ),
            (
                "[[agents]]\nid = \"a\"\nkind = \"echo\"\n[[agents]]\nid = \"a\"\nkind = \"echo\"",
                "used twice",
            ),
            ("exposed = [\"a\"]", "needs [[agents]]"),
            (
                "default_agent = \"b\"\n[[agents]]\nid = \"a\"\nkind = \"echo\"",
                "not configured",
            ),
            (
                "default_agent = \"a\"\nexposed = [\"b\"]\n[[agents]]\nid = \"a\"\nkind = \"echo\"\n[[agents]]\nid = \"b\"\nkind = \"echo\"",
                "not exposed",
            ),
        ];
        for (text, expected) in cases {
            let e = format!("{:#}", hosting(text).expect_err(text));
            assert!(e.contains(expected), "{text}: {e}");
        }
    }

    #[test]
    fn print_config_redacts_a_proxy_token() {
        let h = hosting(
            "[[agents]]\nid = \"gw\"\nkind = \"proxy\"\nurl = \"http://127.0.0.1:1\"\ntoken = \"s3cret\"",
        )
        .expect("valid")
        .expect("agents");
        let shown = h.to_redacted_toml().expect("toml");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }
}
