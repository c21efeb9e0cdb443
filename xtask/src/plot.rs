//! `cargo xtask plot`: small SVG line charts, written by hand (no plotting dependency).
//!
//! - `plot sizes BENCH.json OUT.svg`: time against size from a `cargo xtask bench` JSON (cases whose id ends in a
//!   size `2^N`, optionally `xP`), one line per case family, log scale in time.
//! - `plot memlog LOG.csv OUT.svg`: resident memory against time from a `timestamp_ms,rss_kb,rss_gib` log
//!   (`cuzk memmon`, `cuzk prove --memlog`, `cuzk bench prove --memlog`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::{bail, Context, Result};
use serde_json::Value;

/// One named line of (x, y) points.
#[derive(Debug)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

pub fn run(args: &[String]) -> Result<()> {
    let [kind, input, output] = args else {
        bail!("usage: cargo xtask plot sizes BENCH.json OUT.svg | cargo xtask plot memlog LOG.csv OUT.svg");
    };
    let text = std::fs::read_to_string(input).with_context(|| format!("reading {input}"))?;
    let svg = match kind.as_str() {
        "sizes" => {
            let series = sizes(&text).with_context(|| input.clone())?;
            chart(
                &format!("time against size ({input})"),
                "log2 size",
                "ms (log scale)",
                &series,
                true,
            )
        }
        "memlog" => {
            let series = memlog(&text).with_context(|| input.clone())?;
            chart(
                &format!("resident memory ({input})"),
                "seconds",
                "GiB",
                &series,
                false,
            )
        }
        other => bail!("unknown chart {other:?}: sizes or memlog"),
    };
    std::fs::write(output, svg).with_context(|| format!("writing {output}"))?;
    eprintln!("wrote {output}");
    Ok(())
}

/// Series from a `cargo xtask bench` summary: ids `family/2^N` or `family/2^NxP`.
pub fn sizes(json: &str) -> Result<Vec<Series>> {
    let v: Value = serde_json::from_str(json).context("not JSON")?;
    let cases = v["cases"]
        .as_array()
        .context("no \"cases\" array (is this a cargo xtask bench summary?)")?;
    let mut by_family: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for c in cases {
        let (Some(id), Some(ms)) = (c["case"].as_str(), c["median_ms"].as_f64()) else {
            continue;
        };
        let Some((family, size)) = id.rsplit_once('/') else {
            continue;
        };
        let Some(rest) = size.strip_prefix("2^") else {
            continue;
        };
        let (log2, parts) = rest.split_once('x').unwrap_or((rest, ""));
        let Ok(log2) = log2.parse::<f64>() else {
            continue;
        };
        let name = if parts.is_empty() {
            family.to_string()
        } else {
            format!("{family} x{parts}")
        };
        by_family.entry(name).or_default().push((log2, ms));
    }
    if by_family.is_empty() {
        bail!("no case id ends in a size 2^N");
    }
    Ok(by_family
        .into_iter()
        .map(|(name, mut points)| {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series { name, points }
        })
        .collect())
}

/// One series from a memory log: seconds since the first row, GiB.
pub fn memlog(csv: &str) -> Result<Vec<Series>> {
    let mut lines = csv.lines();
    let header = lines.next().context("empty file")?;
    if header.trim() != "timestamp_ms,rss_kb,rss_gib" {
        bail!("line 1 is {header:?}, expected the header timestamp_ms,rss_kb,rss_gib");
    }
    let mut points = Vec::new();
    let mut t0 = None;
    for (i, line) in lines.enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        let parse = |k: usize| -> Result<f64> {
            f.get(k)
                .and_then(|s| s.trim().parse::<f64>().ok())
                .with_context(|| {
                    format!("line {}: column {} is not a number: {line:?}", i + 2, k + 1)
                })
        };
        let (t, kb) = (parse(0)?, parse(1)?);
        let t0 = *t0.get_or_insert(t);
        points.push(((t - t0) / 1e3, kb / (1u64 << 20) as f64));
    }
    if points.is_empty() {
        bail!("no rows after the header");
    }
    Ok(vec![Series {
        name: "RSS".into(),
        points,
    }])
}

const COLORS: &[&str] = &[
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
];

/// A line chart: axes with five ticks each, a legend, optional log scale in y.
pub fn chart(title: &str, xlabel: &str, ylabel: &str, series: &[Series], log_y: bool) -> String {
    // The legend sits right of the plot, as wide as its longest name (about 7 px per character at 12 px).
    let longest = series
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0);
    let right = (longest as f64 * 7.0 + 50.0).max(120.0);
    let (w, h, left, top, bottom) = (560.0 + right, 440.0, 80.0, 40.0, 50.0);
    let ty = |y: f64| if log_y { y.max(1e-9).log10() } else { y };
    let all = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(ty(y));
        y1 = y1.max(ty(y));
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    if !log_y {
        y0 = y0.min(0.0);
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    let px = |x: f64| left + (x - x0) / (x1 - x0) * (w - left - right);
    let py = |y: f64| h - bottom - (ty(y) - y0) / (y1 - y0) * (h - top - bottom);
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">
<rect width="{w}" height="{h}" fill="white"/>
<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>
<line x1="{left}" y1="{}" x2="{}" y2="{}" stroke="black"/>
<line x1="{left}" y1="{top}" x2="{left}" y2="{}" stroke="black"/>
<text x="{}" y="{}" text-anchor="middle">{}</text>
<text x="16" y="{}" text-anchor="middle" transform="rotate(-90 16 {})">{}</text>
"#,
        w / 2.0,
        escape(title),
        h - bottom,
        w - right,
        h - bottom,
        h - bottom,
        (left + w - right) / 2.0,
        h - 12.0,
        escape(xlabel),
        h / 2.0,
        h / 2.0,
        escape(ylabel)
    );
    for k in 0..=4 {
        let f = k as f64 / 4.0;
        let x = x0 + f * (x1 - x0);
        let yt = y0 + f * (y1 - y0);
        let y = if log_y { 10f64.powf(yt) } else { yt };
        let _ = writeln!(
            s,
            r##"<text x="{:.1}" y="{}" text-anchor="middle">{}</text><text x="{}" y="{:.1}" text-anchor="end">{}</text><line x1="{left}" y1="{:.1}" x2="{}" y2="{:.1}" stroke="#ddd"/>"##,
            px(x),
            h - bottom + 16.0,
            short(x),
            left - 6.0,
            py(y) + 4.0,
            short(y),
            py(y),
            w - right,
            py(y)
        );
    }
    for (i, line) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let pts: Vec<String> = line
            .points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = writeln!(
            s,
            r#"<polyline fill="none" stroke="{color}" stroke-width="2" points="{}"/>"#,
            pts.join(" ")
        );
        if line.points.len() <= 40 {
            for &(x, y) in &line.points {
                let _ = writeln!(
                    s,
                    r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{color}"/>"#,
                    px(x),
                    py(y)
                );
            }
        }
        let ly = top + 16.0 * i as f64;
        let _ = writeln!(
            s,
            r#"<rect x="{}" y="{}" width="12" height="3" fill="{color}"/><text x="{}" y="{}">{}</text>"#,
            w - right + 12.0,
            ly - 4.0,
            w - right + 30.0,
            ly,
            escape(&line.name)
        );
    }
    s.push_str("</svg>\n");
    s
}

fn short(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.round() {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

fn escape(t: &str) -> String {
    t.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_group_by_family_and_sort() {
        let json = r#"{"cases":[
            {"case":"synth/x/2^20","median_ms":40.0},
            {"case":"synth/x/2^16","median_ms":3.0},
            {"case":"prove/y/2^14x4","median_ms":100.0},
            {"case":"no size here","median_ms":1.0}]}"#;
        let s = sizes(json).unwrap();
        assert_eq!(s.len(), 2);
        let x = s.iter().find(|s| s.name == "synth/x").unwrap();
        assert_eq!(x.points, vec![(16.0, 3.0), (20.0, 40.0)]);
        assert!(s.iter().any(|s| s.name == "prove/y x4"));
        let svg = chart("t", "x", "y", &s, true);
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(sizes(r#"{"cases":[]}"#).is_err());
    }

    #[test]
    fn memlog_is_checked_line_by_line() {
        let ok = "timestamp_ms,rss_kb,rss_gib\n1000,1048576,1.000\n3000,2097152,2.000\n";
        let s = memlog(ok).unwrap();
        assert_eq!(s[0].points, vec![(0.0, 1.0), (2.0, 2.0)]);
        let err = memlog("timestamp_ms,rss_kb,rss_gib\n1000,x,1\n").unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
        assert!(memlog("a,b\n").unwrap_err().to_string().contains("header"));
        assert!(memlog("timestamp_ms,rss_kb,rss_gib\n").is_err());
    }
}
