//! Tasks in a session: each message the user writes starts a task. In a
//! session of several tasks a compaction of a request under
//! `compact.taskFirst` tokens takes the earlier tasks only (their outputs
//! are what the agent is least likely to need again) and leaves the current
//! task's outputs as they are while the window has room; above it (and with
//! `taskFirst` 0) it cuts as usual. What its compactions carry forward
//! (tool-call log, summary) gets `compact.severalTasksShare` of its shares.

use super::cut::last_free;
use super::prior::is_user_authored;
use crate::config::Config;
use crate::model::Conversation;

/// Whether `conv` is a session of several tasks: the user wrote more than
/// one message (kept first by earlier compactions, or still in place).
pub fn several(conv: &Conversation) -> bool {
    conv.messages
        .iter()
        .filter(|m| is_user_authored(m))
        .nth(1)
        .is_some()
}

/// The budget share a compaction of `conv` gives to what it carries
/// forward (`compact.callLogShare`, `compact.summaryShare`): `share`, times
/// `compact.severalTasksShare` in a session of several tasks.
pub fn carried_share(conv: &Conversation, config: &Config, share: f64) -> f64 {
    if several(conv) {
        share * config.compact.several_tasks_share
    } else {
        share
    }
}

/// What a compaction of `messages[start..]` may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// One task (or over the threshold): everything but the kept tail.
    Tail,
    /// Several tasks: the messages before this one, where the current task
    /// starts (or the latest cut before it that keeps every tool call with
    /// its result).
    EarlierTasks(usize),
    /// Several tasks, and the history since `start` is all the current
    /// task's: nothing to compact under the threshold.
    CurrentTask,
}

/// The scope of a compaction of `conv` from `start` (the first message
/// after what earlier compactions left), `blocked` as from
/// [`super::cut::blocked`], for a request of `tokens` under the task-first
/// `limit` (`compact.taskFirst`).
pub fn scope(
    conv: &Conversation,
    start: usize,
    blocked: &[bool],
    tokens: u64,
    limit: u64,
) -> Scope {
    if tokens > limit {
        return Scope::Tail;
    }
    let mut users = conv
        .messages
        .iter()
        .enumerate()
        .filter(|(_, m)| is_user_authored(m))
        .map(|(i, _)| i);
    let (Some(_first), Some(latest)) = (users.next(), users.next_back()) else {
        return Scope::Tail;
    };
    match last_free(blocked, start, latest) {
        Some(cut) => Scope::EarlierTasks(cut),
        None => Scope::CurrentTask,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compact::cut::blocked;
    use crate::model::{Extra, Layout, Message, Part, PartKind, Role, ToolCall, ToolResult};

    fn call(id: &str) -> Message {
        Message {
            role: Role::Assistant,
            parts: vec![Part::from(PartKind::ToolCall(ToolCall {
                id: id.into(),
                name: "bash".into(),
                arguments: "{}".into(),
            }))],
            layout: Layout::Parts,
            extra: Extra::new(),
        }
    }

    fn result(id: &str) -> Message {
        Message {
            role: Role::Tool,
            parts: vec![Part::from(PartKind::ToolResult(ToolResult {
                call_id: id.into(),
                parts: vec![Part::text("out")],
                is_error: false,
            }))],
            layout: Layout::Parts,
            extra: Extra::new(),
        }
    }

    /// `tasks` tasks of `steps` tool calls each.
    fn session(tasks: usize, steps: usize) -> Conversation {
        let mut conv = Conversation::default();
        for t in 0..tasks {
            conv.messages
                .push(Message::text(Role::User, format!("task {t}")));
            for s in 0..steps {
                let id = format!("c{t}_{s}");
                conv.messages.push(call(&id));
                conv.messages.push(result(&id));
            }
        }
        conv
    }

    #[test]
    fn one_task_cuts_the_tail_and_keeps_its_shares() {
        let conv = session(1, 6);
        assert_eq!(scope(&conv, 0, &blocked(&conv), 10, 100), Scope::Tail);
        let config = Config::default();
        assert!(!several(&conv));
        assert_eq!(carried_share(&conv, &config, 0.04), 0.04);
        let two = session(2, 1);
        assert!(several(&two));
        assert_eq!(carried_share(&two, &config, 0.04), 0.02);
    }

    #[test]
    fn several_tasks_compact_the_earlier_ones_first() {
        let conv = session(3, 4);
        let b = blocked(&conv);
        // The third task starts at message 18.
        assert_eq!(scope(&conv, 0, &b, 10, 100), Scope::EarlierTasks(18));
        // What a compaction left before it: the current task only.
        assert_eq!(scope(&conv, 18, &b, 10, 100), Scope::CurrentTask);
        assert_eq!(scope(&conv, 20, &b, 100, 100), Scope::CurrentTask);
        // Over the limit (or with none): the usual cut.
        assert_eq!(scope(&conv, 0, &b, 101, 100), Scope::Tail);
        assert_eq!(scope(&conv, 0, &b, 10, 0), Scope::Tail);
    }
}
