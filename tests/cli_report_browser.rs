//! Every kind of `--report` page opened in a real browser (headless Chromium, Debian's `chromium`
//! package): each experiment runs tiny, writes its report, and Chromium loads it offline twice,
//! once for a screenshot and once for the DOM, with its console on stderr. A page fails on a
//! console line (an uncaught error, in the page or in a flamegraph's frame), on a reference to
//! anything that is not in the file itself (a missing image cannot happen then), and on a blank
//! page: a screenshot missing or tiny, or a DOM without its tables. Where Chromium is not installed
//! the test says so and passes. `SCHEDLAB_REPORT_SHOTS=DIR` keeps the screenshots (notes/reports/).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

mod invoke;
use invoke::words;

/// The longest one Chromium call may take before it is killed and the test fails.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(60);

fn schedlab(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedlab"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs")
}

/// The Chromium binary, when one answers `--version`; when none does, says that the test is
/// skipped and how to have it run.
fn chromium() -> Option<PathBuf> {
    let candidates = std::env::var_os("SCHEDLAB_CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(["chromium", "chromium-browser"].map(PathBuf::from));
    for c in candidates {
        if let Some(out) = run_bounded(Command::new(&c).arg("--version"), Duration::from_secs(20)) {
            if out.status.success() {
                return Some(c);
            }
        }
    }
    eprintln!(
        "skipped: no Chromium (install Debian's `chromium` package, or set SCHEDLAB_CHROMIUM) \
        to open the pages in"
    );
    None
}

/// Runs a command with a time limit; `None` when it could not start, a panic when it overran.
fn run_bounded(cmd: &mut Command, limit: Duration) -> Option<Output> {
    let mut child =
        cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().ok()?;
    // Drain both pipes on threads so that a chatty browser cannot block on a full pipe.
    let mut stdout = child.stdout.take()?;
    let mut stderr = child.stderr.take()?;
    let out_thread = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut v);
        v
    });
    let err_thread = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stderr, &mut v);
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().ok()? {
            break status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} ran past {limit:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Some(Output {
        status,
        stdout: out_thread.join().unwrap_or_default(),
        stderr: err_thread.join().unwrap_or_default(),
    })
}

/// Chromium's common flags: headless, no sandbox (CI runs as root), no GPU, its own profile.
fn browser(chromium: &Path, profile: &Path) -> Command {
    let mut cmd = Command::new(chromium);
    cmd.args(words(
        "--headless=new --no-sandbox --disable-gpu --no-first-run \
        --enable-logging=stderr --v=0",
    ))
    .arg(format!("--user-data-dir={}", profile.display()));
    cmd
}

/// The console lines of Chromium's log (errors in the page or any frame of it).
fn console_lines(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect()
}

/// Every `src="..."` and `href="..."` value of a page.
fn references(html: &str) -> Vec<&str> {
    let mut refs = Vec::new();
    for attr in ["src=\"", "href=\""] {
        let mut rest = html;
        while let Some(at) = rest.find(attr) {
            rest = &rest[at + attr.len()..];
            let end = rest.find('"').unwrap_or(rest.len());
            refs.push(&rest[..end]);
            rest = &rest[end..];
        }
    }
    refs
}

/// Opens `html` (in `dir`) in Chromium and checks it; `tables`: text the DOM must show;
/// `frames`: how many interactive flamegraphs it holds.
fn check_page(
    chromium: &Path,
    dir: &Path,
    html: &Path,
    kind: &str,
    tables: &[&str],
    frames: usize,
) {
    let source = std::fs::read_to_string(html).unwrap();
    for r in references(&source) {
        // Inline data, or a trace file next to the report (a link, not a resource the page loads).
        let ok = r.starts_with("data:")
            || (r.starts_with("file://") && Path::new(&r["file://".len()..]).exists());
        assert!(ok, "{kind}: the report refers to {r:.80}, which is not in the file");
    }
    let url = format!("file://{}", html.display());
    let shot = dir.join(format!("{kind}.png"));
    let out = run_bounded(
        browser(chromium, &dir.join("profile-shot"))
            .arg(format!("--screenshot={}", shot.display()))
            .arg("--window-size=1200,2000")
            .arg(&url),
        BROWSER_TIMEOUT,
    )
    .expect("chromium starts");
    assert!(
        out.status.success(),
        "{kind}: chromium --screenshot failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(console_lines(&out.stderr), Vec::<String>::new(), "{kind}: console errors");
    let png = std::fs::metadata(&shot).unwrap_or_else(|_| panic!("{kind}: no screenshot")).len();
    assert!(png > 20_000, "{kind}: the screenshot is {png} bytes: a blank page");
    if let Some(keep) = std::env::var_os("SCHEDLAB_REPORT_SHOTS") {
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::copy(&shot, Path::new(&keep).join(format!("{kind}.png"))).unwrap();
    }
    let out = run_bounded(
        browser(chromium, &dir.join("profile-dom")).arg("--dump-dom").arg(&url),
        BROWSER_TIMEOUT,
    )
    .expect("chromium starts");
    assert!(out.status.success(), "{kind}: chromium --dump-dom failed");
    assert_eq!(console_lines(&out.stderr), Vec::<String>::new(), "{kind}: console errors");
    let dom = String::from_utf8_lossy(&out.stdout);
    // Issue 34: tables are tables (with units in their headers), not a text dump.
    assert!(dom.contains("<table class=\"data\">"), "{kind}: no data table in the DOM");
    assert!(dom.contains("<thead><tr><th"), "{kind}: a table without a header");
    for t in tables {
        assert!(dom.contains(t), "{kind}: the DOM lacks `{t}`");
    }
    assert_eq!(dom.matches("<iframe").count(), frames, "{kind}: interactive flamegraphs");
    // Issue 44: the box at the top says each message once, and a page whose runs were
    // disturbed shows no verdict on their figures (end-of-run checks, class pass/fail, stay).
    let items = outcome_items(&dom);
    for (i, item) in items.iter().enumerate() {
        assert!(!items[..i].contains(item), "{kind}: said twice in the box: {item}");
    }
    if items.iter().any(|i| i.starts_with("Disturbed:")) {
        for verdict in ["<td class=\"met\"", "<td class=\"missed\"", "<td class=\"inconclusive\""] {
            assert!(!dom.contains(verdict), "{kind}: a verdict ({verdict}) beside a disturbed run");
        }
    }
    // Every column of numbers says its unit, or is a count (its header names what it counts).
    assert!(
        !dom.contains("<th title=\"click to sort\"></th>"),
        "{kind}: a column without a header"
    );
    let unitless = unitless_columns(&dom);
    assert!(unitless.is_empty(), "{kind}: figures without their unit in the header: {unitless:?}");
    // The terminal text and every block of text on the page within 130 columns.
    let (widest, line) = widest_pre(&source);
    assert!(widest <= 130, "{kind}: a <pre> line of {widest} columns: {line}");
    // A 13-inch screen: at 1280 px the page itself never scrolls sideways (a wide table scrolls
    // in its own box). Measured by a probe in a copy of the page, read from the console.
    let probe = "<script>window.addEventListener('load',function(){var e=document.documentElement;\
console.log('probe: overflow='+(e.scrollWidth-e.clientWidth));});</script></body>";
    let probed = dir.join(format!("{kind}-probe.html"));
    std::fs::write(&probed, source.replacen("</body>", probe, 1)).unwrap();
    let out = run_bounded(
        browser(chromium, &dir.join("profile-probe"))
            .arg("--window-size=1280,900")
            .arg("--dump-dom")
            .arg(format!("file://{}", probed.display())),
        BROWSER_TIMEOUT,
    )
    .expect("chromium starts");
    let lines = console_lines(&out.stderr);
    let line = lines
        .iter()
        .find(|l| l.contains("probe: overflow="))
        .unwrap_or_else(|| panic!("{kind}: the width probe did not run: {lines:?}"));
    let overflow: i64 = line
        .split("probe: overflow=")
        .nth(1)
        .and_then(|v| v.split(|c: char| !c.is_ascii_digit() && c != '-').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(i64::MAX);
    assert!(overflow <= 0, "{kind}: the page scrolls sideways by {overflow} px at 1280 px: {line}");
}

/// The cells of each data table of `dom`: its headings (their `th` tags whole) and its rows.
fn data_tables(dom: &str) -> Vec<(Vec<&str>, Vec<Vec<&str>>)> {
    let mut tables = Vec::new();
    for table in dom.split("<table class=\"data\">").skip(1) {
        let table = table.split("</table>").next().unwrap_or("");
        let (head, body) = table.split_once("</thead>").unwrap_or((table, ""));
        let headings = head.split("<th ").skip(1).map(|th| th.split("</th>").next().unwrap_or(""));
        let rows = body.split("<tr>").skip(1).map(|tr| {
            let tr = tr.split("</tr>").next().unwrap_or("");
            tr.split("<td").skip(1).map(|td| td.split("</td>").next().unwrap_or("")).collect()
        });
        tables.push((headings.collect(), rows.collect()));
    }
    tables
}

/// The headings of the data tables' columns that hold a figure with decimals (a measured
/// quantity, not a count) but name no unit: no `data-unit`, or a heading without it. A table
/// with a column "unit" (figures of several units, one a row) says them there.
fn unitless_columns(dom: &str) -> Vec<String> {
    let mut found = Vec::new();
    for (headings, rows) in data_tables(dom) {
        let text = |tag: &str| tag.split_once('>').map_or("", |(_, t)| t).trim().to_string();
        if headings.iter().any(|h| text(h) == "unit") {
            continue;
        }
        for (i, heading) in headings.iter().enumerate() {
            let measured = rows
                .iter()
                .filter_map(|r| r.get(i))
                .any(|td| td.starts_with(" class=\"num\"") && text(td).contains('.'));
            let unit = heading.split("data-unit=\"").nth(1).and_then(|u| u.split('"').next());
            let named = unit.is_some_and(|u| !u.is_empty() && text(heading).contains(u));
            if measured && !named {
                found.push(text(heading));
            }
        }
    }
    found
}

/// The widest line of the page's `<pre>` blocks in columns (its entities read as the one
/// character each stands for), and the line.
fn widest_pre(html: &str) -> (usize, String) {
    let mut widest = (0, String::new());
    for pre in html.split("<pre>").skip(1) {
        let pre = pre.split("</pre>").next().unwrap_or("");
        for line in pre.lines() {
            let shown = line
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&#39;", "'")
                .replace("&amp;", "&");
            let columns = shown.chars().count();
            if columns > widest.0 {
                widest = (columns, shown);
            }
        }
    }
    widest
}

/// The page checks themselves can fail (a check that cannot fail proves nothing): a column of
/// measured figures without its unit, and a `<pre>` line past 130 columns, are seen; a count, a
/// column with its unit and a table of several units (a "unit" column) pass.
#[test]
fn a_figure_without_its_unit_and_a_wide_pre_are_caught() {
    let table = |head: &str, cells: &str| {
        let head = format!("<table class=\"data\"><thead><tr>{head}</tr></thead>");
        format!("{head}<tbody><tr>{cells}</tr></tbody></table>")
    };
    let th = |unit: Option<&str>, text: &str| match unit {
        Some(u) => format!("<th title=\"click to sort\" data-unit=\"{u}\">{text}</th>"),
        None => format!("<th title=\"click to sort\">{text}</th>"),
    };
    let num = |v: &str| format!("<td class=\"num\" data-v=\"{v}\">{v}</td>");
    let good = table(
        &[th(None, "samples"), th(Some("µs"), "hold (µs)"), th(Some("KIOPS"), "KIOPS")].concat(),
        &[num("61"), num("2.50"), num("812.2")].concat(),
    );
    assert_eq!(unitless_columns(&good), Vec::<String>::new());
    let bad = table(
        &[th(None, "samples"), th(None, "hold")].concat(),
        &[num("61"), num("2.50")].concat(),
    );
    assert_eq!(unitless_columns(&bad), ["hold"]);
    let said_not_shown = table(&th(Some("µs"), "hold"), &num("2.50"));
    assert_eq!(unitless_columns(&said_not_shown), ["hold"]);
    let rows_of_units = table(
        &[th(None, "figure"), th(None, "unit"), th(None, "kernel")].concat(),
        &["<td>CPU per I/O</td><td>µs</td>".to_string(), num("6.9")].concat(),
    );
    assert_eq!(unitless_columns(&rows_of_units), Vec::<String>::new());
    let wide = format!("<pre>a &lt;b&gt;\n{}</pre>", "x".repeat(131));
    assert_eq!(widest_pre(&wide).0, 131);
    assert_eq!(widest_pre("<pre>&lt;&amp;&gt;</pre>"), (3, "<&>".to_string()));
}

/// The items of the page's "Read this first" box, as text, the prefixes a printed copy
/// carries (`schedlab: `, `warning: `) taken off.
fn outcome_items(dom: &str) -> Vec<String> {
    let Some(start) = dom.find("id=\"outcome\"") else { return Vec::new() };
    let section = &dom[start..dom[start..].find("</section>").map_or(dom.len(), |end| start + end)];
    section
        .split("<li")
        .skip(1)
        .map(|li| {
            let body = &li[li.find('>').map_or(0, |i| i + 1)..];
            let text = body.split("</li>").next().unwrap_or("").trim();
            let text = text.strip_prefix("schedlab: ").unwrap_or(text);
            text.strip_prefix("warning: ").unwrap_or(text).to_string()
        })
        .collect()
}

/// Runs `args` with `--report KIND.html` in `dir`; the report's path.
fn report(dir: &Path, kind: &str, args: &[&str]) -> PathBuf {
    let path = dir.join(format!("{kind}.html"));
    let mut all = args.to_vec();
    all.extend(["--report", path.to_str().unwrap()]);
    let out = schedlab(&all, dir);
    assert!(out.status.success(), "{kind}: {}", String::from_utf8_lossy(&out.stderr));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&format!("wrote {}", path.display())),
        "{kind}: no `wrote` line"
    );
    path
}

#[test]
fn every_kind_of_report_opens_in_chromium_without_errors() {
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tiny = ["--threads", "1", "--duration", "0.05"];
    let compare = report(
        d,
        "compare",
        &[
            &words(
                "compare --placement pool --rounds 1 \
                --variants sched-lock,debug-off",
            ),
            &tiny[..],
        ]
        .concat(),
    );
    check_page(&chromium, d, &compare, "compare", &["sched-lock", "debug-off", "KIOPS"], 0);
    let sweep = report(
        d,
        "sweep",
        &[
            &words(
                "sweep --variants sched-lock --lockstat-duration 0 --csv s.csv \
                --svg s.svg",
            ),
            &tiny[..],
        ]
        .concat(),
    );
    check_page(&chromium, d, &sweep, "sweep", &["sched-lock", "<svg"], 0);
    let predict = report(
        d,
        "predict",
        &words(
            "predict --threads 1,2 --variants sched-lock --lock fair-spin \
            --calibration-windows 1 --calibration-rounds 100",
        ),
    );
    check_page(&chromium, d, &predict, "predict", &["sched-lock"], 0);
    let simulate = report(d, "simulate", &["simulate", "--runtime", "0.1"]);
    check_page(&chromium, d, &simulate, "simulate", &["IOPS"], 0);
    let roundtrip = report(
        d,
        "roundtrip",
        &["roundtrip", "--rounds", "1", "--iterations", "1000", "--variant", "sched-lock"],
    );
    check_page(&chromium, d, &roundtrip, "roundtrip", &["sched-lock"], 0);
    let flame = words(
        "flamegraph --variant sched-lock --diff sched-lock debug-off \
        --threads 1 --duration 0.3 --out fg",
    );
    let flamegraph = report(d, "flamegraph", &flame);
    check_page(&chromium, d, &flamegraph, "flamegraph", &["Where the time goes"], 3);
    let run = report(
        d,
        "run",
        &words(
            "run --variant sched-lock --threads 1 --duration 0.1 \
            --trace t.json",
        ),
    );
    check_page(&chromium, d, &run, "run", &["ui.perfetto.dev", "checks"], 0);
    let trace = report(d, "trace-summary", &["trace-summary", "t.json", "--svg", "excerpt.svg"]);
    check_page(&chromium, d, &trace, "trace-summary", &["ui.perfetto.dev", "<svg"], 0);
}

#[test]
fn a_broken_page_is_caught() {
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("broken.html");
    std::fs::write(&page, "<html><body><pre>x</pre><script>not_defined();</script></body></html>")
        .unwrap();
    let out = run_bounded(
        browser(&chromium, &dir.path().join("p"))
            .arg("--dump-dom")
            .arg(format!("file://{}", page.display())),
        BROWSER_TIMEOUT,
    )
    .unwrap();
    let lines = console_lines(&out.stderr);
    assert!(
        lines.iter().any(|l| l.contains("not_defined")),
        "the deliberate error was not seen: {lines:?}"
    );
}

/// A flamegraph in a report still zooms and searches: the page's frame is given a probe that, once
/// loaded, clicks the Search button (its prompt answering `lock`) and then a frame and logs what
/// happened; the log must show frames hidden by the zoom and the share the search matched.
#[test]
fn a_flamegraph_in_a_report_zooms_and_searches() {
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = schedlab(
        &words(
            "flamegraph --variant sched-lock --threads 1 --duration 0.3 \
            --out fg",
        ),
        d,
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let svg = std::fs::read_to_string(d.join("fg/sched-lock.svg")).unwrap();
    let probe = r##"<script><![CDATA[
window.prompt = function() { return "lock"; };
window.addEventListener("load", function() { setTimeout(function() {
  document.getElementById("search").dispatchEvent(new MouseEvent("click", {bubbles: true}));
  var matched = document.getElementById("matched").textContent;
  var frames = document.querySelectorAll("#frames g");
  frames[frames.length - 1].dispatchEvent(new MouseEvent("click", {bubbles: true}));
  console.log("probe: hidden=" + document.querySelectorAll("#frames g.hide").length + " " + matched);
}, 100); });
]]></script>"##;
    let at = svg.find("<svg").unwrap();
    let end = at + svg[at..].find('>').unwrap() + 1;
    let probed = format!("{}{probe}{}", &svg[..end], &svg[end..]);
    let mut page = schedlab_benches::report::html::Page::new(
        "probe",
        &schedlab_benches::files::provenance::Provenance::collect(),
    );
    page.table("t", "x").interactive("sched-lock", probed);
    let html = d.join("probe.html");
    std::fs::write(&html, page.render()).unwrap();
    let out = run_bounded(
        browser(&chromium, &d.join("p"))
            .arg("--virtual-time-budget=3000")
            .arg("--dump-dom")
            .arg(format!("file://{}", html.display())),
        BROWSER_TIMEOUT,
    )
    .unwrap();
    let lines = console_lines(&out.stderr);
    let probe_line = lines
        .iter()
        .find(|l| l.contains("probe: hidden="))
        .unwrap_or_else(|| panic!("the probe did not run: {lines:?}"));
    assert_eq!(lines.len(), 1, "errors beside the probe: {lines:?}");
    assert!(!probe_line.contains("hidden=0 "), "the click did not zoom: {probe_line}");
    assert!(probe_line.contains("Matched: "), "the search matched nothing: {probe_line}");
}

/// The kernel page, which `schedlab kernel --report` makes only as root on a machine with BFQ:
/// rendered by the same code from recorded kernel outputs (one BFQ run's fio, bpftrace and perf
/// files, `benches/tests/fixtures/kernel`, beside made-up none and model rows) and held to every
/// page's checks. Saved as `kernel-fixture`, so that a kept screenshot never passes for a
/// measurement.
#[test]
fn the_kernel_page_from_recorded_kernel_outputs_opens_in_chromium() {
    use schedlab_benches::report::contract::{Report, View};
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("kernel-fixture.html");
    let report = schedlab_benches::report::kernel_fixture::recorded();
    std::fs::write(&page, report.page(View::default()).render()).unwrap();
    let tables = ["Fidelity: the model against the kernel", "bfq_dispatch_request", "6.18.44"];
    check_page(&chromium, dir.path(), &page, "kernel-fixture", &tables, 0);
}
