//! fio: the job it runs and what its JSON output says.
//!
//! One fio process per cgroup of jobs (`numjobs` processes, forked by fio as the seeds' runs
//! were), `--output-format=json`, `--group_reporting`: one aggregated job entry per process.

use crate::driver::workload::Rw;
use serde::Serialize;
use std::path::Path;
use std::time::Duration;

/// What a fio process is asked to do.
#[derive(Clone, Debug, Serialize)]
pub struct FioJob {
    pub rw: Rw,
    /// Block size in bytes.
    pub bs_bytes: u64,
    pub iodepth: usize,
    /// Processes of this fio (`numjobs`).
    pub numjobs: usize,
    pub runtime: Duration,
    pub ramp: Duration,
    /// `io_uring` (batched submission: the regime where the scheduler's cost shows) or `psync`.
    pub ioengine: &'static str,
    /// Sequential patterns: each job reads or writes its own region of this many bytes, the
    /// first from `offset_bytes` (as the model's jobs each own a region); random patterns cover
    /// the whole device.
    pub region: Option<(u64, u64)>,
}

impl FioJob {
    /// The command line after `fio`.
    pub fn args(&self, device: &Path, name: &str) -> Vec<String> {
        let ms = |d: Duration| format!("{}ms", d.as_millis().max(1));
        let mut args = vec![
            format!("--name={name}"),
            format!("--filename={}", device.display()),
            format!("--rw={}", self.rw.name()),
            format!("--bs={}", self.bs_bytes),
            format!("--ioengine={}", self.ioengine),
            format!("--iodepth={}", self.iodepth),
            format!("--numjobs={}", self.numjobs),
            "--direct=1".into(),
            "--time_based".into(),
            format!("--runtime={}", ms(self.runtime)),
            "--group_reporting".into(),
            "--output-format=json".into(),
        ];
        if let Some((offset_bytes, region_bytes)) = self.region {
            args.push(format!("--offset={offset_bytes}"));
            args.push(format!("--size={region_bytes}"));
            args.push(format!("--offset_increment={region_bytes}"));
        }
        if !self.ramp.is_zero() {
            args.push(format!("--ramp_time={}", ms(self.ramp)));
        }
        args
    }
}

/// What one fio process reported (all its jobs together).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FioResult {
    pub fio_version: String,
    /// I/Os completed in the measured window (after the ramp), reads and writes.
    pub ios: u64,
    pub iops: f64,
    /// The measured window, seconds (fio's runtime, the longest job's).
    pub runtime_s: f64,
    /// fio's own CPU use: user and system, percent of one CPU per job (fio's `usr_cpu`, `sys_cpu`).
    pub usr_cpu_pct: f64,
    pub sys_cpu_pct: f64,
    /// Jobs fio reported (1 with `--group_reporting`).
    pub job_entries: usize,
    /// A job's error code, if any job reported one.
    pub error: Option<i64>,
}

fn number(v: &serde_json::Value, key: &str) -> Option<f64> {
    v.get(key).and_then(|x| x.as_f64())
}

/// Parses fio's `--output-format=json` output. Text before the JSON (fio prints warnings there)
/// is skipped.
pub fn parse(text: &str) -> Result<FioResult, String> {
    let start = text.find('{').ok_or("no JSON object in fio's output")?;
    let value: serde_json::Value = serde_json::from_str(&text[start..]).map_err(|e| format!("fio's JSON output: {e}"))?;
    let jobs = value.get("jobs").and_then(|j| j.as_array()).ok_or("fio's JSON output has no `jobs` list")?;
    if jobs.is_empty() {
        return Err("fio's JSON output lists no job".into());
    }
    let mut r = FioResult {
        fio_version: value.get("fio version").and_then(|v| v.as_str()).unwrap_or("unknown").to_string(),
        job_entries: jobs.len(),
        ..FioResult::default()
    };
    let mut runtime_ms: f64 = 0.0;
    let (mut usr, mut sys) = (0.0, 0.0);
    for job in jobs {
        for dir in ["read", "write"] {
            let d = job.get(dir).ok_or_else(|| format!("fio job without `{dir}`"))?;
            // A count: a whole number, summed checked over directions and jobs (issue 43).
            let ios = d.get("total_ios").ok_or_else(|| format!("fio `{dir}` without `total_ios`"))?;
            let ios = ios.as_u64().ok_or_else(|| format!("fio `{dir}`: `total_ios` is not a count: {ios}"))?;
            crate::counts::add_to(&mut r.ios, ios, "fio's `total_ios` over its jobs")?;
            r.iops += number(d, "iops").unwrap_or(0.0);
            if ios > 0 {
                runtime_ms = runtime_ms.max(number(d, "runtime").unwrap_or(0.0));
            }
        }
        usr += number(job, "usr_cpu").unwrap_or(0.0);
        sys += number(job, "sys_cpu").unwrap_or(0.0);
        if let Some(e) = job.get("error").and_then(|e| e.as_i64()).filter(|&e| e != 0) {
            r.error = Some(e);
        }
    }
    r.runtime_s = runtime_ms / 1e3;
    r.usr_cpu_pct = usr / jobs.len() as f64;
    r.sys_cpu_pct = sys / jobs.len() as f64;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arguments_say_what_the_job_asks() {
        let job = FioJob {
            rw: Rw::RandRead,
            bs_bytes: 4096,
            iodepth: 32,
            numjobs: 2,
            runtime: Duration::from_millis(1500),
            ramp: Duration::ZERO,
            ioengine: "io_uring",
            region: None,
        };
        let args = job.args(Path::new("/dev/loop3"), "bfq");
        for want in ["--filename=/dev/loop3", "--rw=randread", "--bs=4096", "--iodepth=32", "--numjobs=2", "--runtime=1500ms", "--direct=1"] {
            assert!(args.iter().any(|a| a == want), "{want} missing from {args:?}");
        }
        assert!(!args.iter().any(|a| a.starts_with("--ramp_time")));
    }

    #[test]
    fn warnings_before_the_json_are_skipped_and_a_broken_output_is_an_error() {
        let text = "fio: some warning\n{\"fio version\":\"fio-3.33\",\"jobs\":[{\"read\":{\"total_ios\":10,\"iops\":5.0,\"runtime\":2000},\"write\":{\"total_ios\":0,\"iops\":0.0,\"runtime\":0},\"usr_cpu\":1.5,\"sys_cpu\":20.0,\"error\":0}]}";
        let r = parse(text).unwrap();
        assert_eq!((r.ios, r.iops, r.runtime_s, r.error), (10, 5.0, 2.0, None));
        assert!(parse("no json here").is_err());
        assert!(parse("{\"jobs\":[]}").is_err());
        assert!(parse("{\"jobs\":[{\"read\":{}}]}").is_err());
    }

    /// Counts near the largest: summed up to it, refused past it in one line (they wrapped).
    #[test]
    fn io_counts_that_add_up_past_the_largest_are_refused() {
        let job = |read: u64, write: u64| format!("{{\"read\":{{\"total_ios\":{read},\"iops\":1.0,\"runtime\":1000}},\"write\":{{\"total_ios\":{write},\"iops\":0.0,\"runtime\":0}}}}");
        let text = |jobs: &[String]| format!("{{\"jobs\":[{}]}}", jobs.join(","));
        let r = parse(&text(&[job(u64::MAX - 1, 1)])).unwrap();
        assert_eq!(r.ios, u64::MAX);
        for jobs in [vec![job(u64::MAX, 1)], vec![job(u64::MAX, 0), job(1, 0)]] {
            let e = parse(&text(&jobs)).unwrap_err();
            assert!(e.contains("add up past 18446744073709551615") && !e.contains('\n'), "{e}");
        }
        // Not a count at all: negative, fractional, beyond u64.
        for bad in ["-1", "1.5", "18446744073709551616"] {
            let e = parse(&format!("{{\"jobs\":[{{\"read\":{{\"total_ios\":{bad}}},\"write\":{{\"total_ios\":0}}}}]}}")).unwrap_err();
            assert!(e.contains("not a count"), "{bad}: {e}");
        }
    }
}
