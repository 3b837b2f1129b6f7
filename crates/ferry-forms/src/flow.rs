//! A task's way through a multi-step form, as its pending submit keeps it between turns
//! (how a turn goes through the steps is `turn::steps`).

use crate::report::StepPassed;
use crate::value::RequestedValue;

/// A task's way through a multi-step form: the steps passed, and the values kept for later
/// steps. Kept with the task's pending submit between turns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Flow {
    /// The steps passed, oldest first.
    pub steps: Vec<StepPassed>,
    /// Values no field of the steps so far took.
    pub later: Vec<(String, RequestedValue)>,
    /// Steps passed in this turn.
    pub(crate) passed_now: usize,
}
