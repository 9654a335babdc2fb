//! Flamegraphs and differential flamegraphs (SVG, inferno through pprof) of folded stacks.

use super::folded::Folded;
use crate::error::ExperimentError;
use std::collections::BTreeMap;
use std::io::Write;

pub(crate) fn flamegraph_options<'a>(
    title: &str,
    subtitle: &str,
) -> pprof::flamegraph::Options<'a> {
    let mut opt = pprof::flamegraph::Options::default();
    opt.title = title.to_string();
    opt.subtitle = Some(subtitle.to_string());
    opt.count_name = "samples".to_string();
    opt.colors = pprof::flamegraph::Palette::Multi(pprof::flamegraph::color::MultiPalette::Rust);
    // Same name, same colour, in every graph: variants can be compared side by side.
    opt.hash = true;
    opt.deterministic = true;
    // Keep one-sample frames: a frame's absence is a result here.
    opt.min_width = 0.0;
    opt
}

/// Writes an on-CPU flamegraph (SVG).
pub fn write_flamegraph(
    folded: &Folded,
    title: &str,
    subtitle: &str,
    out: impl Write,
) -> Result<(), ExperimentError> {
    write_flamegraph_counting(folded, title, subtitle, "samples", out)
}

/// Writes a flamegraph (SVG) whose counts are `count_name` (samples, us, ...).
pub fn write_flamegraph_counting(
    folded: &Folded,
    title: &str,
    subtitle: &str,
    count_name: &str,
    out: impl Write,
) -> Result<(), ExperimentError> {
    if folded.stacks.is_empty() {
        return Err(ExperimentError::run_failed("no samples were taken (is the run too short?)"));
    }
    let text = folded.to_text();
    let mut opt = flamegraph_options(title, subtitle);
    opt.count_name = count_name.to_string();
    pprof::flamegraph::from_lines(&mut opt, text.lines(), out)
        .map_err(|e| ExperimentError::run_failed(format!("cannot write the flamegraph: {e}")))
}

/// A stack with the variant's type written `P` (`job_loop<schedlab_variants::sched_lock::SchedLock>`
/// → `job_loop<P>`, `schedlab_variants::epoch::run_deferred` → `P::run_deferred`), so that the
/// same path in two variants is the same stack.
pub(crate) fn variant_neutral(stack: &str) -> String {
    const PREFIX: &str = "schedlab_variants::";
    let mut out = String::with_capacity(stack.len());
    let mut rest = stack;
    while let Some(i) = rest.find(PREFIX) {
        out.push_str(&rest[..i]);
        let after = &rest[i + PREFIX.len()..];
        let ident =
            |s: &str| s.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(s.len());
        let module = ident(after);
        match after[module..].strip_prefix("::") {
            Some(tail) if module > 0 => {
                let item = ident(tail);
                if tail.starts_with(|c: char| c.is_ascii_uppercase()) {
                    out.push('P'); // the policy type
                    rest = &tail[item..];
                } else {
                    out.push_str("P::"); // a function of the variant's module
                    rest = tail;
                }
            }
            _ => {
                out.push_str(PREFIX);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Writes a differential flamegraph of `a` against `b` (SVG): frame widths are `a`'s samples;
/// a frame is blue where `b` has fewer samples there (what `b` removes), red where it has more,
/// the deeper the colour the larger the change. `b`'s counts are multiplied by `b_scale` first:
/// with `requests(a) / requests(b)` the colours compare CPU time per request (what `b` removes
/// shows blue, what it keeps neutral); with `None`, `b` is scaled to `a`'s sample total and the
/// colours compare shares. The variant's type is written `P` in both, so the same path matches.
/// A stack only `b` has is drawn with zero width.
pub fn write_differential(
    a: &Folded,
    b: &Folded,
    b_scale: Option<f64>,
    title: &str,
    subtitle: &str,
    out: impl Write,
) -> Result<(), ExperimentError> {
    let (ta, tb) = (a.samples(), b.samples());
    if ta == 0 || tb == 0 {
        return Err(ExperimentError::run_failed("no samples were taken (is the run too short?)"));
    }
    let scale = b_scale.filter(|s| s.is_finite() && *s > 0.0).unwrap_or(ta as f64 / tb as f64);
    let neutral = |f: &Folded| {
        let mut m: BTreeMap<String, u64> = BTreeMap::new();
        for (stack, n) in &f.stacks {
            *m.entry(variant_neutral(stack)).or_insert(0) += n;
        }
        m
    };
    let (a, b) = (neutral(a), neutral(b));
    let mut lines = Vec::new();
    let stacks: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for stack in stacks {
        let na = a.get(stack).copied().unwrap_or(0);
        let nb = (b.get(stack).copied().unwrap_or(0) as f64 * scale).round() as u64;
        // inferno's differential input is "stack before after": width from `after`, colour from
        // after − before. Feeding (b, a) and negating gives width from `a`, colour from b − a.
        lines.push(format!("{stack} {nb} {na}"));
    }
    let mut opt = flamegraph_options(title, subtitle);
    opt.negate_differentials = true;
    pprof::flamegraph::from_lines(&mut opt, lines.iter().map(String::as_str), out).map_err(|e| {
        ExperimentError::run_failed(format!("cannot write the differential flamegraph: {e}"))
    })
}

#[cfg(test)]
mod tests {
    use super::super::shares::leaf_name;
    use super::*;

    #[test]
    fn leaf_names_and_variant_neutral_stacks() {
        assert_eq!(leaf_name("schedlab_core::sync::lock<T>"), "lock");
        assert_eq!(leaf_name("<schedlab_variants::no_stats::NoStats as schedlab_core::policy::StatsPolicy>::route"), "route");
        assert_eq!(
            variant_neutral("schedlab_benches::workload::job_loop<schedlab_variants::sched_lock::SchedLock>;schedlab_variants::epoch::run_deferred"),
            "schedlab_benches::workload::job_loop<P>;P::run_deferred"
        );
        assert_eq!(variant_neutral("schedlab_variants::"), "schedlab_variants::");
    }
}
