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
    /// Whether the agent keeps a conversation's state in its own process between turns (a
    /// browser session): then, with several replicas of the server on one store, every turn
    /// of a conversation runs on the replica that holds it (another replica forwards it
    /// there), and a turn on a replica that took a conversation over from a dead one carries
    /// [`ConversationMoved`]. False by default: the store holds all the state a turn needs.
    pub keeps_conversations: bool,
}

/// In a turn's [`crate::TurnData`] when its conversation was held by another replica of the
/// server that is gone (stopped, crashed or frozen): whatever the agent kept of the
/// conversation in that process is lost, and this turn starts it afresh here. Only agents
/// that declare [`AgentDescription::keeps_conversations`] get it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConversationMoved {
    /// The id of the replica that held the conversation.
    pub from_replica: String,
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
            keeps_conversations: false,
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

    /// Declares that the agent keeps conversations in its process (see
    /// [`AgentDescription::keeps_conversations`]).
    pub fn keeping_conversations(mut self) -> Self {
        self.keeps_conversations = true;
        self
    }

    /// Sets the agent's version.
    pub fn with_version(mut self, version: impl Into<String>) -> Self {
        self.version = version.into();
        self
    }
}
