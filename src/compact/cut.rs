//! Where to cut: the first message kept verbatim, moved so that no tool call
//! is separated from its result.

use crate::model::Conversation;

/// The first message kept verbatim when compacting `messages[start..]` and
/// keeping about the last `keep`; `None` when no cut after `start` keeps every
/// tool call with its result. The cut only moves earlier (keeping more).
pub fn cut_point(conv: &Conversation, start: usize, keep: usize) -> Option<usize> {
    let len = conv.messages.len();
    let cut = len.checked_sub(keep)?;
    last_free(&blocked(conv), start, cut)
}

/// `blocked[c]`: cutting before message `c` would split a tool call from its
/// result. One pass over the calls with a difference array, so a call whose
/// result lies far away costs no more than a near one.
pub fn blocked(conv: &Conversation) -> Vec<bool> {
    let len = conv.messages.len();
    // depth[c] counts the (call, result) spans that contain the cut before c.
    let mut delta = vec![0i64; len + 2];
    for step in conv.steps() {
        let Some(result) = step.result_at else {
            continue;
        };
        let (a, b) = if step.call_at.message <= result.message {
            (step.call_at.message, result.message)
        } else {
            (result.message, step.call_at.message)
        };
        if a < b {
            if let Some(d) = delta.get_mut(a + 1) {
                *d += 1;
            }
            if let Some(d) = delta.get_mut(b + 1) {
                *d -= 1;
            }
        }
    }
    let mut depth = 0i64;
    delta
        .iter()
        .take(len + 1)
        .map(|d| {
            depth += d;
            depth > 0
        })
        .collect()
}

/// The latest cut in `start+1 ..= cut` that splits no tool call from its
/// result (`blocked` as from [`blocked`]).
pub fn last_free(blocked: &[bool], start: usize, mut cut: usize) -> Option<usize> {
    while cut > start {
        if !blocked.get(cut).copied().unwrap_or(true) {
            return Some(cut);
        }
        cut -= 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Extra, Layout, Message, Part, PartKind, Role, ToolCall, ToolResult};

    fn msg(role: Role, parts: Vec<Part>) -> Message {
        Message {
            role,
            parts,
            layout: Layout::Parts,
            extra: Extra::new(),
        }
    }

    fn call(id: &str) -> Part {
        Part::from(PartKind::ToolCall(ToolCall {
            id: id.into(),
            name: "bash".into(),
            arguments: "{}".into(),
        }))
    }

    fn result(id: &str) -> Part {
        Part::from(PartKind::ToolResult(ToolResult {
            call_id: id.into(),
            parts: vec![Part::text("out")],
            is_error: false,
        }))
    }

    #[test]
    fn cut_moves_before_a_parallel_call() {
        // user, asst(a,b), tool(a), tool(b), asst(c), tool(c)
        let conv = Conversation {
            system: vec![],
            messages: vec![
                Message::text(Role::User, "task"),
                msg(Role::Assistant, vec![call("a"), call("b")]),
                msg(Role::Tool, vec![result("a")]),
                msg(Role::Tool, vec![result("b")]),
                msg(Role::Assistant, vec![call("c")]),
                msg(Role::Tool, vec![result("c")]),
            ],
            extra: Extra::new(),
        };
        assert_eq!(cut_point(&conv, 0, 1), Some(4));
        assert_eq!(cut_point(&conv, 0, 2), Some(4));
        assert_eq!(cut_point(&conv, 0, 3), Some(1));
        assert_eq!(cut_point(&conv, 0, 4), Some(1));
        assert_eq!(cut_point(&conv, 1, 4), None);
        assert_eq!(cut_point(&conv, 0, 9), None);
    }
}
