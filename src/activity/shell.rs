//! A small shell reader: enough of POSIX sh to find commands that write files
//! (`sed -i`, `cat > f`, heredocs, `tee`, `echo … > f`, `git apply`, `patch`,
//! Python `open(…, 'w')`) without being fooled by quoted text (`grep "sed -i"`)
//! or output captures (`pytest > log.txt`, `2>&1`, `> /dev/null`).

use super::edit_kind::EditKind;

/// One simple command: its words, output redirections and heredoc bodies.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Command {
    /// Words with quotes removed.
    pub words: Vec<String>,
    /// Files that stdout goes to (`>`, `>>`, `>|`, `&>`), in order.
    pub stdout_to: Vec<String>,
    /// Bodies of heredocs and here-strings feeding the command.
    pub heredocs: Vec<String>,
}

impl Command {
    /// The program name: first word that is not an assignment or a wrapper
    /// (`sudo`, `env`, `time`, …), without its directory.
    pub fn program(&self) -> Option<(usize, &str)> {
        self.words.iter().enumerate().find_map(|(i, w)| {
            let is_assignment = w
                .split_once('=')
                .is_some_and(|(k, _)| !k.is_empty() && k.bytes().all(is_name_byte));
            let wrapper = matches!(
                w.as_str(),
                "sudo" | "env" | "time" | "nohup" | "command" | "exec" | "builtin"
            );
            (!is_assignment && !wrapper).then(|| (i, w.rsplit('/').next().unwrap_or(w)))
        })
    }

    /// Arguments after the program name.
    pub fn args(&self) -> &[String] {
        match self.program() {
            Some((i, _)) => self.words.get(i + 1..).unwrap_or(&[]),
            None => &[],
        }
    }
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Splits a shell script into simple commands (pipelines, `&&`, `||`, `;`,
/// newlines and `&` all separate commands). Never fails: unterminated quotes
/// or heredocs end at the end of the text.
pub fn parse(script: &str) -> Vec<Command> {
    Reader {
        chars: script.chars().collect(),
        pos: 0,
    }
    .commands()
}

struct Reader {
    chars: Vec<char>,
    pos: usize,
}

enum Redirect {
    /// Where stdout goes.
    Stdout,
    /// Another descriptor to a file (`2>`), or input (`<`): the target is read and dropped.
    Other,
    /// `<<` or `<<-` (strip leading tabs).
    Heredoc { strip_tabs: bool },
    /// `<<<`.
    HereString,
}

impl Reader {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn commands(mut self) -> Vec<Command> {
        let mut out = Vec::new();
        let mut cur = Command::default();
        // Heredocs whose bodies start after the next newline: (command index, delimiter, strip tabs).
        let mut pending: Vec<(usize, String, bool)> = Vec::new();
        let mut done: Vec<(usize, String)> = Vec::new();
        while let Some(c) = self.peek(0) {
            match c {
                '\n' => {
                    self.pos += 1;
                    let index = out.len();
                    finish(&mut out, &mut cur);
                    for (owner, delim, strip) in pending.drain(..) {
                        let owner = if owner == usize::MAX { index } else { owner };
                        let body = self.heredoc_body(&delim, strip);
                        done.push((owner, body));
                    }
                }
                ' ' | '\t' | '\r' => self.pos += 1,
                '#' => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                ';' | '|' | '&' | '(' | ')' | '{' | '}'
                    if !(c == '&' && self.peek(1) == Some('>')) =>
                {
                    self.pos += 1;
                    if c == '&' && self.peek(0) == Some('&')
                        || c == '|' && self.peek(0) == Some('|')
                    {
                        self.pos += 1;
                    }
                    let index = out.len();
                    finish(&mut out, &mut cur);
                    // Heredocs registered on the command just finished keep its index.
                    for p in pending.iter_mut().filter(|p| p.0 == usize::MAX) {
                        p.0 = index;
                    }
                }
                _ => {
                    if let Some(redirect) = self.redirect() {
                        let target = self.word();
                        match redirect {
                            Redirect::Stdout => cur.stdout_to.push(target),
                            Redirect::Other => {}
                            Redirect::Heredoc { strip_tabs } => {
                                pending.push((usize::MAX, target, strip_tabs));
                            }
                            Redirect::HereString => cur.heredocs.push(target),
                        }
                    } else {
                        let word = self.word();
                        if !word.is_empty() {
                            cur.words.push(word);
                        } else {
                            // A character no rule consumes: skip it.
                            self.pos += 1;
                        }
                    }
                }
            }
        }
        let index = out.len();
        finish(&mut out, &mut cur);
        for (owner, _, _) in pending.iter_mut() {
            if *owner == usize::MAX {
                *owner = index;
            }
        }
        for (owner, body) in done {
            let owner = owner.min(out.len().saturating_sub(1));
            if let Some(cmd) = out.get_mut(owner) {
                cmd.heredocs.push(body);
            }
        }
        out
    }

    /// Reads a redirection operator at the cursor, if there is one.
    fn redirect(&mut self) -> Option<Redirect> {
        let start = self.pos;
        let mut fd = String::new();
        while let Some(c) = self.peek(0).filter(char::is_ascii_digit) {
            fd.push(c);
            self.pos += 1;
        }
        let amp = fd.is_empty() && self.peek(0) == Some('&') && self.peek(1) == Some('>');
        if amp {
            self.pos += 1;
        }
        match self.peek(0) {
            Some('>') => {
                self.pos += 1;
                if matches!(self.peek(0), Some('>') | Some('|')) {
                    self.pos += 1;
                }
                if self.peek(0) == Some('&') {
                    // `>&2`, `2>&1`: duplicates a descriptor, writes no file.
                    self.pos += 1;
                    let _ = self.word();
                    return Some(Redirect::Other);
                }
                let stdout = amp || fd.is_empty() || fd == "1";
                Some(if stdout {
                    Redirect::Stdout
                } else {
                    Redirect::Other
                })
            }
            Some('<') if !amp => {
                self.pos += 1;
                if self.peek(0) == Some('<') {
                    self.pos += 1;
                    if self.peek(0) == Some('<') {
                        self.pos += 1;
                        return Some(Redirect::HereString);
                    }
                    let strip_tabs = self.peek(0) == Some('-');
                    if strip_tabs {
                        self.pos += 1;
                    }
                    return Some(Redirect::Heredoc { strip_tabs });
                }
                if self.peek(0) == Some('(') {
                    // Process substitution `<(…)`: not a redirect; read as a word.
                    self.pos = start;
                    return None;
                }
                Some(Redirect::Other)
            }
            _ => {
                self.pos = start;
                None
            }
        }
    }

    /// Reads one word (skipping leading blanks), removing quotes.
    fn word(&mut self) -> String {
        while matches!(self.peek(0), Some(' ') | Some('\t')) {
            self.pos += 1;
        }
        let mut out = String::new();
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '|' | '&' | '<' | '>' | ')' => break,
                '(' if out.is_empty() => break,
                '\'' => {
                    self.pos += 1;
                    while let Some(c) = self.peek(0) {
                        self.pos += 1;
                        if c == '\'' {
                            break;
                        }
                        out.push(c);
                    }
                }
                '"' => {
                    self.pos += 1;
                    while let Some(c) = self.peek(0) {
                        self.pos += 1;
                        match c {
                            '"' => break,
                            '\\' => {
                                if let Some(n) = self.peek(0) {
                                    self.pos += 1;
                                    if !matches!(n, '"' | '\\' | '$' | '`' | '\n') {
                                        out.push('\\');
                                    }
                                    out.push(n);
                                }
                            }
                            _ => out.push(c),
                        }
                    }
                }
                '\\' => {
                    self.pos += 1;
                    if let Some(n) = self.peek(0) {
                        self.pos += 1;
                        if n != '\n' {
                            out.push(n);
                        }
                    }
                }
                '$' if matches!(self.peek(1), Some('(')) => {
                    // Command substitution: kept verbatim as part of the word.
                    let mut depth = 0usize;
                    while let Some(c) = self.peek(0) {
                        self.pos += 1;
                        out.push(c);
                        match c {
                            '(' => depth += 1,
                            ')' => {
                                depth = depth.saturating_sub(1);
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {
                    self.pos += 1;
                    out.push(c);
                }
            }
        }
        out
    }

    /// Reads heredoc lines up to the delimiter line (or the end of the text).
    fn heredoc_body(&mut self, delimiter: &str, strip_tabs: bool) -> String {
        let mut body = String::new();
        while self.pos < self.chars.len() {
            let mut line = String::new();
            while let Some(c) = self.peek(0) {
                self.pos += 1;
                if c == '\n' {
                    break;
                }
                line.push(c);
            }
            let candidate = if strip_tabs {
                line.trim_start_matches('\t')
            } else {
                &line
            };
            if candidate.trim_end() == delimiter {
                break;
            }
            body.push_str(&line);
            body.push('\n');
        }
        body
    }
}

fn finish(out: &mut Vec<Command>, cur: &mut Command) {
    if !cur.words.is_empty() || !cur.stdout_to.is_empty() || !cur.heredocs.is_empty() {
        out.push(std::mem::take(cur));
    }
}

/// A file write found in a shell script.
#[derive(Debug, Clone, PartialEq)]
pub struct ShellWrite {
    /// How the file is written.
    pub kind: EditKind,
    /// The file written, when the command names it.
    pub target: Option<String>,
}

/// The first command of `script` that edits a file, if any. Output captures
/// (`pytest > log.txt`, `cmd 2> err`, anything to `/dev/…`) are not edits.
pub fn find_write(script: &str) -> Option<ShellWrite> {
    parse(script).iter().find_map(command_write)
}

/// Every file write in `script`, in order (see [`find_write`]).
pub fn find_writes(script: &str) -> Vec<ShellWrite> {
    parse(script).iter().filter_map(command_write).collect()
}

fn is_device(target: &str) -> bool {
    target.starts_with("/dev/")
}

fn command_write(cmd: &Command) -> Option<ShellWrite> {
    let files: Vec<&String> = cmd.stdout_to.iter().filter(|t| !is_device(t)).collect();
    let (_, program) = cmd.program().unwrap_or((0, ""));
    let args = cmd.args();
    let last_file = || args.iter().rev().find(|a| !a.starts_with('-')).cloned();
    match program {
        "sed" if args.iter().any(|a| sed_in_place(a)) => {
            return Some(ShellWrite {
                kind: EditKind::SedInPlace,
                target: last_file(),
            })
        }
        "perl" | "ruby" if args.iter().any(|a| perl_in_place(a)) => {
            return Some(ShellWrite {
                kind: EditKind::SedInPlace,
                target: last_file(),
            })
        }
        "tee" => {
            let target = args
                .iter()
                .find(|a| !a.starts_with('-') && !is_device(a))
                .cloned();
            if target.is_some() {
                return Some(ShellWrite {
                    kind: EditKind::Tee,
                    target,
                });
            }
        }
        "git" if git_applies(args) => {
            return Some(ShellWrite {
                kind: EditKind::GitApply,
                target: None,
            })
        }
        "patch" if !args.iter().any(|a| a == "--dry-run" || a == "-C") => {
            return Some(ShellWrite {
                kind: EditKind::Patch,
                target: None,
            })
        }
        p if is_python(p) => {
            let code: Vec<&String> = python_code(args)
                .into_iter()
                .chain(cmd.heredocs.iter())
                .collect();
            if code.iter().any(|c| python_writes(c)) {
                return Some(ShellWrite {
                    kind: EditKind::PythonWrite,
                    target: code.iter().find_map(|c| python_target(c)),
                });
            }
        }
        _ => {}
    }
    // A redirect is an edit when the command only passes text through (the
    // agent wrote it); other programs' output going to a file is a capture.
    let authored = cmd.words.is_empty() || matches!(program, "cat" | "echo" | "printf");
    let target = files.first()?;
    authored.then(|| ShellWrite {
        kind: if cmd.heredocs.is_empty() {
            EditKind::Redirect
        } else {
            EditKind::Heredoc
        },
        target: Some((*target).clone()),
    })
}

fn sed_in_place(arg: &str) -> bool {
    if arg == "--in-place" || arg.starts_with("--in-place=") {
        return true;
    }
    // `-i`, `-i.bak`, `-ni`, `-Ei`: a short-option cluster holding `i`
    // before any option that takes an argument (`e`, `f`, `l`).
    let Some(cluster) = arg.strip_prefix('-') else {
        return false;
    };
    if cluster.starts_with('-') {
        return false;
    }
    for c in cluster.chars() {
        match c {
            'i' => return true,
            'e' | 'f' | 'l' => return false,
            c if c.is_ascii_alphabetic() => {}
            _ => return false,
        }
    }
    false
}

fn perl_in_place(arg: &str) -> bool {
    arg.strip_prefix('-').is_some_and(|c| {
        !c.starts_with('-') && c.split('e').next().is_some_and(|h| h.contains('i'))
    })
}

fn git_applies(args: &[String]) -> bool {
    let mut rest = args.iter();
    // Skip global options (`-C dir`, `-c k=v`, `--no-pager`).
    let sub = loop {
        match rest.next() {
            Some(a) if a == "-C" || a == "-c" => {
                rest.next();
            }
            Some(a) if a.starts_with('-') => {}
            other => break other,
        }
    };
    match sub.map(String::as_str) {
        Some("apply") => {
            !rest.any(|a| matches!(a.as_str(), "--check" | "--stat" | "--numstat" | "--summary"))
        }
        Some("am") => true,
        _ => false,
    }
}

fn is_python(program: &str) -> bool {
    let Some(version) = program.strip_prefix("python") else {
        return false;
    };
    version.bytes().all(|b| b.is_ascii_digit() || b == b'.')
}

/// The `-c` code of a Python invocation.
fn python_code(args: &[String]) -> Vec<&String> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "-c" {
            out.extend(it.next());
        } else if !a.starts_with('-') {
            break;
        }
    }
    out
}

/// Whether Python source opens a file for writing or writes one.
pub fn python_writes(code: &str) -> bool {
    if code.contains(".write_text(") || code.contains(".write_bytes(") {
        return true;
    }
    if code.contains("inplace=True") && code.contains("fileinput") {
        return true;
    }
    let mut rest = code;
    while let Some(i) = rest.find("open(") {
        let before = rest.get(..i).and_then(|b| b.chars().last());
        let after = rest.get(i + 5..).unwrap_or("");
        rest = after;
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            // `reopen(`, `urlopen(`: not the builtin.
            continue;
        }
        if open_mode_writes(call_arguments(after)) {
            return true;
        }
    }
    false
}

/// The first file a Python script writes, when it names it literally:
/// `open('p', 'w')`, `Path('p').write_text(…)`.
fn python_target(code: &str) -> Option<String> {
    code.lines().find_map(|line| {
        let writes = [".write_text(", ".write_bytes("]
            .iter()
            .any(|w| line.contains(w))
            || line
                .find("open(")
                .is_some_and(|i| open_mode_writes(call_arguments(line.get(i + 5..).unwrap_or(""))));
        if !writes {
            return None;
        }
        let at = line.find("open(").or_else(|| line.find("Path("))?;
        let rest = line.get(at + 5..)?.trim_start();
        let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '"')?;
        let inner = rest.get(1..)?;
        inner.get(..inner.find(quote)?).map(String::from)
    })
}

/// The text up to the parenthesis closing a call (bounded to one statement).
fn call_arguments(after_paren: &str) -> &str {
    let mut depth = 1usize;
    for (i, c) in after_paren.char_indices() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return after_paren.get(..i).unwrap_or("");
                }
            }
            _ => {}
        }
        if i > 400 {
            return after_paren.get(..i).unwrap_or("");
        }
    }
    after_paren
}

/// Whether call arguments hold a string literal that is a writing file mode.
fn open_mode_writes(arguments: &str) -> bool {
    let mut rest = arguments;
    while let Some(i) = rest.find(['\'', '"']) {
        let Some(quote) = rest.get(i..).and_then(|s| s.chars().next()) else {
            break;
        };
        let tail = rest.get(i + 1..).unwrap_or("");
        let Some(end) = tail.find(quote) else { break };
        let literal = tail.get(..end).unwrap_or("");
        let is_mode = !literal.is_empty()
            && literal.len() <= 3
            && literal
                .chars()
                .all(|c| matches!(c, 'r' | 'w' | 'a' | 'x' | 'b' | 't' | '+'));
        if is_mode && literal.contains(['w', 'a', 'x', '+']) {
            return true;
        }
        rest = tail.get(end + 1..).unwrap_or("");
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(script: &str) -> Option<EditKind> {
        find_write(script).map(|w| w.kind)
    }

    #[test]
    fn reads_words_redirects_and_heredocs() {
        let cmds = parse("cat <<'EOF' > a.py\nprint('x > y')\nEOF\npython3 a.py 2>&1 | tee -a log");
        assert_eq!(cmds.len(), 3, "{cmds:?}");
        assert_eq!(cmds[0].stdout_to, vec!["a.py"]);
        assert_eq!(cmds[0].heredocs, vec!["print('x > y')\n"]);
        assert_eq!(cmds[1].words, vec!["python3", "a.py"]);
        assert!(cmds[1].stdout_to.is_empty());
        assert_eq!(cmds[2].words, vec!["tee", "-a", "log"]);
    }

    #[test]
    fn finds_edits() {
        assert_eq!(kind("sed -i 's/a/b/' f.py"), Some(EditKind::SedInPlace));
        assert_eq!(
            kind("sed -i.bak -e 's/a/b/' f.py"),
            Some(EditKind::SedInPlace)
        );
        assert_eq!(kind("cd x && sed -ni '1d' f"), Some(EditKind::SedInPlace));
        assert_eq!(kind("cat > f.py <<EOF\nx\nEOF"), Some(EditKind::Heredoc));
        assert_eq!(
            kind("cat <<-'EOF' >> f.py\n\tx\n\tEOF\nls"),
            Some(EditKind::Heredoc)
        );
        assert_eq!(kind("echo 'x = 1' > conf.py"), Some(EditKind::Redirect));
        assert_eq!(kind("printf 'a\\n' >> notes.txt"), Some(EditKind::Redirect));
        assert_eq!(kind("echo hi | tee out.txt"), Some(EditKind::Tee));
        assert_eq!(kind("git apply fix.diff"), Some(EditKind::GitApply));
        assert_eq!(kind("git -C repo apply fix.diff"), Some(EditKind::GitApply));
        assert_eq!(kind("patch -p1 < fix.diff"), Some(EditKind::Patch));
        assert_eq!(
            kind("python - <<'EOF'\nwith open('a.py', 'w') as f:\n    f.write(s)\nEOF"),
            Some(EditKind::PythonWrite)
        );
        assert_eq!(
            kind("python3 -c \"open('a','a').write('x')\""),
            Some(EditKind::PythonWrite)
        );
        assert_eq!(
            kind("python3 <<EOF\nfrom pathlib import Path\nPath('x').write_text(s)\nEOF"),
            Some(EditKind::PythonWrite)
        );
        assert_eq!(kind("perl -pi -e 's/a/b/' f"), Some(EditKind::SedInPlace));
        assert_eq!(
            find_write("cat <<'EOF' > src/x.py\nEOF").and_then(|w| w.target),
            Some("src/x.py".to_string())
        );
    }

    #[test]
    fn ignores_reads_quotes_and_captures() {
        for script in [
            "grep -rn \"sed -i\" .",
            "sed -n '1,20p' f.py",
            "nl -ba f.py | sed -n '10,20p'",
            "python3 repro.py > out.txt 2>&1",
            "python3 - <<EOF > out.txt\nprint(1)\nEOF",
            "pytest -q 2> err.log",
            "ls > /dev/null",
            "echo done > /dev/null",
            "cat f.py",
            "git apply --check fix.diff",
            "git diff > fix.patch",
            "patch --dry-run -p1 < fix.diff",
            "python -c \"print(open('f').read())\"",
            "python - <<EOF\nprint(open('a.py').read())\nEOF",
            "echo 'cat > f' && ls",
            "grep -n 'open(f, \"w\")' x.py",
            "# sed -i 's/a/b/' f\nls",
            "",
            "cat <<EOF\nunterminated",
        ] {
            assert_eq!(find_write(script), None, "{script:?}");
        }
    }

    #[test]
    fn python_modes() {
        assert!(python_writes("open(p, mode='w')"));
        assert!(python_writes("open(p, \"r+\")"));
        assert!(!python_writes("open(p, 'r')"));
        assert!(!python_writes("urlopen('http://x', 'w')"));
        assert!(!python_writes("open('weird')"));
    }
}
