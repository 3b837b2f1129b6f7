//! Proto enums: full value names out, names or integers in.

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

macro_rules! proto_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $num:literal => $text:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)+
        }

        impl $name {
            /// Every value, in proto number order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The proto value name, as it goes on the wire.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text,)+ }
            }

            /// The proto value number.
            pub const fn number(self) -> i32 {
                match self { $($name::$variant => $num,)+ }
            }

            /// Looks a value up by its proto name.
            pub fn from_name(s: &str) -> Option<Self> {
                match s { $($text => Some($name::$variant),)+ _ => None }
            }

            /// Looks a value up by its proto number.
            pub fn from_number(n: i64) -> Option<Self> {
                match n { $($num => Some($name::$variant),)+ _ => None }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        write!(f, "a {} name or number", stringify!($name))
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> {
                        $name::from_name(v).ok_or_else(|| E::custom(format!(
                            "unknown {} value {:?}", stringify!($name), v)))
                    }
                    fn visit_i64<E: de::Error>(self, v: i64) -> Result<$name, E> {
                        $name::from_number(v).ok_or_else(|| E::custom(format!(
                            "unknown {} number {}", stringify!($name), v)))
                    }
                    fn visit_u64<E: de::Error>(self, v: u64) -> Result<$name, E> {
                        self.visit_i64(i64::try_from(v).unwrap_or(i64::MAX))
                    }
                }
                d.deserialize_any(V)
            }
        }
    };
}

proto_enum! {
    /// The lifecycle state of a task (spec §4.3).
    TaskState {
        /// Unknown; never emitted. As a ListTasks filter it means "any state".
        #[default]
        Unspecified = 0 => "TASK_STATE_UNSPECIFIED",
        /// Accepted, not started.
        Submitted = 1 => "TASK_STATE_SUBMITTED",
        /// Being worked on.
        Working = 2 => "TASK_STATE_WORKING",
        /// Finished successfully (terminal).
        Completed = 3 => "TASK_STATE_COMPLETED",
        /// Finished with an error (terminal).
        Failed = 4 => "TASK_STATE_FAILED",
        /// Canceled before completion (terminal).
        Canceled = 5 => "TASK_STATE_CANCELED",
        /// Waiting for the client's input (interrupted).
        InputRequired = 6 => "TASK_STATE_INPUT_REQUIRED",
        /// The agent declined the task (terminal).
        Rejected = 7 => "TASK_STATE_REJECTED",
        /// Waiting for authorization (interrupted).
        AuthRequired = 8 => "TASK_STATE_AUTH_REQUIRED",
    }
}

impl TaskState {
    /// Terminal tasks are immutable: no more messages, no cancel, no subscribe.
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Failed | Self::Canceled | Self::Rejected
        )
    }

    /// Interrupted tasks wait for the client; a blocking send returns at them.
    pub const fn is_interrupted(self) -> bool {
        matches!(self, Self::InputRequired | Self::AuthRequired)
    }
}

proto_enum! {
    /// Who sent a message.
    Role {
        /// Invalid on the wire.
        #[default]
        Unspecified = 0 => "ROLE_UNSPECIFIED",
        /// Client to server.
        User = 1 => "ROLE_USER",
        /// Server to client.
        Agent = 2 => "ROLE_AGENT",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_parse() {
        let s: TaskState = serde_json::from_str("\"TASK_STATE_CANCELED\"").expect("name");
        assert_eq!(s, TaskState::Canceled);
        let s: TaskState = serde_json::from_str("6").expect("number");
        assert_eq!(s, TaskState::InputRequired);
        assert!(serde_json::from_str::<TaskState>("\"completed\"").is_err());
        assert!(serde_json::from_str::<TaskState>("42").is_err());
        assert_eq!(
            serde_json::to_string(&Role::Agent).expect("ser"),
            "\"ROLE_AGENT\""
        );
    }
}
