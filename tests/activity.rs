//! One reader of agent activity: the phase stage, compaction and the
//! `TraceLite` controller give the same answers on every shared trace.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

mod common;

use tracelite::activity;
use tracelite::compact::trigger::step_activities;
use tracelite::controller::TraceLite;
use tracelite::model::PartKind;
use tracelite::phase::find_edits;
use tracelite::Config;

#[test]
#[cfg_attr(tracelite_no_traces, ignore = "needs ../shared/traces")]
fn phase_compaction_and_the_controller_agree_on_every_shared_trace() {
    let files = common::required_trace_files();
    let config = Config::default();
    let mut phase_starts = 0;
    let mut creations_before_start = 0;
    for path in &files {
        let trajectory = common::load_trace(path);
        let conv = trajectory.conversation_at(trajectory.steps.len()).unwrap();
        let name = path.display();

        // Phase stage: its edit steps and where its phase begins.
        let edits = find_edits(&conv, &config.phase);
        let phase_start = edits
            .iter()
            .find(|e| e.counts(&config.phase))
            .map(|e| e.step);

        // Compaction: the steps it counts as edits, and the paths.
        let steps = step_activities(&conv, &config);
        let compact_edits: Vec<usize> = steps
            .iter()
            .filter(|s| s.activity.edited())
            .map(|s| s.index + 1)
            .collect();
        let phase_edits: Vec<usize> = edits
            .iter()
            .filter(|e| e.failed != Some(true))
            .map(|e| e.step)
            .collect();
        assert_eq!(compact_edits, phase_edits, "{name}: edit steps differ");
        for e in &edits {
            let s = &steps[e.step - 1];
            let first = s.activity.edited_paths().into_iter().next();
            let target = e
                .action
                .target
                .clone()
                .unwrap_or_else(|| first.clone().unwrap());
            assert_eq!(
                first,
                Some(target),
                "{name}: step {} edits another path",
                e.step
            );
        }

        // The controller, fed one step at a time.
        let mut session = TraceLite::new(config.clone());
        let mut session_start = None;
        for (i, s) in conv.steps().iter().enumerate() {
            let output = s.result.map(|r| r.text()).unwrap_or_default();
            let summary = session.process_step(s.call.clone(), output).unwrap();
            assert_eq!(
                summary.edit.is_some(),
                steps[i].activity.edited(),
                "{name}: step {} edit differs",
                i + 1
            );
            if summary.changes_existing && session_start.is_none() {
                session_start = Some(i + 1);
            }
        }
        assert_eq!(session_start, phase_start, "{name}: phase start differs");
        assert_eq!(session.telemetry().phase_start_step, phase_start, "{name}");
        if let Some(start) = phase_start {
            phase_starts += 1;
            // Creating a file never starts the phase.
            let call = conv.steps()[start - 1].call.clone();
            assert!(
                !call.arguments.contains("\"command\":\"create\""),
                "{name}: {call:?}"
            );
            creations_before_start += edits.iter().filter(|e| e.step < start).count();
        }
        // Every step is read once, in call order.
        let calls = conv
            .messages
            .iter()
            .flat_map(|m| &m.parts)
            .filter(|p| matches!(p.kind, PartKind::ToolCall(_)))
            .count();
        assert_eq!(activity::read(&conv, &config.phase).len(), calls, "{name}");
    }
    // The shared traces change existing code in most runs, and create or edit
    // their own scripts first in many of them.
    assert!(
        phase_starts * 10 >= files.len() * 8,
        "{phase_starts} of {}",
        files.len()
    );
    assert!(creations_before_start > 0);
}
