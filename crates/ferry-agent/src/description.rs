//! What an agent says about itself; the server turns it into the agent card.

use ferry_proto::{AgentExtension, AgentSkill};

/// The agent's part of the agent card. The server adds interfaces, capabilities it implements
/// itself (push, extended card) and security.
#[derive(Debug, Clone)]
pub struct AgentDescription {
    /// Card `name`.
    pub name: String,
    /// Card `description`.
    pub description: String,
    /// Card `version` (the agent's own version).
    pub version: String,
    /// Card `skills`.
    pub skills: Vec<AgentSkill>,
    /// Card `defaultInputModes`.
    pub input_modes: Vec<String>,
    /// Card `defaultOutputModes`.
    pub output_modes: Vec<String>,
    /// Whether the agent streams (`capabilities.streaming`).
    pub streaming: bool,
    /// Extensions the agent understands (`capabilities.extensions`).
    pub extensions: Vec<AgentExtension>,
    /// Skills shown only in the extended agent card, to callers holding the server's token.
    /// The server serves that card (and declares `capabilities.extendedAgentCard`) only when
    /// a token is set: without one nobody is authenticated to see it.
    pub extended_skills: Vec<AgentSkill>,
}

impl AgentDescription {
    /// A description with text in and out, streaming on, and one skill named after the agent.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        let name = name.into();
        let description = description.into();
        Self {
            skills: vec![AgentSkill {
                id: name.to_lowercase().replace(' ', "-"),
                name: name.clone(),
                description: description.clone(),
                tags: vec![name.to_lowercase()],
                examples: Vec::new(),
                input_modes: Vec::new(),
                output_modes: Vec::new(),
                security_requirements: Vec::new(),
            }],
            name,
            description,
            version: env!("CARGO_PKG_VERSION").to_owned(),
            input_modes: vec!["text/plain".into(), "application/json".into()],
            output_modes: vec!["text/plain".into(), "application/json".into()],
            streaming: true,
            extensions: Vec::new(),
            extended_skills: Vec::new(),
        }
    }

    /// Sets the skills of the extended agent card (see [`AgentDescription::extended_skills`]).
    pub fn with_extended_skills(mut self, skills: Vec<AgentSkill>) -> Self {
        self.extended_skills = skills;
        self
    }

    /// Replaces the skills.
    pub fn with_skills(mut self, skills: Vec<AgentSkill>) -> Self {
        self.skills = skills;
        self
    }

    /// Sets the agent's version.
    pub fn with_version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }
}
