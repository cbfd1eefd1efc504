# TraceLite: `make demo` (set-up + sample replay) and `make test` (set-up + every test).
# Both install what they need on a fresh Debian machine; CI (.ci/run) runs `make lint` and `make test`.
# On a fresh 2-core machine `make demo` takes about 8 minutes (5 of them compiling
# wasm-bindgen-cli, once) and `make test` about 16; each long step says so when it starts.
SHELL := /bin/bash
WASM_BINDGEN_VERSION := $(shell awk '/^name = "wasm-bindgen"$$/{getline; gsub(/[^0-9.]/,""); print; exit}' Cargo.lock)
TOOLS := $(CURDIR)/.tools
WASM_BINDGEN := $(TOOLS)/bin/wasm-bindgen
WASM := target/wasm32-unknown-unknown/release/tracelite.wasm
SAMPLE := tests/fixtures/sample-trajectory.json
## The demo: a 40-step session written for the project (tests/fixtures/record-demo.py) at a
## 16,000-token context window, which it fills, so every stage acts (the playground's sample too),
## for gpt-5 (a model that reads images: the session names none, and `optical.enabled: 'auto'`
## sends snapshots only to such a model).
DEMO := tests/fixtures/demo-session.json
DEMO_ARGS := --budget 16000 --model gpt-5

.PHONY: setup system-packages wasm-target deps pkg demo test test-rust test-js lint playground bench bench-windows bench-edge bench-ecosystems clean-pkg

## setup: everything `make test` needs, each part installed only when missing: the system
## packages (chromium, tesseract-ocr, redis-server: apt-get, through sudo when not root) and `deps`.
setup: system-packages deps

system-packages:
	@.ci/setup

## deps: what `make demo` needs: the wasm target, the wasm-bindgen CLI pinned to Cargo.lock, npm packages.
deps: wasm-target $(WASM_BINDGEN) node_modules/.installed

wasm-target:
	@rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown

$(WASM_BINDGEN): Cargo.lock
	@if [ -x "$@" ] && "$@" --version | grep -q " $(WASM_BINDGEN_VERSION)$$"; then touch "$@"; else \
	  echo "make: compiling wasm-bindgen-cli $(WASM_BINDGEN_VERSION) into .tools/ (once; about 5 minutes on 2 cores)"; \
	  cargo install wasm-bindgen-cli --version $(WASM_BINDGEN_VERSION) --root $(TOOLS) --force; fi

node_modules/.installed: pkg-config/dev/package.json pkg-config/dev/package-lock.json
	@echo "make: installing the npm packages of pkg-config/dev (once)"
	cd pkg-config/dev && npm ci --no-audit --no-fund
	ln -sfn pkg-config/dev/node_modules node_modules
	touch $@

## pkg: the npm package in pkg/, laid out like pkg-config/ (the published manifest
## pkg-config/package.json, entries/ per host, core/, adapters/<name>/ without their
## tests, internal/, cli/, examples/, its own README pkg-config/README.md, the reference pkg-config/REFERENCE.md, LICENSE)
## plus wasm/ (the wasm-bindgen output). An adapter ships its *.js and *.d.ts, not its *.test.mjs.
ADAPTERS := ai-sdk langchain openai-agents proxy kv-store do-store file-store redis-store
pkg: deps
	@echo "make: building the wasm (release profile, LTO; cargo prints each crate)"
	cargo build --lib --target wasm32-unknown-unknown --release
	rm -rf pkg && mkdir -p pkg
	$(WASM_BINDGEN) --target web --remove-name-section --remove-producers-section --out-dir pkg/wasm --out-name tracelite $(WASM)
	cp -r pkg-config/entries pkg-config/core pkg-config/internal pkg-config/cli pkg/
	for a in $(ADAPTERS); do mkdir -p pkg/adapters/$$a && cp pkg-config/adapters/$$a/*.js pkg-config/adapters/$$a/*.d.ts pkg/adapters/$$a/; done
	cp pkg-config/package.json pkg-config/README.md pkg-config/REFERENCE.md LICENSE pkg/
	cp -r pkg-config/examples pkg/
	@ls pkg/wasm/tracelite_bg.wasm >/dev/null && printf 'wasm: %s bytes raw, %s bytes gzip\n' \
	  $$(stat -c %s pkg/wasm/tracelite_bg.wasm) $$(gzip -9c pkg/wasm/tracelite_bg.wasm | wc -c)

## demo: replay the demo session and print the per-step table, the totals and each stage's saving.
demo: pkg
	@echo "make: replaying $(DEMO) ($(DEMO_ARGS))"
	node pkg/cli/index.mjs replay $(DEMO) $(DEMO_ARGS)

## test: every Rust and JS test. Without ../shared/traces (or TRACELITE_TRACES) the tests that
## read the real trajectories are reported ignored (cargo) or skipped (node:test), with the reason.
test: setup pkg test-rust test-js

test-rust: system-packages
	@echo "make: Rust tests (compiling the test binaries takes most of it; cargo prints each suite)"
	cargo test --all-targets --no-fail-fast
	cargo test --doc

test-js: system-packages pkg
	@echo "make: JS, browser, edge and OCR tests (node:test prints each test as it ends)"
	node --test --test-reporter=spec tests/js/ pkg-config/adapters/

## bench: evaluation on ../shared/traces (not part of `make test`): writes bench/REPORT.md,
## bench/report.json and bench/chart.svg. `make bench BENCH_ARGS=--quick` for a fast subset.
bench: pkg
	node bench/run.mjs $(BENCH_ARGS)

## bench-edge: the Worker example in workerd (Miniflare) under autocannon at 1, 4, 16, 64
## connections against a pass-through worker, loopback only, at most 60 s of load: prints the
## table, writes bench/edge-load.json and bench/EDGE-LOAD.md; then compress CPU per request,
## warm and cold, in Node and workerd against parse + emit only (bench/EDGE-CPU.md, edge-cpu.json).
bench-edge: pkg
	node bench/edge-load.mjs --report bench/EDGE-LOAD.md $(BENCH_EDGE_ARGS)
	node bench/edge-cpu.mjs --report bench/EDGE-CPU.md --json bench/edge-cpu.json

## bench-ecosystems: spills each real output of tests/fixtures/ecosystems/ (vitest, jest, go test, …;
## re-recorded by tests/fixtures/record-ecosystems.py) at a 16,000-token budget and writes the
## per-tool recall of failing tests, their reasons and error locations to bench/ECOSYSTEMS.md.
bench-ecosystems:
	TRACELITE_ECOSYSTEMS_REPORT=$(CURDIR)/bench/ECOSYSTEMS.md cargo test --test spill_ecosystems -- --nocapture

## bench-windows: recent window 3 vs 5 per provider, tokens saved stage by stage,
## per-observation wasm cost: writes bench/WINDOWS.md and bench/windows.json.
bench-windows: pkg
	node bench/windows.mjs $(BENCH_ARGS)

lint: wasm-target
	rustup component add rustfmt clippy
	cargo fmt --check
	cargo clippy --all-targets -- -D warnings
	cargo clippy --lib --target wasm32-unknown-unknown -- -D warnings

## playground: build the package and serve www/ (pkg/ at /pkg/, POST /ocr: tesseract for the step view's snapshot legibility) on http://127.0.0.1:$(PORT)/
PORT ?= 8080
playground: pkg
	node www/serve.mjs --port $(PORT)
