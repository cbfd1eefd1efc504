//! Tells the integration tests whether the shared trajectories are there.
//!
//! The tests that read `../shared/traces` (or the directory `TRACELITE_TRACES`
//! names) carry `#[cfg_attr(tracelite_no_traces, ignore = "…")]`: without the
//! directory this script sets `cfg(tracelite_no_traces)` and cargo's runner
//! reports them ignored, with the reason, instead of passing them unchecked.
//!
//! Cargo reruns this script when `TRACELITE_TRACES` changes or, while the
//! directory exists, when anything in it changes (its removal included). A
//! missing directory cannot be watched without rebuilding the crate on every
//! run, so traces added after a build without them count once
//! `TRACELITE_TRACES` is set or after `touch build.rs`.

use std::path::PathBuf;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(tracelite_no_traces)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=TRACELITE_TRACES");
    let root = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    // Resolved as tests/common/mod.rs does: the tests run in the package root.
    let dir = match std::env::var_os("TRACELITE_TRACES") {
        Some(dir) if dir.is_empty() => PathBuf::new(),
        Some(dir) => root.join(dir),
        None => root.join("../shared/traces"),
    };
    if dir.is_dir() {
        println!("cargo::rerun-if-changed={}", dir.display());
    } else {
        println!("cargo::rustc-cfg=tracelite_no_traces");
    }
}
