//! What extensions hand each turn of the agent.

use ferry_agent::TurnData;

/// Puts data into every turn's [`TurnData`] (a browser endpoint registry's snapshot, …). An
/// extension of the server provides one; the core calls it when a turn starts and knows
/// nothing else of the extension.
pub trait TurnDataSource: Send + Sync + 'static {
    /// Adds this source's values for one turn (a snapshot: later changes must not reach it).
    fn fill(&self, data: &mut TurnData);
}
